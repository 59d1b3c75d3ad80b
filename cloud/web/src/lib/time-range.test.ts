import { describe, expect, it } from 'vitest';
import { checkCustomRange, fromLocalInput, presetRange, rangeFromQuery, rangeParams, rangeToQuery, toLocalInput, trafficBucketSeconds } from './time-range.ts';

const NOW = new Date('2026-05-10T12:34:20Z');

describe('time ranges', () => {
  it('makes preset windows ending at the next whole minute', () => {
    const range = presetRange('7d', NOW);
    expect(range.to.toISOString()).toBe('2026-05-10T12:35:00.000Z');
    expect(range.to.getTime() - range.from.getTime()).toBe(7 * 86_400_000);
  });

  it('round-trips through the URL query', () => {
    expect(rangeFromQuery(rangeToQuery(presetRange('30d', NOW)), NOW).preset).toBe('30d');
    const custom = { preset: 'custom' as const, from: new Date('2026-04-01T00:00:00Z'), to: new Date('2026-04-03T00:00:00Z') };
    expect(rangeFromQuery(rangeToQuery(custom), NOW)).toEqual(custom);
  });

  it('falls back to 24 h for anything unreadable', () => {
    for (const search of ['', '?range=1y', '?from=yesterday&to=today', '?from=2026-04-03T00:00:00Z&to=2026-04-01T00:00:00Z', '?range=constructor']) {
      const range = rangeFromQuery(search, NOW);
      expect(range.preset, search).toBe('24h');
    }
  });

  it('checks custom ranges with messages naming the field', () => {
    expect(checkCustomRange(undefined, NOW)).toEqual({ field: 'from', message: expect.stringMatching(/From/) as string });
    expect(checkCustomRange(NOW, undefined)).toEqual({ field: 'to', message: expect.stringMatching(/To/) as string });
    // "To" before "From" was described on both fields but marked invalid on neither: it is the end that is wrong.
    expect(checkCustomRange(NOW, new Date(NOW.getTime() - 1))).toEqual({ field: 'to', message: expect.stringMatching(/after/) as string });
    expect(checkCustomRange(new Date('2020-01-01'), NOW)).toEqual({ field: 'from', message: expect.stringMatching(/two years/) as string });
    expect(checkCustomRange(new Date(NOW.getTime() - 3600_000), NOW)).toBeUndefined();
  });

  it('keeps traffic charts at or under about 120 bars on round widths', () => {
    expect(trafficBucketSeconds(new Date(0), new Date(24 * 3600_000))).toBe(900);
    expect(trafficBucketSeconds(new Date(0), new Date(7 * 86_400_000))).toBe(7200);
    expect(trafficBucketSeconds(new Date(0), new Date(30 * 86_400_000))).toBe(21_600);
    expect(trafficBucketSeconds(new Date(0), new Date(3600_000))).toBe(300);
  });

  it('reads and writes datetime-local values in local time', () => {
    const date = fromLocalInput('2026-03-05T07:08');
    expect(date?.getFullYear()).toBe(2026);
    expect(date?.getMonth()).toBe(2);
    expect(date?.getHours()).toBe(7);
    expect(toLocalInput(date!)).toBe('2026-03-05T07:08');
    expect(fromLocalInput('2026-02-31T10:00')).toBeUndefined();
    expect(fromLocalInput('')).toBeUndefined();
    expect(fromLocalInput('tomorrow')).toBeUndefined();
  });
});

describe('rangeParams', () => {
  // The hive breadcrumb of a box page dropped the chosen range (7 d back to 24 h).
  it('keeps only the range of a query string', () => {
    expect(rangeParams('?range=7d&x=1')).toBe('?range=7d');
    expect(rangeParams('?from=2026-05-01T00:00:00.000Z&to=2026-05-02T00:00:00.000Z')).toBe('?from=2026-05-01T00%3A00%3A00.000Z&to=2026-05-02T00%3A00%3A00.000Z');
    expect(rangeParams('')).toBe('');
  });
});
