import { describe, expect, it } from 'vitest';
import { isInProgress, progressPercent } from './videos.ts';

describe('clip progress', () => {
  it('reads the server value as a percentage: 1 is 1 %, not the whole', () => {
    expect(progressPercent(1)).toBe(1);
    expect(progressPercent(0.4)).toBe(0);
    expect(progressPercent(42.6)).toBe(43);
    expect(progressPercent(100)).toBe(100);
  });

  it('keeps the bar within 0–100 and has none for a missing value', () => {
    expect(progressPercent(-3)).toBe(0);
    expect(progressPercent(180)).toBe(100);
    expect(progressPercent(null)).toBeUndefined();
    expect(progressPercent(Number.NaN)).toBeUndefined();
  });

  it('counts queued and processing clips as in progress', () => {
    expect(['UPLOADED', 'PROCESSING', 'READY', 'FAILED'].map((state) => isInProgress({ state: state as never }))).toEqual([true, true, false, false]);
  });
});
