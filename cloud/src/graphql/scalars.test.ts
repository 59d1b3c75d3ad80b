import { describe, expect, it } from 'vitest';
import { parseInstant } from './scalars.ts';

describe('parseInstant', () => {
  it('reads instants with and without a zone', () => {
    expect(parseInstant('2026-05-01T12:00:00Z').toISOString()).toBe('2026-05-01T12:00:00.000Z');
    expect(parseInstant('2026-05-01T12:00:00').toISOString()).toBe('2026-05-01T12:00:00.000Z');
    expect(parseInstant('2026-05-01T12:00:00+02:00').toISOString()).toBe('2026-05-01T10:00:00.000Z');
    expect(parseInstant('2028-02-29T00:00:00Z').toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  // 2026-02-30 was taken as March 2, where REST trajectories refused it.
  it('refuses a calendar date that does not exist', () => {
    expect(() => parseInstant('2026-02-30T10:00:00Z')).toThrow('DateTime "2026-02-30T10:00:00Z" is not a valid date');
    expect(() => parseInstant('2026-13-01T00:00:00Z')).toThrow('is not a valid date');
  });
});
