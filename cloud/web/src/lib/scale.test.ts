import { describe, expect, it } from 'vitest';
import { isolatedPoints, linearScale, linePath, nearestIndex, niceStep, niceTicks, timeTicks } from './scale.ts';

describe('niceTicks', () => {
  it('encloses the data with round steps', () => {
    expect(niceTicks(33.2, 35.9, 3)).toEqual({ min: 33, max: 36, ticks: [33, 34, 35, 36], step: 1 });
    expect(niceTicks(33.2, 35.9, 5).ticks).toEqual([33, 33.5, 34, 34.5, 35, 35.5, 36]);
    expect(niceTicks(0, 87, 4).ticks).toEqual([0, 20, 40, 60, 80, 100]);
    // A box whose only count is 0 read 0, 0.2 … 1 bees.
    expect(niceTicks(0, 1, 4, { integer: true }).ticks).toEqual([0, 1]);
    expect(niceTicks(-3, 2, 4, { integer: true }).ticks).toEqual([-3, -2, -1, 0, 1, 2]);
    expect(niceTicks(0, 87, 4, { integer: true }).ticks).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(-120, 340, 3).ticks).toEqual([-200, 0, 200, 400]);
  });

  it('keeps decimals clean', () => {
    expect(niceTicks(0.1, 0.7, 3).ticks).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
    expect(niceTicks(0.1, 0.7, 5).ticks).toEqual([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
  });

  it('gives a flat series a band around its value', () => {
    const { min, max, ticks } = niceTicks(42.5, 42.5, 4);
    expect(min).toBeLessThan(42.5);
    expect(max).toBeGreaterThan(42.5);
    expect(ticks.length).toBeGreaterThan(1);
    expect(niceTicks(0, 0).ticks).toEqual([-1, -0.5, 0, 0.5, 1]);
  });

  it('survives nonsense', () => {
    expect(niceTicks(Number.NaN, 3).ticks).toEqual([0, 1]);
    expect(niceTicks(5, 1).min).toBeLessThanOrEqual(1);
    expect(niceStep(0, 4)).toBe(1);
  });
});

describe('linearScale', () => {
  it('maps domain to range, inverted ranges included', () => {
    const y = linearScale([0, 100], [200, 0]);
    expect(y(0)).toBe(200);
    expect(y(25)).toBe(150);
    expect(y(100)).toBe(0);
    expect(linearScale([5, 5], [0, 10])(5)).toBe(5);
  });
});

describe('timeTicks', () => {
  it('uses whole hours for a day and local midnights for a month', () => {
    const from = new Date(2026, 4, 10, 7, 23).getTime();
    const day = timeTicks(from, from + 24 * 3600_000, 8);
    expect(day.step).toBe(3 * 3600_000);
    expect(day.ticks.length).toBeLessThanOrEqual(8);
    for (const t of day.ticks) {
      const d = new Date(t);
      expect(d.getMinutes()).toBe(0);
      expect(d.getHours() % 3).toBe(0);
      expect(t).toBeGreaterThanOrEqual(from);
    }
    const month = timeTicks(from, from + 30 * 86_400_000, 6);
    expect(month.step).toBeGreaterThanOrEqual(86_400_000);
    for (const t of month.ticks) expect(new Date(t).getHours()).toBe(0);
    expect(month.ticks.length).toBeLessThanOrEqual(6);
  });

  it('gives nothing for an empty range', () => {
    expect(timeTicks(10, 10, 5).ticks).toEqual([]);
  });

  // Room for three labels (a phone) gave a 7-day chart one: the step jumped from 2 days (four labels) to 7 (one).
  it('gives a phone-sized axis two or three labels for a week and a month', () => {
    const from = new Date(2026, 4, 10, 7, 23).getTime();
    const week = timeTicks(from, from + 7 * 86_400_000, 3);
    expect(week.step).toBe(3 * 86_400_000);
    expect(week.ticks.map((t) => new Date(t).getDate())).toEqual([11, 14, 17]);
    expect(timeTicks(from, from + 7 * 86_400_000, 2).ticks).toHaveLength(2);
    expect(timeTicks(from, from + 30 * 86_400_000, 3).ticks.map((t) => new Date(t).getDate())).toEqual([11, 21, 31]);
    expect(timeTicks(from, from + 30 * 86_400_000, 2).ticks).toHaveLength(2);
  });

  it('fits at least two and at most the room given, for ranges from hours to a season', () => {
    const spans = [6 * 3600_000, 86_400_000, 2 * 86_400_000, 7 * 86_400_000, 30 * 86_400_000, 90 * 86_400_000];
    for (const hour of [0, 7, 23]) {
      const from = new Date(2026, 2, 20, hour, 23).getTime();
      for (const span of spans) {
        for (let room = 2; room <= 12; room++) {
          const { ticks } = timeTicks(from, from + span, room);
          expect(ticks.length, `${span / 3600_000} h in room for ${room}, from ${hour}:23`).toBeGreaterThanOrEqual(2);
          expect(ticks.length, `${span / 3600_000} h in room for ${room}, from ${hour}:23`).toBeLessThanOrEqual(room);
        }
      }
    }
  });

  // Past 30 days × the room there was no longer step: a two-year range got a label every 30 days, two dozen of them.
  it('keeps a custom range of up to two years within the room', () => {
    const from = new Date(2025, 0, 15, 9).getTime();
    for (const span of [365 * 86_400_000, 732 * 86_400_000]) {
      for (let room = 3; room <= 12; room++) expect(timeTicks(from, from + span, room).ticks.length).toBeLessThanOrEqual(room);
    }
  });
});

describe('linePath', () => {
  const x = (t: number) => t;
  const y = (v: number) => v;
  it('lifts the pen at missing values and long gaps', () => {
    const points = [
      { t: 0, v: 1 },
      { t: 10, v: 2 },
      { t: 20, v: null },
      { t: 30, v: 3 },
      { t: 40, v: 4 },
      { t: 100, v: 5 },
    ];
    expect(linePath(points, x, y, 15)).toBe('M0.0,1.0L10.0,2.0M30.0,3.0L40.0,4.0M100.0,5.0');
    expect(linePath([], x, y)).toBe('');
  });

  it('finds the points a line cannot show', () => {
    const points = [
      { t: 0, v: 1 },
      { t: 10, v: null },
      { t: 20, v: 3 },
      { t: 30, v: null },
      { t: 40, v: 4 },
      { t: 50, v: 5 },
    ];
    expect(isolatedPoints(points, 15)).toEqual([
      { t: 0, v: 1 },
      { t: 20, v: 3 },
    ]);
  });
});

describe('nearestIndex', () => {
  it('finds the closest time', () => {
    const points = [{ t: 0 }, { t: 10 }, { t: 20 }];
    expect(nearestIndex(points, -5)).toBe(0);
    expect(nearestIndex(points, 14)).toBe(1);
    expect(nearestIndex(points, 16)).toBe(2);
    expect(nearestIndex(points, 99)).toBe(2);
    expect(nearestIndex([], 3)).toBe(-1);
  });
});
