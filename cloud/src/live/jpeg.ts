/**
 * The bytes of the `http-jpeg-push` relay: checking that a pushed frame really is a baseline/progressive JPEG, and
 * the parts of the `multipart/x-mixed-replace` stream viewers read. Pure: no I/O.
 */

export const JPEG_CONTENT_TYPE = 'image/jpeg';
export const MJPEG_CONTENT_TYPE = 'multipart/x-mixed-replace';
/** Never appears inside a part: parts carry a Content-Length and JPEG data cannot contain this ASCII run. */
export const MJPEG_BOUNDARY = 'hivegate-live-frame';

export type JpegCheck = { ok: true; width: number; height: number } | { ok: false; reason: string };

/** Start-of-frame markers (C0–CF without DHT C4, JPG C8 and DAC CC): they carry the picture's size. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/**
 * Walks the JPEG header segments from the start-of-image marker to the start of the scan, and checks the
 * end-of-image marker closes the data. Enough to refuse what is not a JPEG (a PNG, text, a truncated upload)
 * without decoding the picture.
 */
export function inspectJpeg(bytes: Uint8Array): JpegCheck {
  const fail = (reason: string): JpegCheck => ({ ok: false, reason });
  const length = bytes.length;
  if (length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return fail('it does not start with the JPEG start-of-image marker (FF D8)');
  if (bytes[length - 2] !== 0xff || bytes[length - 1] !== 0xd9) return fail('it does not end with the JPEG end-of-image marker (FF D9); truncated?');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let size: { width: number; height: number } | undefined;
  let at = 2;
  while (at < length) {
    if (bytes[at] !== 0xff) return fail(`expected a marker at byte ${at}`);
    while (at < length && bytes[at] === 0xff) at += 1; // fill bytes
    if (at >= length) break;
    const marker = bytes[at]!;
    at += 1;
    if (marker === 0xd9) return fail('it ends before any image data (no start-of-scan)');
    // Standalone markers (restart, TEM) carry no length.
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue;
    if (at + 2 > length) break;
    const segment = view.getUint16(at);
    if (segment < 2 || at + segment > length) return fail(`segment FF ${marker.toString(16).toUpperCase()} at byte ${at - 2} runs past the end`);
    if (isStartOfFrame(marker) && segment >= 7) size = { height: view.getUint16(at + 3), width: view.getUint16(at + 5) };
    if (marker === 0xda) {
      if (!size) return fail('it has no frame header (SOF) before the image data');
      if (size.width === 0) return fail('its frame header gives a width of 0');
      return { ok: true, width: size.width, height: size.height };
    }
    at += segment;
  }
  return fail('it is truncated inside its headers');
}

export interface MjpegFrame {
  sequence: number;
  receivedAt: Date;
  bytes: Buffer;
}

/**
 * The head of one part: boundary line and headers, ending with the blank line; the JPEG and a CRLF follow. Sent as
 * its own buffer so every viewer writes the same frame bytes without copying them.
 */
export function partHead(frame: MjpegFrame, boundary = MJPEG_BOUNDARY): Buffer {
  return Buffer.from(
    `--${boundary}\r\nContent-Type: ${JPEG_CONTENT_TYPE}\r\nContent-Length: ${frame.bytes.length}\r\n` +
      `X-Frame-Sequence: ${frame.sequence}\r\nX-Frame-Timestamp: ${frame.receivedAt.toISOString()}\r\n\r\n`,
    'latin1',
  );
}

export const PART_TAIL = Buffer.from('\r\n', 'latin1');

/** The closing delimiter: tells a multipart reader the stream is complete. */
export function closingDelimiter(boundary = MJPEG_BOUNDARY): Buffer {
  return Buffer.from(`--${boundary}--\r\n`, 'latin1');
}

export function mjpegContentType(boundary = MJPEG_BOUNDARY): string {
  return `${MJPEG_CONTENT_TYPE}; boundary=${boundary}`;
}
