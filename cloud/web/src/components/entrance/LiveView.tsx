import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { isAbort, messageOf, request } from '../../api/graphql.ts';
import {
  KEEPALIVE_INTERVAL_MS,
  KeepLiveAliveMutation,
  LiveSessionChangedSubscription,
  LiveSessionQuery,
  StartLiveMutation,
  STATUS_POLL_INTERVAL_MS,
  StopLiveMutation,
  type LiveSession,
} from '../../api/live.ts';
import { subscribe } from '../../api/subscriptions.ts';
import { retryDelayMs, useInterval } from '../../hooks.ts';
import { formatDateTime, formatRelative, localTimeZone } from '../../lib/format.ts';
import { describeLiveSession, isSessionOver, playlistIsPlayable } from '../../lib/live-status.ts';
import { HlsPlayer } from '../HlsPlayer.tsx';
import { MjpegPlayer } from '../MjpegPlayer.tsx';
import { Loading, Notice } from '../Notice.tsx';

const PLAYLIST_CHECK_MS = 1000;

/**
 * Polls the session's signed playlist until it lists a segment (hls.js gives up on a 404), then stays ready for that
 * session: the URL is re-signed on every read, which renews access but does not make the stream any less ready.
 */
function usePlaylistReady(sessionId: string | undefined, url: string | null | undefined, wanted: boolean): boolean {
  const [readySession, setReadySession] = useState<string | undefined>();
  const latestUrl = useRef(url);
  latestUrl.current = url;
  const hasUrl = Boolean(url);
  useEffect(() => {
    if (!wanted || !hasUrl || !sessionId || readySession === sessionId) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = async () => {
      try {
        const response = await fetch(latestUrl.current!, { cache: 'no-store', signal: controller.signal });
        if (response.ok && playlistIsPlayable(await response.text())) return setReadySession(sessionId);
      } catch (err) {
        if (isAbort(err)) return;
      }
      timer = setTimeout(check, PLAYLIST_CHECK_MS);
    };
    void check();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [sessionId, hasUrl, wanted, readySession]);
  return wanted && hasUrl && sessionId !== undefined && readySession === sessionId;
}

/**
 * Start, watch and stop the entrance camera's live stream. While a session runs the page keeps it alive every 30 s,
 * follows its status through the subscription (re-reading every 5 s when there is none), and shows the player once
 * the session is ACTIVE and its playlist exists.
 */
export function LiveView({ boxId }: { boxId: string }) {
  const [session, setSession] = useState<LiveSession | undefined>();
  const [ended, setEnded] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | undefined>();
  // Until one read has answered, nothing is known: a failed first check is not "no live stream is running".
  const [checked, setChecked] = useState(false);
  const [checkFailures, setCheckFailures] = useState(0);
  const [busy, setBusy] = useState<'start' | 'stop' | 'check' | undefined>();
  // Start gives way to Stop and back: after a press, the focus moves to whichever button is there once it is done,
  // instead of falling back to the top of the page.
  const actions = useRef<HTMLDivElement>(null);
  const pressed = useRef(false);
  /** Whether the keyboard focus was on one of the buttons last: when that button goes, the next one takes it. */
  const focusWasHere = useRef(false);
  const [subscribed, setSubscribed] = useState(false);
  const sessionRef = useRef(session);
  sessionRef.current = session;
  /** Counts status pushes: a read that was sent before the latest push answers with an older state. */
  const pushes = useRef(0);

  /** A fresh read of the session: null means it is over (a session that ended in FAILED keeps showing why). */
  const apply = useCallback((next: LiveSession | null | undefined) => {
    setChecked(true);
    if (next) {
      setSession(next);
      setEnded(false);
      return;
    }
    const current = sessionRef.current;
    if (current && isSessionOver(current.status)) return;
    if (current) setEnded(true);
    setSession(undefined);
  }, []);

  const fail = useCallback((err: unknown) => {
    if (isAbort(err)) return;
    setError(messageOf(err));
  }, []);

  const reread = useCallback(async () => {
    const pushesBefore = pushes.current;
    try {
      const data = await request(LiveSessionQuery, { boxId });
      if (pushes.current !== pushesBefore) return;
      apply(data.entranceLiveStreamSession);
      setError(undefined);
      setCheckFailures(0);
    } catch (err) {
      fail(err);
      if (!isAbort(err)) setCheckFailures((n) => n + 1);
    } finally {
      setLoaded(true);
    }
  }, [boxId, apply, fail]);

  useEffect(() => {
    void reread();
  }, [reread]);

  // A page opened during an outage checks again by itself, less and less often, until the server answers.
  useEffect(() => {
    if (checked || checkFailures === 0) return;
    const timer = setTimeout(() => void reread(), retryDelayMs(checkFailures));
    return () => clearTimeout(timer);
  }, [checked, checkFailures, reread]);

  const view = describeLiveSession(session);
  const running = Boolean(session) && view.running;
  const sessionId = session?.id;

  // Status pushes while the session runs; when the subscription cannot open or drops, `subscribed` turns false and
  // the 5-second re-read below takes over.
  useEffect(() => {
    if (!running || !sessionId) return;
    const stop = subscribe(LiveSessionChangedSubscription, { boxId }, {
      // Changes between the start and the subscription's opening are not pushed: read the session once now.
      onOpen: () => {
        setSubscribed(true);
        void reread();
      },
      onData: (data) => {
        pushes.current++;
        apply(data.entranceLiveStreamSessionChanged);
      },
      onClosed: () => setSubscribed(false),
    });
    return () => {
      stop();
      setSubscribed(false);
    };
  }, [running, sessionId, boxId, apply, reread]);

  useInterval(() => void reread(), STATUS_POLL_INTERVAL_MS, running && !subscribed);

  useInterval(
    () => {
      if (!sessionId) return;
      request(KeepLiveAliveMutation, { sessionId })
        .then((data) => {
          if (data.keepEntranceLiveStreamAlive) apply(data.keepEntranceLiveStreamAlive);
        })
        // The session may have ended between two keep-alives; the re-read tells what it is now.
        .catch(() => void reread());
    },
    KEEPALIVE_INTERVAL_MS,
    running && session?.status !== 'STOPPING',
  );

  // Cameras that push JPEG frames are watched as MJPEG: no playlist to wait for, the relay holds the last frame.
  const mjpeg = session?.relayProtocol === 'http-jpeg-push';
  const playlistReady = usePlaylistReady(sessionId, session?.playbackUrl, view.wantsPlayer && !mjpeg);

  const start = async () => {
    if (busy) return;
    pressed.current = true;
    setBusy('start');
    setError(undefined);
    try {
      const data = await request(StartLiveMutation, { boxId, qualityProfile: null, recordingMode: null });
      apply(data.startEntranceLiveStream);
    } catch (err) {
      fail(err);
    } finally {
      setBusy(undefined);
    }
  };

  const stop = async () => {
    if (!sessionId || busy) return;
    pressed.current = true;
    setBusy('stop');
    setError(undefined);
    try {
      await request(StopLiveMutation, { sessionId });
      await reread();
    } catch (err) {
      fail(err);
    } finally {
      setBusy(undefined);
    }
  };

  const checkAgain = async () => {
    if (busy) return;
    pressed.current = true;
    setBusy('check');
    try {
      await reread();
    } finally {
      setBusy(undefined);
    }
  };

  const unknown = !checked && error !== undefined;
  const stopping = session?.status === 'STOPPING';
  // Which buttons there are: when they change under the focus (Stop, then "Stopping…", then "Start again" pushed by
  // the server), the focus fell to the page.
  const buttons = [unknown && 'check', view.canStart && !unknown && 'start', view.canStop && 'stop', stopping && 'stopping'].filter(Boolean).join();
  useEffect(() => {
    if (busy !== undefined) return;
    const active = document.activeElement;
    const lost = active === null || active === document.body;
    if (!pressed.current && !(focusWasHere.current && lost)) return;
    const button = actions.current?.querySelector<HTMLButtonElement>('button');
    if (!button) return;
    pressed.current = false;
    button.focus();
  }, [busy, buttons]);
  const headline = unknown ? 'Could not check whether a live stream is running.' : !session && ended ? 'The live stream has ended.' : view.headline;
  const tone = unknown ? 'error' : view.tone;

  return (
    <section class="card live-card" aria-labelledby="live-heading">
      <h2 id="live-heading">Live view</h2>
      {!loaded ? (
        <Loading label="Checking for a live stream…" />
      ) : (
        <>
          <div class={`live-status tone-${tone}`} role="status">
            <span class="status-dot" aria-hidden="true" />
            <div>
              <p class="live-headline">{headline}</p>
              {unknown ? <p class="live-detail">{error}</p> : view.detail && <p class="live-detail">{view.detail}</p>}
            </div>
          </div>
          {error && !unknown && (
            <Notice tone="error" alertKey={error}>
              {error}
            </Notice>
          )}
          {view.wantsPlayer &&
            session?.playbackUrl &&
            (mjpeg ? (
              <MjpegPlayer key={session.id} src={session.playbackUrl} label={`Live picture of box ${boxId}`} />
            ) : playlistReady ? (
              <HlsPlayer key={session.id} live src={session.playbackUrl} label={`Live video of box ${boxId}`} autoPlay />
            ) : (
              <Loading label="Waiting for the first video segment…" />
            ))}
          <div
            class="actions"
            ref={actions}
            onFocusIn={() => (focusWasHere.current = true)}
            onFocusOut={(event) => {
              const next = event.relatedTarget as Node | null;
              if (next && !actions.current?.contains(next)) focusWasHere.current = false;
            }}
          >
            {unknown && (
              <button type="button" class="button" onClick={checkAgain} aria-disabled={busy !== undefined}>
                {busy === 'check' ? 'Checking…' : 'Try again'}
              </button>
            )}
            {view.canStart && !unknown && (
              <button type="button" class="button primary" onClick={start} aria-disabled={busy !== undefined}>
                {busy === 'start' ? 'Starting…' : session || ended ? 'Start again' : 'Start live view'}
              </button>
            )}
            {view.canStop && (
              <button type="button" class="button" onClick={stop} aria-disabled={busy !== undefined}>
                {busy === 'stop' ? 'Stopping…' : 'Stop'}
              </button>
            )}
            {/* Stands where Stop was until the camera has stopped, so the focus has somewhere to stay meanwhile. */}
            {stopping && (
              <button type="button" class="button" aria-disabled="true">
                Stopping…
              </button>
            )}
          </div>
          {session && (
            <dl class="meta">
              {session.qualityProfile && (
                <div>
                  <dt>Quality</dt>
                  <dd>{session.qualityProfile}</dd>
                </div>
              )}
              {session.lastDeviceSeenAt && (
                <div>
                  <dt>Camera last seen</dt>
                  <dd>{formatRelative(session.lastDeviceSeenAt)}</dd>
                </div>
              )}
              {running && session.expiresAt && (
                <div>
                  <dt>Ends without viewers at</dt>
                  <dd>
                    {formatDateTime(session.expiresAt)} <span class="unit">({localTimeZone()})</span>
                  </dd>
                </div>
              )}
            </dl>
          )}
        </>
      )}
    </section>
  );
}
