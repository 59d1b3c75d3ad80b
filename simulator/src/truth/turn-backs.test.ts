import { describe, expect, it } from 'vitest';
import { intervalStartOf } from '@hivegate/shared';
import type { Scenario } from '../scenario/scenario.ts';
import { findScenario, withOverrides } from '../scenario/suite.ts';
import { planPopulation } from '../scene/population.ts';
import { simulateGroundTruth } from './ground-truth.ts';

const ids = { hiveId: 'sim-hive', boxId: 'sim-box' };
/** Clip lengths and how many seeds of each (1, 2, …): short clips put most bees near an edge of the clip. */
const CLIPS = [
  [4, 16],
  [10, 12],
  [60, 6],
] as const;

describe('turn-back bees at the edges of a clip', () => {
  it.each(['heldout-hesitant-bees', 'second-thoughts'])('%s: the intervals agree with the crossings, and no turn-back bee is counted', (name) => {
    // Intervals and crossings both count what the frames show (cut-off crossings too), so each interval's in and out
    // equal its crossings'; a turn-back bee never goes in and its visit is placed inside the clip, so it has none.
    const base = findScenario(name) as Scenario;
    const problems: string[] = [];
    for (const [seconds, seeds] of CLIPS) {
      for (let seed = 1; seed <= seeds; seed++) {
        const clip = `${seconds} s, seed ${seed}`;
        const { truth } = simulateGroundTruth(planPopulation(withOverrides(base, { seed, durationSeconds: seconds })), ids);
        const { intervalSeconds } = truth.counting;
        const expected = new Map(truth.intervals.map((record) => [record.timestamp, { in: 0, out: 0 }]));
        for (const crossing of truth.crossings) {
          const counts = expected.get(intervalStartOf(crossing.t, intervalSeconds) + intervalSeconds);
          if (counts) counts[crossing.direction]++;
          else problems.push(`${clip}: crossing at ${crossing.t} in no interval`);
        }
        for (const record of truth.intervals) {
          const counts = expected.get(record.timestamp);
          if (record.beesIn !== counts?.in || record.beesOut !== counts.out) {
            problems.push(`${clip}: interval ending ${record.timestamp} counts in/out ${record.beesIn}/${record.beesOut}, its crossings ${counts?.in}/${counts?.out}`);
          }
        }
        const turnBacks = new Set(truth.tracks.filter((track) => track.role === 'turn-back').map((track) => track.trackId));
        for (const crossing of truth.crossings) if (turnBacks.has(crossing.trackId)) problems.push(`${clip}: turn-back bee (track ${crossing.trackId}) crossed ${crossing.direction}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
