import { describe, expect, it } from 'vitest';
import { compileValidator, EntranceMovementInput } from '@hivegate/shared';
import { plannedCrossings, type Scenario } from '../scenario/scenario.ts';
import { findScenario, SCENARIOS, withOverrides } from '../scenario/suite.ts';
import { planPopulation } from '../scene/population.ts';
import { simulateGroundTruth, type GroundTruth } from './ground-truth.ts';

const ids = { hiveId: 'sim-hive', boxId: 'sim-box' };
const results = new Map(SCENARIOS.map((s) => [s.name, simulateGroundTruth(planPopulation(s), ids)]));
const resultFor = (name: string) => results.get(name) as ReturnType<typeof simulateGroundTruth>;

describe('ground truth', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s: crossings match the traffic the scenario asks for', (name, s) => {
    const { truth } = resultFor(name);
    const counted = { in: 0, out: 0 };
    for (const crossing of truth.crossings) if (!crossing.cutOff) counted[crossing.direction]++;
    expect(counted).toEqual(plannedCrossings(s));
  });

  it.each(SCENARIOS.map((s) => [s.name]))('%s: the shared counting rules on true centres agree with every crossing the scene made', (name) => {
    const { truth, counterCrossings } = resultFor(name);
    const scene = truth.crossings.map((c) => `${c.trackId} ${c.direction} ${c.t.toFixed(4)}`).sort();
    const counter = counterCrossings.map((c) => `${String(c.trackId)} ${c.direction} ${c.t.toFixed(4)}`).sort();
    expect(counter).toEqual(scene);
  });

  it.each([
    ['crowded-entrance', 101],
    ['heldout-evening-rush', 202],
    ['hd-passing-clouds', 303],
    ['fanning-bees', 404],
  ] as const)('%s with seed %i: planned traffic and the counting rules still agree', (name, seed) => {
    const s = withOverrides(findScenario(name) as Scenario, { seed, durationSeconds: 30 });
    const { truth, counterCrossings } = simulateGroundTruth(planPopulation(s), ids);
    const counted = { in: 0, out: 0 };
    for (const crossing of truth.crossings) if (!crossing.cutOff) counted[crossing.direction]++;
    expect(counted).toEqual(plannedCrossings(s));
    expect(counterCrossings.map((c) => `${String(c.trackId)} ${c.direction}`).sort()).toEqual(truth.crossings.map((c) => `${c.trackId} ${c.direction}`).sort());
  });

  it('keeps every box inside the frame, on a frame clock that starts at the scenario start', () => {
    const problems: string[] = [];
    let boxes = 0;
    for (const { truth } of results.values()) {
      expect(truth.frames).toHaveLength(truth.frameCount);
      truth.frames.forEach((frame, i) => {
        if (Math.abs(frame.t - (truth.startTime + i / truth.fps)) > 1e-5) problems.push(`${truth.scenario.name} frame ${i} at ${frame.t}`);
        for (const box of frame.boxes) {
          boxes++;
          const inside =
            box.w >= 3 && box.h >= 3 && box.x - box.w / 2 >= -0.01 && box.y - box.h / 2 >= -0.01 &&
            box.x + box.w / 2 <= truth.width + 0.01 && box.y + box.h / 2 <= truth.height + 0.01;
          if (!inside) problems.push(`${truth.scenario.name} frame ${i}: ${JSON.stringify(box)}`);
        }
      });
    }
    expect(boxes).toBeGreaterThan(10_000);
    expect(problems.slice(0, 5)).toEqual([]);
  });

  it('gives each track one unbroken run of frames', () => {
    const { truth } = resultFor('crowded-entrance');
    const runs = new Map<number, { first: number; last: number; count: number }>();
    truth.frames.forEach((frame, i) => {
      for (const { trackId } of frame.boxes) {
        const run = runs.get(trackId) ?? { first: i, last: i, count: 0 };
        run.last = i;
        run.count++;
        runs.set(trackId, run);
      }
    });
    for (const [trackId, run] of runs) expect(run.count, `track ${trackId}`).toBe(run.last - run.first + 1);
    expect(truth.tracks.map((t) => t.trackId).sort((a, b) => a - b)).toEqual([...runs.keys()].sort((a, b) => a - b));
  });

  it('writes intervals exactly as movement records and consistent with the crossings', () => {
    const validate = compileValidator(EntranceMovementInput);
    for (const { truth } of results.values()) {
      expect(truth.intervals.length).toBeGreaterThanOrEqual(1);
      for (const record of truth.intervals) {
        const outcome = validate(record);
        expect(outcome.ok, outcome.ok ? '' : outcome.error).toBe(true);
        expect(record).toMatchObject({ hiveId: 'sim-hive', boxId: 'sim-box' });
      }
      expect(truth.intervals[0]?.timestamp).toBe(truth.startTime + 60);
      const total = (key: 'beesIn' | 'beesOut') => truth.intervals.reduce((sum, r) => sum + r[key], 0);
      expect(total('beesIn')).toBe(truth.crossings.filter((c) => c.direction === 'in').length);
      expect(total('beesOut')).toBe(truth.crossings.filter((c) => c.direction === 'out').length);
    }
    const fanning = resultFor('fanning-bees').truth.intervals[0];
    expect(fanning?.stationaryBees).toBeGreaterThanOrEqual(3);
    expect(resultFor('crowded-entrance').truth.intervals[0]?.beeInteractions).toBeGreaterThan(0);
  });

  it('splits a longer clip into minute intervals', () => {
    const s = withOverrides(findScenario('quiet-morning') as Scenario, { durationSeconds: 150 });
    const { truth } = simulateGroundTruth(planPopulation(s), ids);
    expect(truth.intervals.map((r) => r.timestamp)).toEqual([60, 120, 180].map((d) => truth.startTime + d));
  });

  it('is reproducible, and another seed gives another scene', () => {
    const busy = findScenario('busy-afternoon') as Scenario;
    const short = withOverrides(busy, { durationSeconds: 10 });
    const again = (s: Scenario): GroundTruth => simulateGroundTruth(planPopulation(s), ids).truth;
    expect(JSON.stringify(again(short))).toBe(JSON.stringify(again(short)));
    expect(JSON.stringify(again(withOverrides(short, { seed: 7 })).frames)).not.toBe(JSON.stringify(again(short).frames));
  });
});
