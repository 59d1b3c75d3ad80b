import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Scenario } from '../scenario/scenario.ts';
import { findScenario, withOverrides } from '../scenario/suite.ts';
import { planPopulation } from '../scene/population.ts';
import { Timeline } from '../scene/timeline.ts';
import { RENDER_REVISION } from '../clip.ts';
import { SceneRenderer } from './renderer.ts';

/** Renders the first frames of a scenario and hashes them. */
function renderHashes(scenario: Scenario, frames: number): string[] {
  const population = planPopulation(scenario);
  const renderer = new SceneRenderer(population);
  const timeline = new Timeline(population);
  const out = new Uint8Array(renderer.frameBytes);
  const hashes: string[] = [];
  for (let frame = 0; frame < frames; frame++) {
    renderer.render(frame, timeline.statesAt(frame), out);
    hashes.push(createHash('sha256').update(out).digest('hex'));
  }
  return hashes;
}

describe('SceneRenderer', () => {
  const busy = withOverrides(findScenario('busy-afternoon') as Scenario, { durationSeconds: 2 });

  it('renders identical frames for the same seed', () => {
    expect(renderHashes(busy, 8)).toEqual(renderHashes(busy, 8));
  });

  it('renders other frames for another seed, and no two frames alike', () => {
    const hashes = renderHashes(busy, 8);
    expect(new Set(hashes).size).toBe(8);
    const other = renderHashes(withOverrides(busy, { seed: 12345 }), 8);
    expect(other.some((hash, i) => hash === hashes[i])).toBe(false);
  });

  it('renders a dusk frame darker and warmer than an afternoon one', () => {
    const mean = (scenario: Scenario) => {
      const population = planPopulation(scenario);
      const renderer = new SceneRenderer(population);
      const out = new Uint8Array(renderer.frameBytes);
      renderer.render(0, new Timeline(population).statesAt(0), out);
      const sums = [0, 0, 0];
      for (let i = 0; i < out.length; i++) (sums[i % 3] as number) += out[i] as number;
      return sums.map((s) => s / (out.length / 3));
    };
    // Frames are blue, green, red.
    const [db, , dr] = mean(withOverrides(findScenario('dusk') as Scenario, { durationSeconds: 1 })) as [number, number, number];
    const [ab, , ar] = mean(busy) as [number, number, number];
    expect(dr + db).toBeLessThan((ar + ab) * 0.7);
    expect(dr / db).toBeGreaterThan(ar / ab);
  });

  it('draws the frames of its render revision, byte for byte', () => {
    // Cached clips and the detector's training data are keyed by RENDER_REVISION: a change of any frame's bytes
    // must bump it (and these digests). Speed-ups to the rasteriser, the light and the sensor must keep them.
    const digest = (name: string, frames: number) => {
      const hash = createHash('sha256');
      for (const frame of renderHashes(withOverrides(findScenario(name) as Scenario, { durationSeconds: 2 }), frames)) hash.update(frame);
      return hash.digest('hex');
    };
    expect(RENDER_REVISION).toBe(5);
    expect(digest('busy-afternoon', 30)).toBe('3f569bdd8bba9f18464594821fd721b9f03daa500bac39f590156a6f02ffa4f1');
    expect(digest('hd-passing-clouds', 15)).toBe('4437a7f86f5c893f723d28cd43d8caeaf1552133bbd498d91e7645b322d1289f');
  });

  it('refuses a wrongly sized output buffer', () => {
    const population = planPopulation(busy);
    expect(() => new SceneRenderer(population).render(0, [], new Uint8Array(10))).toThrow(/921600 bytes/);
  });
});
