import { describe, expect, it } from 'vitest';
import type { Frame } from './frame.ts';
import { RepeatedFrameFilter } from './repeated-frames.ts';

let index = 0;
function frame(timestampMs: number, bytes: number[]): Frame {
  return { data: Uint8Array.from(bytes), width: bytes.length, height: 1, format: 'gray', index: index++, timestampMs };
}

describe('RepeatedFrameFilter', () => {
  it('skips a byte-identical copy of the frame before and keeps every new picture', () => {
    const filter = new RepeatedFrameFilter();
    // A 25 fps camera read at 30: picture 2 fills two slots.
    const pictures = [[1, 2, 3], [1, 2, 4], [9, 9, 9], [9, 9, 9], [1, 2, 3], [5, 5, 5]];
    const kept = pictures.map((bytes, k) => !filter.isRepeat(frame((k * 1000) / 30, bytes)));
    expect(kept).toEqual([true, true, true, false, true, true]);
    expect(filter.repeated).toBe(1);
    expect(filter.seen).toBe(6);
  });

  it('compares with the last frame kept, so a run of repeats is skipped as a whole', () => {
    const filter = new RepeatedFrameFilter();
    const kept = [0, 1, 2, 3].map((k) => !filter.isRepeat(frame(k * 100, [7, 7])));
    expect(kept).toEqual([true, false, false, true]); // the fourth is 300 ms after the one kept
  });

  it('keeps a still picture at least every maxGapMs, so lost tracks still age and intervals close', () => {
    const filter = new RepeatedFrameFilter(250);
    const kept: number[] = [];
    for (let k = 0; k < 60; k++) if (!filter.isRepeat(frame((k * 1000) / 30, [4, 4, 4]))) kept.push(k);
    // Frames 0, 8 (266.7 ms), 16, …: never more than 250 ms of skipped time in a row.
    expect(kept).toEqual([0, 8, 16, 24, 32, 40, 48, 56]);
  });

  it('keeps a frame that has the same bytes but goes back in time or differs in size', () => {
    const filter = new RepeatedFrameFilter();
    expect(filter.isRepeat(frame(1000, [1, 1]))).toBe(false);
    expect(filter.isRepeat(frame(900, [1, 1]))).toBe(false);
    expect(filter.isRepeat(frame(933, [1, 1, 1]))).toBe(false);
    expect(filter.isRepeat(frame(966, [1, 1, 1]))).toBe(true);
  });
});
