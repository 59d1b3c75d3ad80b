import { describe, expect, it } from 'vitest';
import { formatCountOf } from './format.ts';

describe('formatCountOf', () => {
  // A day with one bee read "1 trajectories · 1 points · busiest spot 1 passes".
  it('gives the noun its number', () => {
    expect(formatCountOf(1, 'trajectory', 'trajectories')).toBe('1 trajectory');
    expect(formatCountOf(0, 'point')).toBe('0 points');
    expect(formatCountOf(1234, 'pass', 'passes')).toBe(`${(1234).toLocaleString()} passes`);
  });
});
