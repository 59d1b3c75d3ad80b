import { describe, expect, it } from 'vitest';
import { resampledFrameCount, sourceFrameAt } from './resample.ts';

const frames = (count: number, sourceFps: number, outputFps: number) =>
  Array.from({ length: count }, (_, k) => sourceFrameAt(k, sourceFps, outputFps));

describe('sourceFrameAt', () => {
  it('keeps every frame at the same rate and every other one at half of it', () => {
    expect(frames(5, 30, 30)).toEqual([0, 1, 2, 3, 4]);
    expect(frames(5, 30, 15)).toEqual([0, 2, 4, 6, 8]);
  });

  // The sequences below were read off ffmpeg 5.1 (`-vf fps=N` on a clip whose frame n has grey level 4n).
  it('takes the last frame of each output slot when dropping unevenly', () => {
    expect(frames(8, 30, 12)).toEqual([1, 3, 6, 8, 11, 13, 16, 18]);
    expect(frames(10, 30, 25)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 10, 11]);
    expect(frames(8, 25, 15)).toEqual([0, 2, 4, 5, 7, 9, 10, 12]);
    expect(frames(8, 30, 7)).toEqual([2, 6, 10, 14, 19, 23, 27, 32]);
  });

  it('repeats frames when the output rate is higher', () => {
    expect(frames(8, 15, 30)).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
    expect(frames(12, 25, 30)).toEqual([0, 1, 2, 2, 3, 4, 5, 6, 7, 7, 8, 9]);
  });

  it('handles NTSC rates without floating-point drift', () => {
    // 29.97 → 29.97 is the identity over an hour of frames.
    const last = 29.97 * 3600;
    expect(sourceFrameAt(Math.floor(last), 30000 / 1001, 30000 / 1001)).toBe(Math.floor(last));
    expect(sourceFrameAt(1000, 30000 / 1001, 15)).toBe(1999);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => sourceFrameAt(0, 0, 15)).toThrow(/fps must be a positive number/);
    expect(() => sourceFrameAt(0, 30, Number.NaN)).toThrow(/fps must be a positive number/);
  });
});

describe('resampledFrameCount', () => {
  it('is the clip length at the new rate, rounded', () => {
    expect(resampledFrameCount(1800, 30, 15)).toBe(900);
    expect(resampledFrameCount(61, 30, 15)).toBe(31);
    expect(resampledFrameCount(59, 30, 15)).toBe(30);
    expect(resampledFrameCount(1500, 25, 15)).toBe(900);
    expect(resampledFrameCount(60, 15, 30)).toBe(120);
  });
});
