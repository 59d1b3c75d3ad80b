import { describe, expect, it } from 'vitest';
import { chooseBucket, isIsoDate } from './buckets.ts';

const at = (iso: string) => new Date(iso);

describe('chooseBucket', () => {
  it('picks a readable width giving at most 500 points', () => {
    expect(chooseBucket(at('2026-05-01T00:00:00Z'), at('2026-05-02T00:00:00Z'))).toEqual({ ok: true, bucketSeconds: 300 });
    expect(chooseBucket(at('2026-05-01T00:00:00Z'), at('2026-05-01T01:00:00Z'))).toEqual({ ok: true, bucketSeconds: 60 });
    expect(chooseBucket(at('2020-01-01T00:00:00Z'), at('2026-01-01T00:00:00Z'))).toEqual({ ok: true, bucketSeconds: 7 * 86_400 });
  });
  // Years 0001 to 9999 held the event loop for seconds per field while bucket starts followed the zone's offsets.
  it('refuses a range of more than 200 years, with or without a width', () => {
    expect(chooseBucket(at('2000-01-01T00:00:00Z'), at('2100-01-01T00:00:00Z'))).toMatchObject({ ok: true });
    expect(chooseBucket(at('0001-01-01T00:00:00Z'), at('9999-12-31T00:00:00Z'))).toEqual({ ok: false, error: '"from" to "to" may span at most 200 years' });
    expect(chooseBucket(at('1800-01-01T00:00:00Z'), at('2026-01-01T00:00:00Z'), 31 * 86_400)).toMatchObject({ ok: false, error: expect.stringContaining('200 years') });
  });
  it('refuses an empty or reversed range', () => {
    expect(chooseBucket(at('2026-05-02T00:00:00Z'), at('2026-05-01T00:00:00Z'))).toMatchObject({ ok: false, error: expect.stringContaining('after') });
  });
  it('refuses widths that are not positive integers or give too many points', () => {
    expect(chooseBucket(at('2026-05-01T00:00:00Z'), at('2026-05-02T00:00:00Z'), 0)).toMatchObject({ ok: false });
    expect(chooseBucket(at('2026-05-01T00:00:00Z'), at('2026-05-02T00:00:00Z'), 1.5)).toMatchObject({ ok: false });
    expect(chooseBucket(at('2026-05-01T00:00:00Z'), at('2026-05-02T00:00:00Z'), 1)).toMatchObject({ ok: false, error: expect.stringContaining('at least 9') });
    expect(chooseBucket(at('2026-05-01T00:00:00Z'), at('2026-05-02T00:00:00Z'), 3600)).toEqual({ ok: true, bucketSeconds: 3600 });
  });
});

describe('isIsoDate', () => {
  it('accepts real calendar dates only', () => {
    expect(isIsoDate('2026-02-28')).toBe(true);
    expect(isIsoDate('2026-02-30')).toBe(false);
    expect(isIsoDate('2026-2-3')).toBe(false);
  });
});
