/**
 * Cuts the byte stream of ffmpeg's `image2pipe` + mjpeg output into single JPEG pictures. Pure.
 *
 * Pictures are found by walking JPEG markers, not by searching for the end marker: segment lengths are skipped,
 * and inside entropy-coded data 0xFF is always followed by 0x00 (stuffing) or a restart marker, so the first other
 * marker there is real. Bytes before a start-of-image marker are discarded.
 */
const MAX_PICTURE_BYTES = 16 * 1024 * 1024;

export class JpegSplitter {
  private pending: Buffer = Buffer.alloc(0);
  /** Bytes thrown away because they were not inside a picture (or a picture grew beyond the limit). */
  discardedBytes = 0;

  /** Returns the pictures completed by this chunk, in order. */
  push(chunk: Uint8Array): Buffer[] {
    this.pending = this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    const pictures: Buffer[] = [];
    for (;;) {
      const start = findStart(this.pending);
      if (start < 0) {
        // Keep a trailing 0xFF: it may be the first half of the next start marker.
        const keep = this.pending.at(-1) === 0xff ? 1 : 0;
        this.discardedBytes += this.pending.length - keep;
        this.pending = this.pending.subarray(this.pending.length - keep);
        break;
      }
      if (start > 0) {
        this.discardedBytes += start;
        this.pending = this.pending.subarray(start);
      }
      const end = pictureEnd(this.pending);
      if (end === undefined) {
        if (this.pending.length > MAX_PICTURE_BYTES) {
          this.discardedBytes += 2;
          this.pending = this.pending.subarray(2); // not a picture after all: look for the next start
          continue;
        }
        break;
      }
      pictures.push(Buffer.from(this.pending.subarray(0, end)));
      this.pending = this.pending.subarray(end);
    }
    return pictures;
  }
}

function findStart(buffer: Buffer): number {
  for (let i = buffer.indexOf(0xff); i >= 0 && i + 1 < buffer.length; i = buffer.indexOf(0xff, i + 1)) {
    if (buffer[i + 1] === 0xd8) return i;
  }
  return -1;
}

/** Length of the picture starting at 0 (which holds FF D8), or undefined when it is not complete yet. */
function pictureEnd(buffer: Buffer): number | undefined {
  let i = 2;
  let inScan = false;
  while (i < buffer.length) {
    if (inScan) {
      const ff = buffer.indexOf(0xff, i);
      if (ff < 0 || ff + 1 >= buffer.length) return undefined;
      const next = buffer[ff + 1]!;
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
        i = ff + 2; // stuffed byte or restart marker: still scan data
        continue;
      }
      if (next === 0xff) {
        i = ff + 1;
        continue;
      }
      // A real marker: the scan is over (progressive pictures have several scans, each walked the same way).
      inScan = false;
      i = ff;
      continue;
    }
    if (i + 1 >= buffer.length) return undefined;
    if (buffer[i] !== 0xff) {
      inScan = true; // bytes outside a segment: read them like scan data up to the next marker
      continue;
    }
    const marker = buffer[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0xd9) return i + 2;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (i + 3 >= buffer.length) return undefined;
    i += 2 + buffer.readUInt16BE(i + 2);
    if (marker === 0xda) inScan = true;
  }
  return undefined;
}
