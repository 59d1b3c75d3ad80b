import type { EntranceMovementInput } from '@hivegate/shared';
import { describe, expect, it } from 'vitest';
import { compareIntervals } from './intervals.ts';

const record = (timestamp: number, fields: Partial<EntranceMovementInput>): EntranceMovementInput => ({
  hiveId: 'h',
  boxId: 'b',
  beesIn: 0,
  beesOut: 0,
  netFlow: 0,
  stationaryBees: 0,
  detectedBees: 0,
  beeInteractions: 0,
  timestamp,
  ...fields,
});

describe('compareIntervals', () => {
  it('measures the count error over the clip and field errors per interval', () => {
    const truth = [
      record(60, { beesIn: 10, beesOut: 10, avgSpeed: 2, p95Speed: 8, stationaryBees: 3, detectedBees: 40, beeInteractions: 5 }),
      record(120, { beesIn: 5, beesOut: 15, avgSpeed: 4, p95Speed: 10, stationaryBees: 1, detectedBees: 30, beeInteractions: 1 }),
    ];
    const agent = [
      record(60, { beesIn: 11, beesOut: 9, avgSpeed: 2.5, p95Speed: 7, stationaryBees: 3, detectedBees: 44, beeInteractions: 5 }),
      record(120, { beesIn: 5, beesOut: 14, avgSpeed: 3, stationaryBees: 2, detectedBees: 30, beeInteractions: 3 }),
    ];
    const c = compareIntervals(truth, agent);
    expect(c).toMatchObject({ truthIn: 15, truthOut: 25, agentIn: 16, agentOut: 23, missingIntervals: 0 });
    // Over the clip: |16 − 15| + |23 − 25| = 3 of 40 bees.
    expect(c.countError).toBeCloseTo(3 / 40);
    expect(c.fields.avgSpeed).toEqual({ intervals: 2, meanTruth: 3, meanAgent: 2.75, meanAbsError: 0.75 });
    expect(c.fields.p95Speed).toEqual({ intervals: 1, meanTruth: 8, meanAgent: 7, meanAbsError: 1 }); // the agent had no speeds in the second
    expect(c.fields.detectedBees.meanAbsError).toBe(2);
    expect(c.fields.beeInteractions.meanAbsError).toBe(1);
  });

  it('counts an interval the agent never sent as no traffic', () => {
    const c = compareIntervals([record(60, { beesIn: 2, beesOut: 2 })], []);
    expect(c).toMatchObject({ countError: 1, missingIntervals: 1 });
    expect(c.fields.detectedBees.intervals).toBe(0);
    expect(compareIntervals([record(60, {})], []).countError).toBe(0);
  });

  it('rejects two agent records for one interval', () => {
    expect(() => compareIntervals([], [record(60, {}), record(60, {})])).toThrow('two records for the interval ending at 60');
  });
});
