import { streamFor } from '../src/random/prng.ts';
import { validateScenario, type Scenario } from '../src/scenario/scenario.ts';
import { SCENARIOS } from '../src/scenario/suite.ts';

export interface TrainingPlanOptions {
  /** The training run's seed: picks the variants' seeds and their light, noise and compression. */
  seed: number;
  /** Variants per training scenario; the first is the scenario as the suite defines it (seed aside). */
  variants: number;
  /** Length of each rendered clip. */
  seconds: number;
}

export interface TrainingClip {
  scenario: Scenario;
  /** Keep every `frameStep`-th frame: neighbouring frames are nearly identical and would only cost memory. */
  frameStep: number;
}

/** About this many frames are kept per second of video, whatever the clip's frame rate. */
const KEPT_PER_SECOND = 10;

/**
 * The clips a detector is trained on: only `train` scenarios, each as defined plus variants with other seeds
 * and jittered light, colour, noise, shadows and compression, so the model sees more than six lighting set-ups.
 * Held-out scenarios are never touched. Pure: the same options give the same clips.
 */
export function trainingPlan(options: TrainingPlanOptions): TrainingClip[] {
  if (!Number.isInteger(options.seed) || options.seed < 0) throw new Error(`seed must be a non-negative integer, got ${options.seed}`);
  if (!Number.isInteger(options.variants) || options.variants < 1) throw new Error(`variants must be a positive integer, got ${options.variants}`);
  if (!(options.seconds >= 1 && options.seconds <= 600)) throw new Error(`seconds must be between 1 and 600, got ${options.seconds}`);
  const clips: TrainingClip[] = [];
  for (const base of SCENARIOS.filter((s) => s.split === 'train')) {
    const random = streamFor(options.seed, `training-plan:${base.name}`);
    const between = (low: number, high: number) => random.range(low, high);
    for (let variant = 0; variant < options.variants; variant++) {
      const seed = random.nextUint32();
      const jittered: Scenario =
        variant === 0
          ? { ...base, seed }
          : {
              ...base,
              seed,
              light: {
                ...base.light,
                level: clamp(base.light.level * between(0.6, 1.25), 0.3, 1.3),
                warmth: clamp(base.light.warmth + between(-0.5, 0.5), -1, 1),
                drift: clamp(base.light.drift * between(0.5, 2), 0, 0.3),
                shadowStrength: clamp(base.light.shadowStrength + between(-0.3, 0.3), 0, 0.9),
                sunAngleDeg: Math.round(between(0, 360)),
              },
              noiseSigma: clamp(base.noiseSigma * between(0.6, 2), 0.5, 10),
              crf: Math.round(clamp(base.crf + between(-3, 8), 18, 34)),
              speed: clamp(base.speed * between(0.85, 1.3), 0.5, 2),
            };
      const scenario = validateScenario({ ...jittered, name: `${base.name}-v${variant}`, durationSeconds: options.seconds });
      clips.push({ scenario, frameStep: Math.max(1, Math.round(scenario.camera.fps / KEPT_PER_SECOND)) });
    }
  }
  return clips;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}
