import { describe, expect, it } from 'vitest';
import { JpegSplitter } from './jpeg-splitter.ts';

/** A minimal JPEG-shaped byte run: SOI, an APP0 segment, SOS header, scan data with stuffing and a restart, EOI. */
function picture(seed: number): Buffer {
  const app0 = [0xff, 0xe0, 0x00, 0x06, 0xff, 0xd9, 0x00, 0x00]; // a length-skipped segment whose body holds FF D9
  const sos = [0xff, 0xda, 0x00, 0x04, 0x01, 0x00];
  const scan = [seed, 0xff, 0x00, 0x12, 0xff, 0xd0, 0x34, seed ^ 0x55];
  return Buffer.from([0xff, 0xd8, ...app0, ...sos, ...scan, 0xff, 0xd9]);
}

describe('JpegSplitter', () => {
  it('splits back-to-back pictures, ignoring FF D9 inside segments and stuffed or restart bytes in the scan', () => {
    const pictures = [picture(1), picture(2), picture(3)];
    const out = new JpegSplitter().push(Buffer.concat(pictures));
    expect(out).toEqual(pictures);
  });

  it('reassembles pictures cut at every possible point', () => {
    const stream = Buffer.concat([picture(7), picture(8)]);
    for (let cut = 1; cut < stream.length; cut++) {
      const splitter = new JpegSplitter();
      const out = [...splitter.push(stream.subarray(0, cut)), ...splitter.push(stream.subarray(cut))];
      expect(out).toEqual([picture(7), picture(8)]);
    }
  });

  it('handles pictures with several scans (progressive)', () => {
    const second = [0xff, 0xc4, 0x00, 0x03, 0x00, 0xff, 0xda, 0x00, 0x02, 0x99, 0xff, 0x00];
    const progressive = Buffer.from([...picture(9).subarray(0, -2), ...second, 0xff, 0xd9]);
    expect(new JpegSplitter().push(Buffer.concat([progressive, picture(1)]))).toEqual([progressive, picture(1)]);
  });

  it('discards bytes outside pictures and waits for an incomplete one', () => {
    const splitter = new JpegSplitter();
    expect(splitter.push(Buffer.from([1, 2, 3, 0xff]))).toEqual([]);
    const whole = picture(4);
    expect(splitter.push(whole.subarray(1, 10))).toEqual([]);
    expect(splitter.push(whole.subarray(10))).toEqual([whole]);
    expect(splitter.discardedBytes).toBe(3);
  });
});
