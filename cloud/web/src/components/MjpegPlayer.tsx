import { useEffect, useState } from 'preact/hooks';
import { Notice } from './Notice.tsx';

const RETRY_MS = 3000;

/**
 * Shows a live MJPEG stream (the relay for cameras that push JPEG frames instead of HLS): the browser draws a
 * multipart/x-mixed-replace response in an `<img>` itself. The first signed URL is kept for the whole stream: a
 * new one (the server re-signs on every read) would reconnect and flash; after a dropped connection the newest URL
 * is used. Give each stream its own `key`.
 */
export function MjpegPlayer({ src, label }: { src: string; label: string }) {
  const [shown, setShown] = useState(src);
  const [failed, setFailed] = useState(false);
  const [latest] = useState(() => ({ src }));
  latest.src = src;

  useEffect(() => {
    if (!failed) return;
    const timer = setTimeout(() => {
      setShown(latest.src);
      setFailed(false);
    }, RETRY_MS);
    return () => clearTimeout(timer);
  }, [failed, latest]);

  return (
    <div class="player">
      {failed ? <Notice tone="warn" live>The picture stopped coming. Reconnecting…</Notice> : <img key={shown} src={shown} alt={label} onError={() => setFailed(true)} />}
    </div>
  );
}
