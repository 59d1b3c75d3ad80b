import type { IntervalSummary } from '@hivegate/shared';
import { describe, expect, it } from 'vitest';
import { addOpenIntervals, describeOpenIntervals, mergeIntervalParts, readSavedIntervals, savedForm, type OpenInterval } from './open-intervals.ts';

const END = 1_767_225_660;

function part(fields: Partial<IntervalSummary>): IntervalSummary {
  return {
    intervalStart: END - 60, intervalEnd: END, beesIn: 0, beesOut: 0, netFlow: 0, speedSamples: 0,
    stationaryBees: 0, detectedBees: 0, beeInteractions: 0, unknownDirection: 0, frames: 0, ...fields,
  };
}

describe('mergeIntervalParts', () => {
  it('adds what each run counted on its own, keeps the larger count of bees standing still, and weighs speeds by their samples', () => {
    const before = part({ beesIn: 3, beesOut: 1, netFlow: 2, detectedBees: 6, stationaryBees: 2, beeInteractions: 1, unknownDirection: 1, frames: 360, avgSpeed: 2, p95Speed: 6, speedSamples: 100 });
    const after = part({ beesIn: 5, beesOut: 7, netFlow: -2, detectedBees: 14, stationaryBees: 3, beeInteractions: 2, unknownDirection: 0, frames: 1380, avgSpeed: 4, p95Speed: 10, speedSamples: 300 });
    expect(mergeIntervalParts(before, after)).toEqual({
      intervalStart: END - 60, intervalEnd: END, beesIn: 8, beesOut: 8, netFlow: 0, detectedBees: 20, stationaryBees: 3,
      beeInteractions: 3, unknownDirection: 1, frames: 1740, speedSamples: 400, avgSpeed: 3.5, p95Speed: 9,
    });
  });

  it('takes the speeds of the part that has any, and the earlier start of parts whose interval length changed', () => {
    const merged = mergeIntervalParts(part({ intervalStart: END - 60, avgSpeed: 2.5, p95Speed: 5, speedSamples: 10 }), part({ intervalStart: END - 30 }));
    expect(merged).toMatchObject({ intervalStart: END - 60, avgSpeed: 2.5, p95Speed: 5, speedSamples: 10 });
    expect(mergeIntervalParts(part({}), part({}))).not.toHaveProperty('avgSpeed');
    expect(() => mergeIntervalParts(part({}), part({ intervalEnd: END + 60 }))).toThrow('only parts of one interval merge');
  });
});

describe('addOpenIntervals', () => {
  it('merges parts by the identity of the record they become, ids compared as the outbox compares them', () => {
    const open = new Map<string, OpenInterval>();
    addOpenIntervals(open, [{ hiveId: 7, boxId: 'b', summary: part({ beesIn: 1 }) }, { hiveId: 7, boxId: 'b', summary: part({ intervalStart: END, intervalEnd: END + 60, beesOut: 1 }) }]);
    addOpenIntervals(open, [{ hiveId: '7', boxId: 'b', summary: part({ beesIn: 2 }) }, { hiveId: 7, boxId: 'other', summary: part({ beesIn: 4 }) }]);
    expect([...open.entries()].map(([key, i]) => [key, i.summary.beesIn, i.summary.beesOut])).toEqual([
      ['7|b|1767225660', 3, 0],
      ['7|b|1767225720', 0, 1],
      ['7|other|1767225660', 4, 0],
    ]);
    expect(describeOpenIntervals([...open.values()])).toBe('3 intervals (in 7, out 1)');
  });
});

describe('readSavedIntervals', () => {
  it('reads back what was saved, through JSON as the outbox stores it', () => {
    const intervals: OpenInterval[] = [{ hiveId: 'h', boxId: 3, summary: part({ beesIn: 2, netFlow: 2, avgSpeed: 1.5, p95Speed: 3, speedSamples: 4 }) }];
    expect(readSavedIntervals(JSON.parse(JSON.stringify(savedForm(intervals))))).toEqual(intervals);
  });

  it('refuses anything else, saying what is wrong', () => {
    expect(() => readSavedIntervals({ version: 2, intervals: [] })).toThrow(/version/);
    expect(() => readSavedIntervals({ version: 1, intervals: [{ hiveId: 'h', boxId: 'b', summary: { ...part({}), beesIn: -1 } }] })).toThrow(/beesIn/);
    expect(() => readSavedIntervals('garbage')).toThrow();
  });
});
