import { describe, expect, it } from 'vitest';
import { FfmpegProgress, progressPercent, Throttle } from './progress.ts';

describe('FfmpegProgress', () => {
  it('reports the media time when a block completes, across chunk boundaries', () => {
    const progress = new FfmpegProgress();
    expect(progress.push('frame=10\nout_time_us=400000\nout_time_ms=400000\nout_ti')).toBeNull();
    expect(progress.push('me=00:00:00.400000\nprogress=continue\nframe=50\nout_time_us=2000000\n')).toBe(0.4);
    expect(progress.push('progress=end\n')).toBe(2);
    expect(progress.done).toBe(true);
  });

  it('ignores N/A and never goes backwards', () => {
    const progress = new FfmpegProgress();
    progress.push('out_time_us=3000000\nprogress=continue\n');
    expect(progress.push('out_time_us=N/A\nprogress=continue\n')).toBe(3);
    expect(progress.push('out_time_us=1000000\nprogress=continue\n')).toBe(3);
  });
});

describe('progressPercent', () => {
  it('is the share of the duration, capped at 99 until the job is done', () => {
    expect(progressPercent(1.5, 6)).toBe(25);
    expect(progressPercent(6, 6)).toBe(99);
    expect(progressPercent(1, 0)).toBe(0);
    expect(progressPercent(1, null)).toBe(0);
  });
});

describe('Throttle', () => {
  it('lets a value through once per interval unless it moved by a full step', () => {
    const throttle = new Throttle(1000, 10);
    expect(throttle.shouldEmit(1, 0)).toBe(true);
    expect(throttle.shouldEmit(2, 100)).toBe(false);
    expect(throttle.shouldEmit(12, 200)).toBe(true);
    expect(throttle.shouldEmit(13, 1300)).toBe(true);
    expect(throttle.shouldEmit(13, 5000)).toBe(false);
  });
});
