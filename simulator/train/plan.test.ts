import { describe, expect, it } from 'vitest';
import { SCENARIOS } from '../src/scenario/suite.ts';
import { boxesInInput, clipKey, decodeArgs, movementsInInput, pairGap } from './dataset.ts';
import { trainingPlan } from './plan.ts';

describe('trainingPlan', () => {
  const plan = trainingPlan({ seed: 7, variants: 3, seconds: 10 });

  it('draws only on training scenarios, each in several variants', () => {
    const trainNames = SCENARIOS.filter((s) => s.split === 'train').map((s) => s.name);
    expect(plan).toHaveLength(trainNames.length * 3);
    for (const clip of plan) {
      expect(clip.scenario.split).toBe('train');
      expect(trainNames).toContain(clip.scenario.name.replace(/-v\d+$/, ''));
      expect(clip.scenario.durationSeconds).toBe(10);
    }
    const heldOutSeeds = new Set(SCENARIOS.filter((s) => s.split === 'heldout').map((s) => s.seed));
    expect(plan.some((clip) => heldOutSeeds.has(clip.scenario.seed))).toBe(false);
  });

  it('keeps the first variant of a scenario as defined and jitters light, noise and compression in the others', () => {
    const dusk = SCENARIOS.find((s) => s.name === 'dusk')!;
    const [v0, v1, v2] = plan.filter((clip) => clip.scenario.name.startsWith('dusk-'));
    expect(v0!.scenario).toEqual({ ...dusk, name: 'dusk-v0', seed: v0!.scenario.seed, durationSeconds: 10 });
    expect(v1!.scenario.light).not.toEqual(dusk.light);
    expect(new Set([v0!.scenario.seed, v1!.scenario.seed, v2!.scenario.seed]).size).toBe(3);
    expect([v1!.scenario.noiseSigma, v1!.scenario.crf]).not.toEqual([dusk.noiseSigma, dusk.crf]);
  });

  it('is a function of its seed', () => {
    expect(trainingPlan({ seed: 7, variants: 3, seconds: 10 })).toEqual(plan);
    expect(trainingPlan({ seed: 8, variants: 3, seconds: 10 })[1]!.scenario.seed).not.toBe(plan[1]!.scenario.seed);
  });

  it('keeps about ten frames per second whatever the frame rate', () => {
    expect(plan.find((clip) => clip.scenario.camera.fps === 30)!.frameStep).toBe(3);
    expect(plan.find((clip) => clip.scenario.camera.fps === 15)!.frameStep).toBe(2);
  });

  it('rejects nonsense', () => {
    expect(() => trainingPlan({ seed: -1, variants: 1, seconds: 10 })).toThrow('seed must be a non-negative integer');
    expect(() => trainingPlan({ seed: 1, variants: 0, seconds: 10 })).toThrow('variants must be a positive integer');
  });
});

describe('dataset helpers', () => {
  it('scales true boxes into model-input pixels', () => {
    expect(boxesInInput({ t: 0, boxes: [{ trackId: 3, x: 100, y: 60, w: 34, h: 12.5 }] }, 0.5, 1 / 3)).toEqual([[50, 20, 17, 4.17]]);
  });

  it('pairs kept frames with the frame 1 or 2 before in turn, and the first frame of a clip with itself', () => {
    expect([0, 3, 6, 9, 1, 1].map((frame, kept) => pairGap(frame, kept))).toEqual([0, 2, 1, 2, 1, 1]);
  });

  it('measures the movement of each bee since the earlier frame by track id, null for a bee not seen then', () => {
    const earlier = { t: 0, boxes: [{ trackId: 3, x: 100, y: 60, w: 34, h: 12 }, { trackId: 5, x: 10, y: 10, w: 30, h: 10 }] };
    const now = { t: 0.1, boxes: [{ trackId: 5, x: 16, y: 4, w: 30, h: 10 }, { trackId: 7, x: 300, y: 200, w: 30, h: 10 }] };
    expect(movementsInInput(now, earlier, 0.5, 0.5)).toEqual([[3, -3], null]);
  });

  it('converts to RGB exactly as the agent captures, then shrinks by area averaging', () => {
    expect(decodeArgs('clip.mp4', 1280, 720, 320, 240)).toContain('scale=1280:720:flags=bilinear,format=rgb24,scale=320:240:flags=area');
  });

  it('keys cached clips by everything that changes their pixels', () => {
    const [a, b] = trainingPlan({ seed: 1, variants: 2, seconds: 5 });
    expect(clipKey(a!)).toMatch(/^quiet-morning-v0-[0-9a-f]{12}$/);
    expect(clipKey(a!)).not.toBe(clipKey(b!));
    expect(clipKey({ ...a!, scenario: { ...a!.scenario, crf: a!.scenario.crf + 1 } })).not.toBe(clipKey(a!));
  });
});
