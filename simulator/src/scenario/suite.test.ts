import { describe, expect, it } from 'vitest';
import { plannedCrossings, scenarioStartUnix, validateScenario, type Scenario } from './scenario.ts';
import { findScenario, SCENARIOS, withOverrides } from './suite.ts';

const byName = (name: string): Scenario => {
  const scenario = findScenario(name);
  if (!scenario) throw new Error(`missing scenario ${name}`);
  return scenario;
};

/** A scenario's parameter mix: everything but its identity, seed and clock time. */
function mix(s: Scenario): string {
  const { name: _name, description: _description, split: _split, seed: _seed, startTime: _startTime, ...rest } = s;
  return JSON.stringify(rest);
}

describe('scenario suite', () => {
  it('names the required training scenarios and gives every scenario a unique name', () => {
    const names = SCENARIOS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of ['quiet-morning', 'busy-afternoon', 'dusk', 'crowded-entrance', 'fanning-bees']) {
      expect(byName(name).split).toBe('train');
    }
  });

  it('keeps a held-out set with its own seeds and its own parameter mixes', () => {
    const train = SCENARIOS.filter((s) => s.split === 'train');
    const heldout = SCENARIOS.filter((s) => s.split === 'heldout');
    expect(heldout.length).toBeGreaterThanOrEqual(3);
    const trainSeeds = new Set(train.map((s) => s.seed));
    const trainMixes = new Set(train.map(mix));
    for (const s of heldout) {
      expect(trainSeeds.has(s.seed)).toBe(false);
      expect(trainMixes.has(mix(s))).toBe(false);
    }
  });

  it('starts every scenario on a whole minute, so counting intervals line up with the clip', () => {
    for (const s of SCENARIOS) expect(scenarioStartUnix(s) % 60).toBe(0);
  });

  it('plans the traffic the scenario asks for', () => {
    const busy = byName('busy-afternoon');
    expect(plannedCrossings(busy)).toEqual({ in: 30, out: 30 });
    expect(plannedCrossings(withOverrides(busy, { durationSeconds: 120 }))).toEqual({ in: 60, out: 60 });
    expect(plannedCrossings(byName('dusk'))).toEqual({ in: 20, out: 4 });
  });

  it('rejects bad values with the field named', () => {
    const busy = byName('busy-afternoon');
    expect(() => validateScenario({ ...busy, traffic: { ...busy.traffic, inShare: 1.5 } })).toThrow('traffic.inShare must be between 0 and 1');
    expect(() => validateScenario({ ...busy, camera: { ...busy.camera, width: 641 } })).toThrow(/camera.width .* must be even/);
    expect(() => validateScenario({ ...busy, crf: 22.5 })).toThrow('crf must be an integer');
    expect(() => validateScenario({ ...busy, startTime: '2024-06-15 14:00' })).toThrow(/startTime/);
    expect(() => validateScenario({ ...busy, split: 'test' as never })).toThrow(/split/);
    expect(() => validateScenario({ ...busy, light: { ...busy.light, level: Number.NaN } })).toThrow('light.level must be a number');
    expect(() => withOverrides(busy, { seed: -1 })).toThrow('seed must be between');
    // Optional: absent is fine, present must be in range.
    expect(busy.density.turnBacksPerMinute).toBeUndefined();
    expect(() => validateScenario({ ...busy, density: { ...busy.density, turnBacksPerMinute: -1 } })).toThrow('density.turnBacksPerMinute must be between 0 and 120');
    expect(() => validateScenario({ ...busy, density: { ...busy.density, turnBacksPerMinute: 'many' as never } })).toThrow('density.turnBacksPerMinute must be a number');
  });
});
