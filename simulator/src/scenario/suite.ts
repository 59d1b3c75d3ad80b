import { validateScenario, type Scenario } from './scenario.ts';

/**
 * Named scenarios. `train` ones may be used to make training data for a detector; `heldout` ones use other
 * seeds and other parameter mixes and exist only to evaluate it, so a model is never scored on scenes it saw.
 */

const VGA = { width: 640, height: 480, fps: 30, beeLengthPx: 34 };

const BASE: Omit<Scenario, 'name' | 'description' | 'split' | 'seed' | 'startTime'> = {
  camera: VGA,
  durationSeconds: 60,
  traffic: { crossingsPerMinute: 30, inShare: 0.5, flyShare: 0.75 },
  density: { wanderers: 3, fanners: 1, guards: 1, meetingsPerMinute: 2 },
  speed: 1,
  light: { level: 1, warmth: 0, drift: 0.05, cloudsPerMinute: 0, shadowStrength: 0.45, sunAngleDeg: 60 },
  noiseSigma: 2.5,
  crf: 23,
};

function scenario(fields: Pick<Scenario, 'name' | 'description' | 'split' | 'seed' | 'startTime'> & Partial<Scenario>): Scenario {
  return validateScenario({ ...BASE, ...fields });
}

const TRAIN: Scenario[] = [
  scenario({
    name: 'quiet-morning',
    description: 'cool early light, a few foragers leaving, little crowding',
    split: 'train',
    seed: 1101,
    startTime: '2024-06-15T07:30:00Z',
    traffic: { crossingsPerMinute: 12, inShare: 0.3, flyShare: 0.8 },
    density: { wanderers: 1.5, fanners: 0, guards: 2, meetingsPerMinute: 1 },
    speed: 0.85,
    light: { level: 0.8, warmth: -0.2, drift: 0.04, cloudsPerMinute: 0, shadowStrength: 0.35, sunAngleDeg: 20 },
    noiseSigma: 3,
  }),
  scenario({
    name: 'busy-afternoon',
    description: 'bright sun, heavy two-way traffic, hard shadows',
    split: 'train',
    seed: 2202,
    startTime: '2024-06-15T14:00:00Z',
    traffic: { crossingsPerMinute: 60, inShare: 0.5, flyShare: 0.8 },
    density: { wanderers: 5, fanners: 1, guards: 2, meetingsPerMinute: 4 },
    speed: 1.15,
    light: { level: 1.05, warmth: 0.1, drift: 0.06, cloudsPerMinute: 0.5, shadowStrength: 0.6, sunAngleDeg: 100 },
    noiseSigma: 2,
  }),
  scenario({
    name: 'dusk',
    description: 'dim warm light, foragers returning home, strong sensor noise',
    split: 'train',
    seed: 3303,
    startTime: '2024-06-15T19:45:00Z',
    traffic: { crossingsPerMinute: 24, inShare: 0.85, flyShare: 0.85 },
    density: { wanderers: 2, fanners: 1, guards: 1, meetingsPerMinute: 1 },
    speed: 0.9,
    light: { level: 0.42, warmth: 0.7, drift: 0.08, cloudsPerMinute: 0, shadowStrength: 0.15, sunAngleDeg: 170 },
    noiseSigma: 7,
    crf: 26,
  }),
  scenario({
    name: 'crowded-entrance',
    description: 'many bees on the board, overlaps and meetings, heavy traffic',
    split: 'train',
    seed: 4404,
    startTime: '2024-07-02T12:00:00Z',
    traffic: { crossingsPerMinute: 90, inShare: 0.55, flyShare: 0.7 },
    density: { wanderers: 14, fanners: 3, guards: 4, meetingsPerMinute: 10 },
    speed: 1,
    light: { level: 1, warmth: 0, drift: 0.05, cloudsPerMinute: 1, shadowStrength: 0.5, sunAngleDeg: 75 },
    noiseSigma: 2.5,
  }),
  scenario({
    name: 'fanning-bees',
    description: 'hot day: a row of bees fanning at the slot, light traffic',
    split: 'train',
    seed: 5505,
    startTime: '2024-07-20T15:30:00Z',
    traffic: { crossingsPerMinute: 14, inShare: 0.5, flyShare: 0.8 },
    density: { wanderers: 2, fanners: 8, guards: 1, meetingsPerMinute: 1 },
    speed: 1,
    light: { level: 1.1, warmth: 0.15, drift: 0.03, cloudsPerMinute: 0, shadowStrength: 0.55, sunAngleDeg: 110 },
    noiseSigma: 2,
  }),
  scenario({
    name: 'hd-passing-clouds',
    description: '1280x720 at 15 fps like many entrance cameras, clouds dimming the light',
    split: 'train',
    seed: 6606,
    startTime: '2024-06-21T11:00:00Z',
    camera: { width: 1280, height: 720, fps: 15, beeLengthPx: 52 },
    traffic: { crossingsPerMinute: 40, inShare: 0.45, flyShare: 0.75 },
    density: { wanderers: 4, fanners: 1, guards: 2, meetingsPerMinute: 3 },
    light: { level: 0.95, warmth: 0, drift: 0.1, cloudsPerMinute: 3, shadowStrength: 0.45, sunAngleDeg: 45 },
    noiseSigma: 3,
  }),
  scenario({
    name: 'second-thoughts',
    description: 'bees walking up to the slot and turning back, among two-way traffic; for tuning counting rules',
    split: 'train',
    seed: 7707,
    startTime: '2024-06-22T09:15:00Z',
    traffic: { crossingsPerMinute: 45, inShare: 0.5, flyShare: 0.75 },
    density: { wanderers: 3, fanners: 1, guards: 2, meetingsPerMinute: 2, turnBacksPerMinute: 10 },
    speed: 1.05,
    light: { level: 0.95, warmth: -0.1, drift: 0.05, cloudsPerMinute: 0.5, shadowStrength: 0.5, sunAngleDeg: 120 },
    noiseSigma: 3,
  }),
];

