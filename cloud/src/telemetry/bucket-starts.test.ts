import { describe, expect, it } from 'vitest';
import { bucketStarts, utcOffsetSeconds } from './bucket-starts.ts';

const starts = (from: string, to: string, bucketSeconds: number, timeZone: string) =>
  bucketStarts(new Date(from), new Date(to), bucketSeconds, timeZone).map((start) => start.toISOString().replace(':00.000Z', 'Z'));

describe('bucket starts', () => {
  it('reads UTC offsets, to the minute and the second', () => {
    expect(utcOffsetSeconds('Europe/Berlin', Date.parse('2026-07-01T00:00:00Z') / 1000)).toBe(7200);
    expect(utcOffsetSeconds('America/Santiago', Date.parse('2026-07-01T00:00:00Z') / 1000)).toBe(-4 * 3600);
    expect(utcOffsetSeconds('Australia/Lord_Howe', Date.parse('2026-07-01T00:00:00Z') / 1000)).toBe(10.5 * 3600);
    expect(utcOffsetSeconds('UTC', 0)).toBe(0);
  });

  it('lays buckets on the local clock, the first where `from` cuts into it', () => {
    expect(starts('2026-05-01T00:10:00Z', '2026-05-01T03:00:00Z', 3600, 'UTC')).toEqual(['2026-05-01T00:00Z', '2026-05-01T01:00Z', '2026-05-01T02:00Z']);
    expect(starts('2026-05-01T00:10:00Z', '2026-05-01T02:00:00Z', 3600, 'Asia/Kolkata')).toEqual(['2026-04-30T23:30Z', '2026-05-01T00:30Z', '2026-05-01T01:30Z']);
  });

  // The hour Berlin repeats in autumn was one bucket: both hours' quarters summed into the second, the first missing.
  it('keeps the two hours apart where the clocks repeat one', () => {
    expect(starts('2026-10-24T23:30:00Z', '2026-10-25T02:30:00Z', 3600, 'Europe/Berlin')).toEqual([
      '2026-10-24T23:00Z', // 01:00 CEST
      '2026-10-25T00:00Z', // 02:00 CEST
      '2026-10-25T01:00Z', // 02:00 CET
      '2026-10-25T02:00Z', // 03:00 CET
    ]);
    expect(starts('2026-10-25T00:00:00Z', '2026-10-25T02:00:00Z', 900, 'Europe/Berlin')).toHaveLength(8);
    // A three-hour bucket ends at the change; the repeated hour is a bucket of its own.
    expect(starts('2026-10-24T22:00:00Z', '2026-10-25T08:00:00Z', 3 * 3600, 'Europe/Berlin')).toEqual([
      '2026-10-24T22:00Z', // 00:00 CEST
      '2026-10-25T01:00Z', // 02:00 CET
      '2026-10-25T02:00Z', // 03:00 CET
      '2026-10-25T05:00Z', // 06:00 CET
    ]);
  });

  it('skips the hour the clocks skip, and splits a bucket the change falls inside', () => {
    expect(starts('2026-03-28T23:00:00Z', '2026-03-29T02:00:00Z', 3600, 'Europe/Berlin')).toEqual(['2026-03-28T23:00Z', '2026-03-29T00:00Z', '2026-03-29T01:00Z']);
    expect(starts('2026-03-28T23:00:00Z', '2026-03-29T05:00:00Z', 6 * 3600, 'Europe/Berlin')).toEqual([
      '2026-03-28T23:00Z', // 00:00 CET, two hours long
      '2026-03-29T01:00Z', // 03:00 CEST
      '2026-03-29T04:00Z', // 06:00 CEST
    ]);
  });

  it('follows half-hour changes and changes at midnight', () => {
    // Lord Howe goes from 02:00 (UTC+11) back to 01:30 (UTC+10:30), and in spring from 02:00 on to 02:30.
    expect(starts('2026-04-04T14:00:00Z', '2026-04-04T17:00:00Z', 3600, 'Australia/Lord_Howe')).toEqual(['2026-04-04T14:00Z', '2026-04-04T15:00Z', '2026-04-04T15:30Z', '2026-04-04T16:30Z']);
    expect(starts('2026-10-03T14:30:00Z', '2026-10-03T17:00:00Z', 3600, 'Australia/Lord_Howe')).toEqual(['2026-10-03T14:30Z', '2026-10-03T15:30Z', '2026-10-03T16:00Z']);
    // Santiago repeats 23:00 on 4 April and skips midnight on 6 September.
    expect(starts('2026-04-05T02:00:00Z', '2026-04-05T05:00:00Z', 3600, 'America/Santiago')).toEqual(['2026-04-05T02:00Z', '2026-04-05T03:00Z', '2026-04-05T04:00Z']);
    expect(starts('2026-09-06T03:00:00Z', '2026-09-06T06:00:00Z', 3600, 'America/Santiago')).toEqual(['2026-09-06T03:00Z', '2026-09-06T04:00Z', '2026-09-06T05:00Z']);
  });

  it('keeps a day whole: 23 or 25 hours, from its first instant', () => {
    expect(starts('2026-10-24T22:00:00Z', '2026-10-26T23:00:00Z', 86_400, 'Europe/Berlin')).toEqual(['2026-10-24T22:00Z', '2026-10-25T23:00Z']);
    expect(starts('2026-09-05T04:00:00Z', '2026-09-07T04:00:00Z', 86_400, 'America/Santiago')).toEqual(['2026-09-05T04:00Z', '2026-09-06T04:00Z', '2026-09-07T03:00Z']);
  });

  // Weekly buckets ran Thursday to Wednesday, from the epoch's first day.
  it('starts weeks on Monday at local midnight', () => {
    expect(starts('2026-10-22T12:00:00Z', '2026-11-03T00:00:00Z', 7 * 86_400, 'Europe/Berlin')).toEqual([
      '2026-10-18T22:00Z', // Monday 19 October, CEST
      '2026-10-25T23:00Z', // Monday 26 October, CET: the week of the change is 169 hours
      '2026-11-01T23:00Z',
    ]);
    expect(starts('2026-06-03T00:00:00Z', '2026-06-20T00:00:00Z', 14 * 86_400, 'UTC')).toEqual(['2026-05-25T00:00Z', '2026-06-08T00:00Z']);
    for (const start of bucketStarts(new Date('2026-01-01'), new Date('2027-01-01'), 7 * 86_400, 'America/Los_Angeles')) {
      expect(new Intl.DateTimeFormat('en-US', { timeZone: 'America/Los_Angeles', weekday: 'short', hour: 'numeric', hourCycle: 'h23' }).format(start)).toBe('Mon, 00');
    }
  });

  it('lays month-long buckets from local midnights, however the clocks change between', () => {
    const monthly = bucketStarts(new Date('2026-01-01T00:00:00Z'), new Date('2027-01-01T00:00:00Z'), 30 * 86_400, 'Europe/Berlin');
    expect(monthly).toHaveLength(13);
    for (const start of monthly) expect(new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' }).format(start)).toBe('00:00');
    const days = monthly.slice(1).map((start, i) => Math.round((start.getTime() - monthly[i]!.getTime()) / 86_400_000));
    expect(days).toEqual(Array(12).fill(30));
  });
});
