import { describe, expect, it } from 'vitest';
import { dateIn, dayBounds, isTimeZone } from './local-day.ts';

const hours = (bounds: { from: Date; to: Date }) => (bounds.to.getTime() - bounds.from.getTime()) / 3_600_000;

describe('local days', () => {
  it('knows IANA zones and refuses anything else', () => {
    for (const zone of ['UTC', 'Europe/Vienna', 'America/Los_Angeles', 'Asia/Kolkata', 'Australia/Lord_Howe']) expect(isTimeZone(zone), zone).toBe(true);
    for (const zone of ['', 'Mars/Olympus', 'Europe/Vienna ', '+02:00', 'x'.repeat(65)]) expect(isTimeZone(zone), zone).toBe(false);
  });

  it('gives the date where the user is', () => {
    const at = new Date('2026-05-01T23:30:00Z');
    expect(dateIn('UTC', at)).toBe('2026-05-01');
    expect(dateIn('Europe/Vienna', at)).toBe('2026-05-02');
    expect(dateIn('America/Los_Angeles', at)).toBe('2026-05-01');
    expect(dateIn('Pacific/Kiritimati', new Date('2026-05-01T10:00:00Z'))).toBe('2026-05-02'); // UTC+14
  });

  it('bounds an ordinary day at local midnight', () => {
    expect(dayBounds('2026-05-01', 'UTC')).toEqual({ from: new Date('2026-05-01T00:00:00Z'), to: new Date('2026-05-02T00:00:00Z') });
    expect(dayBounds('2026-05-01', 'America/Los_Angeles')).toEqual({ from: new Date('2026-05-01T07:00:00Z'), to: new Date('2026-05-02T07:00:00Z') });
    expect(dayBounds('2026-05-01', 'Asia/Kolkata')).toEqual({ from: new Date('2026-04-30T18:30:00Z'), to: new Date('2026-05-01T18:30:00Z') });
    expect(dayBounds('2026-12-31', 'Europe/Vienna').to).toEqual(new Date('2026-12-31T23:00:00Z')); // across the year
  });

  it('gives days of 23 and 25 hours when the clocks change', () => {
    const spring = dayBounds('2026-03-29', 'Europe/Vienna');
    expect(spring).toEqual({ from: new Date('2026-03-28T23:00:00Z'), to: new Date('2026-03-29T22:00:00Z') });
    expect(hours(spring)).toBe(23);
    expect(hours(dayBounds('2026-10-25', 'Europe/Vienna'))).toBe(25);
    expect(hours(dayBounds('2026-03-08', 'America/New_York'))).toBe(23);
  });

  it('starts a day whose midnight the clocks skip at the first instant that exists', () => {
    // Havana moves its clocks from midnight to 01:00 on the second Sunday of March.
    const day = dayBounds('2026-03-08', 'America/Havana');
    expect(day.from).toEqual(new Date('2026-03-08T05:00:00Z')); // 01:00 CDT, the day's first instant
    expect(dateIn('America/Havana', new Date(day.from.getTime() - 1000))).toBe('2026-03-07');
    expect(hours(day)).toBe(23);
  });
});
