import { useEffect, useRef, useState } from 'preact/hooks';
import { underNewestLink } from '../lib/media-links.ts';
import type { HlsConfig } from 'hls.js';

/**
 * Live: stay about two one-second segments behind the edge, and catch up by playing faster after a stall. The
 * duration is endless, so the browser's controls show a live stream, not a seek bar over the few seconds buffered.
 */
const LIVE_CONFIG: Partial<HlsConfig> = {
  liveDurationInfinity: true,
  liveSyncDurationCount: 2,
  liveMaxLatencyDurationCount: 6,
  maxLiveSyncPlaybackRate: 1.5,
  backBufferLength: 30,
  enableWorker: true,
};
const STORED_CONFIG: Partial<HlsConfig> = { enableWorker: true, backBufferLength: 90 };
const MAX_NETWORK_RETRIES = 4;

/**
 * Plays an HLS playlist: hls.js (loaded only when a video is shown) where Media Source Extensions exist, the
 * browser's own HLS (Safari on iPhone) otherwise. The URL is signed, so no headers are needed.
 *
 * The server signs a fresh URL on every read, so `src` changes while the same stream plays: a new one renews the
 * grant, it is not a new stream. The player keeps playing and hls.js fetches the playlist and segments under the
 * newest URL from then on, so a long live view, or a long stored clip, outlives the first URL's expiry without a
 * restart (Safari's own player keeps its first URL). Give each stream its own `key`: a new key starts a new player.
 */
export function HlsPlayer({ src, live = false, label, poster, autoPlay = false }: { src: string; live?: boolean; label: string; poster?: string | null; autoPlay?: boolean }) {
  const video = useRef<HTMLVideoElement>(null);
  const [problem, setProblem] = useState<string | undefined>();
  const latestSrc = useRef(src);
  latestSrc.current = src;
  const knownSources = useRef(new Set<string>());
  knownSources.current.add(src);

  useEffect(() => {
    const element = video.current;
    if (!element) return;
    let destroyed = false;
    let cleanup: (() => void) | undefined;
    setProblem(undefined);
    const start = () => {
      if (autoPlay) element.play().catch(() => undefined);
    };
    /**
     * Requests made under an older URL of this stream go under the newest one instead: the playlist itself, and the
     * segments, which resolve under the grant of the playlist they were listed in (a stored clip's playlist is read
     * once, so its segments would otherwise outlive their grant in a long or paused playback).
     */
    const xhrSetup = (xhr: XMLHttpRequest, url: string) => {
      const renewed = underNewestLink(url, latestSrc.current, knownSources.current);
      if (renewed) xhr.open('GET', renewed, true);
    };
    import('hls.js/light')
      .then(({ default: Hls }) => {
        if (destroyed) return;
        if (Hls.isSupported()) {
          const hls = new Hls({ ...(live ? LIVE_CONFIG : STORED_CONFIG), xhrSetup });
          let networkRetries = 0;
          hls.on(Hls.Events.MANIFEST_PARSED, start);
          hls.on(Hls.Events.FRAG_LOADED, () => (networkRetries = 0));
          hls.on(Hls.Events.ERROR, (_event, data) => {
            if (!data.fatal) return;
            if (data.type === Hls.ErrorTypes.NETWORK_ERROR && networkRetries < MAX_NETWORK_RETRIES) {
              networkRetries++;
              setTimeout(() => !destroyed && hls.startLoad(), 1000 * networkRetries);
            } else if (data.type === Hls.ErrorTypes.MEDIA_ERROR) {
              hls.recoverMediaError();
            } else {
              setProblem(data.type === Hls.ErrorTypes.NETWORK_ERROR ? 'The video could not be loaded from the server.' : `The video cannot be played (${data.details}).`);
              hls.destroy();
            }
          });
          hls.loadSource(latestSrc.current);
          hls.attachMedia(element);
          cleanup = () => hls.destroy();
        } else if (element.canPlayType('application/vnd.apple.mpegurl')) {
          element.src = latestSrc.current;
          element.addEventListener('loadedmetadata', start, { once: true });
          cleanup = () => {
            element.removeAttribute('src');
            element.load();
          };
        } else {
          setProblem('This browser cannot play HLS video.');
        }
      })
      .catch(() => !destroyed && setProblem('The video player could not be loaded. Reload the page to try again.'));
    return () => {
      destroyed = true;
      cleanup?.();
    };
  }, [live, autoPlay]);

  return (
    <div class="player">
      <video ref={video} controls playsInline muted={live} poster={poster ?? undefined} aria-label={label} preload="metadata" />
      {problem && (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
