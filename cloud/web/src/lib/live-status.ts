/** What the live card says and offers for each session status. Pure, so every status is covered by a unit test. */

export const LIVE_STATUSES = ['REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE', 'STOPPING', 'STOPPED', 'FAILED', 'EXPIRED'] as const;
export type LiveStatus = (typeof LIVE_STATUSES)[number];

/** A session in one of these is over: nothing to keep alive, Start makes a new one. */
const OVER = new Set<string>(['STOPPED', 'FAILED', 'EXPIRED']);

export interface LiveSessionLike {
  status: string;
  playbackUrl?: string | null;
  lastErrorCode?: string | null;
  lastErrorMessage?: string | null;
  notice?: string | null;
}

export interface LiveView {
  tone: 'info' | 'ok' | 'warn' | 'error';
  headline: string;
  detail?: string;
  /** Keep-alives and status updates are needed while the session may still produce video. */
  running: boolean;
  canStart: boolean;
  canStop: boolean;
  /** The player may load once the session is ACTIVE with a playback URL (and the playlist exists). */
  wantsPlayer: boolean;
}

export function isSessionOver(status: string): boolean {
  return OVER.has(status);
}

function errorDetail(session: LiveSessionLike): string | undefined {
  const message = session.lastErrorMessage?.trim();
  const code = session.lastErrorCode?.trim();
  if (message && code) return `${message} (${code})`;
  return message || code || undefined;
}

/** The camera's note on how it took the session up (another quality than asked…) follows the status text. */
function withNotice(detail: string, session: LiveSessionLike): string {
  const notice = session.notice?.trim();
  return notice ? `${detail} The camera says: ${notice}.` : detail;
}

/** The card's view of a session; `undefined` means there is none (never started, or over and gone). */
export function describeLiveSession(session: LiveSessionLike | undefined): LiveView {
  if (!session) {
    return { tone: 'info', headline: 'No live stream is running.', running: false, canStart: true, canStop: false, wantsPlayer: false };
  }
  const running = { running: true, canStart: false, canStop: true, wantsPlayer: false };
  switch (session.status) {
    case 'REQUESTED':
      return { tone: 'info', headline: 'Asking the camera to start streaming…', detail: 'The camera picks the request up within a few seconds.', ...running };
    case 'DEVICE_OFFLINE':
      return {
        tone: 'warn',
        headline: 'The entrance camera is offline.',
        detail: 'The stream starts as soon as the camera reconnects. Check its power and network, or stop the request.',
        ...running,
      };
    case 'STARTING':
      return { tone: 'info', headline: 'The camera is starting the stream…', detail: withNotice('Video appears here in a few seconds.', session), ...running };
    case 'ACTIVE':
      return { tone: 'ok', headline: 'Live', detail: withNotice('The stream stays on while this page is open.', session), ...running, wantsPlayer: Boolean(session.playbackUrl) };
    case 'STOPPING':
      return { tone: 'info', headline: 'Stopping the stream…', running: true, canStart: false, canStop: false, wantsPlayer: false };
    case 'STOPPED': {
      // The camera ended it by itself (restarting, shutting down): say so, it is not the viewer's own Stop.
      const reason = errorDetail(session);
      return { tone: reason ? 'warn' : 'info', headline: 'The live stream has stopped.', ...(reason ? { detail: reason } : {}), running: false, canStart: true, canStop: false, wantsPlayer: false };
    }
    case 'EXPIRED':
      return {
        tone: 'info',
        headline: 'The live stream ended because nobody was watching.',
        detail: 'Start it again to keep watching.',
        running: false,
        canStart: true,
        canStop: false,
        wantsPlayer: false,
      };
    case 'FAILED':
      return {
        tone: 'error',
        headline: 'The live stream failed.',
        detail: errorDetail(session) ?? 'The camera reported a failure without details.',
        running: false,
        canStart: true,
        canStop: false,
        wantsPlayer: false,
      };
    default:
      // A status this app does not know yet: say what the server said and let the user stop it.
      return { tone: 'info', headline: `Stream status: ${session.status}`, detail: errorDetail(session), ...running };
  }
}

/** An HLS playlist that a player can start on: a media playlist with a segment, or a master playlist. */
export function playlistIsPlayable(text: string): boolean {
  if (!text.trimStart().startsWith('#EXTM3U')) return false;
  return /#EXTINF:/.test(text) || /#EXT-X-STREAM-INF:/.test(text);
}
