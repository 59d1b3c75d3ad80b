import { describe, expect, it } from 'vitest';
import { bucketTimeLabels, bucketWidthName } from './bucket-labels.ts';

describe('bucket labels', () => {
  // Long ranges were titled "Traffic per 168 h" and "per 24 h".
  it('names bucket widths in words', () => {
    expect(bucketWidthName(7 * 86_400)).toBe('week');
    expect(bucketWidthName(14 * 86_400)).toBe('2 weeks');
    expect(bucketWidthName(86_400)).toBe('day');
    expect(bucketWidthName(3 * 86_400)).toBe('3 days');
    expect(bucketWidthName(3600)).toBe('hour');
    expect(bucketWidthName(6 * 3600)).toBe('6 hours');
    expect(bucketWidthName(900)).toBe('15 minutes');
    expect(bucketWidthName(60)).toBe('minute');
    expect(bucketWidthName(5400)).toBe('90 minutes');
    expect(bucketWidthName(45)).toBe('45 seconds');
  });

  // The two real hours of an autumn change were both labelled "02:00" in the data table.
  it('tells apart buckets whose times read the same', () => {
    const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' });
    const hours = ['2026-10-25T00:00:00Z', '2026-10-25T01:00:00Z', '2026-10-25T02:00:00Z'].map(Date.parse);
    expect(bucketTimeLabels(hours, (t) => berlin.format(t), 'Europe/Berlin')).toEqual(['02:00 (GMT+2)', '02:00 (GMT+1)', '03:00']);
    expect(bucketTimeLabels([0, 1000], (t) => String(t))).toEqual(['0', '1000']);
  });
});
