import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { closingDelimiter, inspectJpeg, MJPEG_BOUNDARY, mjpegContentType, partHead } from './jpeg.ts';

/** One picture from ffmpeg's test source, encoded as the given image format. */
function picture(codec: 'mjpeg' | 'png', size = '64x48'): Buffer {
  const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=1`, '-frames:v', '1', '-c:v', codec, '-f', 'image2pipe', 'pipe:1']);
  if (result.status !== 0) throw new Error(`ffmpeg failed: ${result.stderr.toString()}`);
  return result.stdout;
}

describe('inspectJpeg', () => {
  const jpeg = picture('mjpeg', '320x240');

  it('accepts a JPEG from ffmpeg and reads its size from the frame header', () => {
    expect(inspectJpeg(jpeg)).toEqual({ ok: true, width: 320, height: 240 });
  });

  it('accepts a JPEG inside a larger buffer (a view with an offset)', () => {
    const padded = Buffer.concat([Buffer.alloc(7), jpeg]).subarray(7);
    expect(inspectJpeg(padded)).toMatchObject({ ok: true, width: 320 });
  });

  it.each([
    ['a PNG', () => picture('png'), 'start-of-image'],
    ['text', () => Buffer.from('hello bees'), 'start-of-image'],
    ['an empty body', () => Buffer.alloc(0), 'start-of-image'],
    ['a truncated JPEG', () => jpeg.subarray(0, jpeg.length - 100), 'end-of-image'],
    ['SOI followed directly by EOI', () => Buffer.from([0xff, 0xd8, 0xff, 0xd9]), 'no start-of-scan'],
    ['headers cut short with an EOI glued on', () => Buffer.concat([jpeg.subarray(0, 30), Buffer.from([0xff, 0xd9])]), 'runs past the end'],
    ['garbage between segments', () => Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0x00, 0x01]), jpeg.subarray(2)]), 'expected a marker at byte 2'],
  ])('refuses %s, saying why', (_name, make, reason) => {
    const check = inspectJpeg(make());
    expect(check.ok).toBe(false);
    expect(!check.ok && check.reason).toContain(reason);
  });

  it('refuses image data without a frame header', () => {
    // SOI, then straight to a start-of-scan segment.
    const noFrame = Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0x12, 0x34, 0xff, 0xd9]);
    expect(inspectJpeg(noFrame)).toEqual({ ok: false, reason: 'it has no frame header (SOF) before the image data' });
  });
});

describe('multipart parts', () => {
  it('frames a JPEG with its length, sequence and time, and closes the stream', () => {
    const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
    const head = partHead({ sequence: 7, receivedAt: new Date('2025-05-01T10:00:00.250Z'), bytes }).toString('latin1');
    expect(head).toBe(
      `--${MJPEG_BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: 4\r\nX-Frame-Sequence: 7\r\nX-Frame-Timestamp: 2025-05-01T10:00:00.250Z\r\n\r\n`,
    );
    expect(closingDelimiter().toString()).toBe(`--${MJPEG_BOUNDARY}--\r\n`);
    expect(mjpegContentType()).toBe(`multipart/x-mixed-replace; boundary=${MJPEG_BOUNDARY}`);
  });
});