const HELDOUT: Scenario[] = [
  scenario({
    name: 'heldout-overcast-noon',
    description: 'flat grey light, soft shadows, moderate traffic',
    split: 'heldout',
    seed: 910_001,
    startTime: '2024-08-05T12:10:00Z',
    traffic: { crossingsPerMinute: 36, inShare: 0.6, flyShare: 0.65 },
    density: { wanderers: 4, fanners: 0, guards: 3, meetingsPerMinute: 3 },
    speed: 0.95,
    light: { level: 0.7, warmth: -0.35, drift: 0.12, cloudsPerMinute: 1.5, shadowStrength: 0.1, sunAngleDeg: 90 },
    noiseSigma: 4,
    crf: 25,
  }),
  scenario({
    name: 'heldout-evening-rush',
    description: 'low sun, many foragers returning at once, long shadows',
    split: 'heldout',
    seed: 910_002,
    startTime: '2024-08-05T18:55:00Z',
    traffic: { crossingsPerMinute: 75, inShare: 0.8, flyShare: 0.9 },
    density: { wanderers: 6, fanners: 2, guards: 2, meetingsPerMinute: 5 },
    speed: 1.2,
    light: { level: 0.6, warmth: 0.5, drift: 0.05, cloudsPerMinute: 0, shadowStrength: 0.7, sunAngleDeg: 200 },
    noiseSigma: 5,
  }),
  scenario({
    name: 'heldout-crowd-lowlight',
    description: 'crowded board in poor light with strong compression',
    split: 'heldout',
    seed: 910_003,
    startTime: '2024-09-01T08:20:00Z',
    traffic: { crossingsPerMinute: 50, inShare: 0.4, flyShare: 0.6 },
    density: { wanderers: 12, fanners: 4, guards: 3, meetingsPerMinute: 8 },
    speed: 0.9,
    light: { level: 0.5, warmth: 0.2, drift: 0.08, cloudsPerMinute: 0.5, shadowStrength: 0.25, sunAngleDeg: 30 },
    noiseSigma: 6,
    crf: 30,
  }),
  scenario({
    name: 'heldout-hd-fanning',
    description: '1280x720 at 25 fps, hot afternoon, fanners and fast foragers',
    split: 'heldout',
    seed: 910_004,
    startTime: '2024-07-28T16:40:00Z',
    camera: { width: 1280, height: 720, fps: 25, beeLengthPx: 60 },
    traffic: { crossingsPerMinute: 45, inShare: 0.5, flyShare: 0.85 },
    density: { wanderers: 3, fanners: 6, guards: 1, meetingsPerMinute: 2 },
    speed: 1.3,
    light: { level: 1.15, warmth: 0.25, drift: 0.04, cloudsPerMinute: 0.5, shadowStrength: 0.65, sunAngleDeg: 135 },
    noiseSigma: 2,
  }),
  scenario({
    name: 'heldout-hesitant-bees',
    description: 'bees walking up to the slot and turning away without going in, among ordinary traffic',
    split: 'heldout',
    seed: 910_005,
    startTime: '2024-08-12T10:30:00Z',
    traffic: { crossingsPerMinute: 40, inShare: 0.55, flyShare: 0.7 },
    density: { wanderers: 4, fanners: 1, guards: 2, meetingsPerMinute: 3, turnBacksPerMinute: 15 },
    speed: 1,
    light: { level: 0.9, warmth: 0.1, drift: 0.06, cloudsPerMinute: 1, shadowStrength: 0.4, sunAngleDeg: 75 },
    noiseSigma: 3.5,
    crf: 24,
  }),
];

export const SCENARIOS: readonly Scenario[] = [...TRAIN, ...HELDOUT];

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

/** Copy of a named scenario with a different seed and/or duration (CLI overrides). */
export function withOverrides(base: Scenario, overrides: { seed?: number; durationSeconds?: number; startTime?: string }): Scenario {
  return validateScenario({
    ...base,
    seed: overrides.seed ?? base.seed,
    durationSeconds: overrides.durationSeconds ?? base.durationSeconds,
    startTime: overrides.startTime ?? base.startTime,
  });
}
