import { describe, expect, it } from 'vitest';
import { ageWhenOlder, shortAge } from './reading-age.ts';

const NOW = Date.parse('2026-05-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe('the age of a last value', () => {
  it('is said only for a value a minute or more older than the newest reading', () => {
    expect(ageWhenOlder(ago(14 * 60_000), ago(60_000), NOW, 'en-GB')).toBe('14 min ago');
    expect(ageWhenOlder(ago(60_000), ago(60_000), NOW, 'en-GB')).toBeNull();
    expect(ageWhenOlder(ago(119_000), ago(60_000), NOW, 'en-GB')).toBeNull(); // 59 s apart: one reading to the eye
    expect(ageWhenOlder(ago(120_000), ago(60_000), NOW, 'en-GB')).toBe('2 min ago');
    expect(ageWhenOlder(null, ago(60_000), NOW, 'en-GB')).toBeNull();
    expect(ageWhenOlder('not a time', ago(60_000), NOW, 'en-GB')).toBeNull();
  });

  it('reads short in every unit, and never "in …" for a clock a little ahead', () => {
    expect(shortAge(NOW - 3 * 3_600_000, NOW, 'en-GB')).toBe('3 hr ago');
    expect(shortAge(NOW - 2 * 86_400_000, NOW, 'en-GB')).toBe('2 days ago');
    expect(shortAge(NOW - 400 * 86_400_000, NOW, 'en-GB')).toBe('1 yr ago');
    expect(shortAge(NOW - 10_000, NOW, 'en-GB')).toBe('just now');
    expect(shortAge(NOW + 90_000, NOW, 'en-GB')).toBe('just now');
  });
});
