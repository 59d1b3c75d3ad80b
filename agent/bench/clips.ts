// Simulator clips for the benchmarks, rendered once per scenario, seed and length and reused from a cache.
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntranceMovementInput } from '@hivegate/shared';
import { findScenario, RENDER_REVISION, renderClip, withOverrides, type GroundTruth } from '@hivegate/simulator';
import { resolveConfig, type AgentConfig, type PartialAgentConfig } from '../src/config/config.ts';

/** Where the benchmarks keep rendered clips and cached detections unless told (`--cache`). */
export const DEFAULT_CLIP_CACHE = join(tmpdir(), 'hivegate-accuracy-clips');

export interface CachedClip {
  /** Row label: the scenario's name, with the seed when it is not the suite's. */
  label: string;
  dir: string;
  clip: string;
  truth: GroundTruth;
}

/** Variant k of a scenario renders with seed + k × this: clear of the suite's other seeds, which are a few apart. */
const VARIANT_SEED_STEP = 1000;

/**
 * `variant` 0 is the scenario as the suite defines it; the others render it with another seed (other bees, paths,
 * light and noise), for more crossings than one clip holds and a view of how much the scores move from clip to clip.
 */
export async function cachedClip(name: string, seconds: number, cacheDir: string, variant = 0): Promise<CachedClip> {
  const found = findScenario(name);
  if (!found) throw new Error(`unknown scenario "${name}"`);
  const scenario = withOverrides(found, { durationSeconds: seconds, seed: found.seed + VARIANT_SEED_STEP * variant });
  const dir = join(cacheDir, `${scenario.name}-${scenario.seed}-${seconds}s-r${RENDER_REVISION}`);
  if (!existsSync(join(dir, 'complete'))) {
    await rm(dir, { recursive: true, force: true });
    await renderClip({ scenario, outDir: dir, ids: { hiveId: 'sim-hive', boxId: 'sim-box' }, progress: process.stderr });
    await writeFile(join(dir, 'complete'), '');
  }
  const label = variant === 0 ? name : `${name} (seed ${scenario.seed})`;
  return { label, dir, clip: join(dir, 'clip.mp4'), truth: JSON.parse(readFileSync(join(dir, 'truth.json'), 'utf8')) as GroundTruth };
}

/** Row label of one set of clips, one of every scenario, in the per-set totals. */
export function clipSetLabel(variant: number): string {
  return variant === 0 ? "the suite's seeds" : `seeds + ${VARIANT_SEED_STEP * variant}`;
}

/** `--seeds N`: how many clips of each scenario (the suite's seed, then variants 1 … N − 1, see `cachedClip`). */
export function parseSeeds(value: string): number {
  const seeds = Number(value);
  if (!Number.isInteger(seeds) || seeds < 1 || seeds > 20) throw new Error(`--seeds must be a whole number from 1 to 20, got "${value}"`);
  return seeds;
}

/** The gate for "this hypothesis is that bee": half a bee length, at least 10 px. */
export function gateFor(truth: GroundTruth): number {
  return Math.max(10, 0.5 * truth.beeLengthPx);
}

/** The agent's configuration for a clip, as the accuracy benchmark runs it: zone and counting from the truth. */
export function agentConfigFor(
  clip: CachedClip,
  options: {
    detector: 'onnx' | 'motion';
    model?: string | undefined;
    /** Detector settings on top of the agent's defaults (motion gate, threshold…). */
    detectorOverrides?: PartialAgentConfig['detector'];
    tracker?: PartialAgentConfig['tracker'];
    counting?: PartialAgentConfig['counting'];
    /** The agent's `source.fps` (default: the clip's own rate). */
    fps?: number | undefined;
  },
): AgentConfig {
  const { truth } = clip;
  return resolveConfig({
    flags: {
      hiveId: 'sim-hive',
      boxId: 'sim-box',
      source: { url: clip.clip, width: truth.width, height: truth.height, fps: options.fps ?? truth.fps },
      cloud: { url: 'http://127.0.0.1:9', token: 'bench' },
      detector: {
        ...options.detectorOverrides,
        kind: options.detector,
        ...(options.detector === 'onnx' && options.model ? { model: options.model } : {}),
        motion: { ...options.detectorOverrides?.motion, beeLengthPx: truth.beeLengthPx },
      },
      tracker: options.tracker ?? {},
      counting: {
        zone: truth.entranceZone,
        hysteresisPx: truth.counting.hysteresisPx,
        intervalSeconds: truth.counting.intervalSeconds,
        ...options.counting,
      },
      stateDir: join(tmpdir(), 'hivegate-accuracy-state'),
    },
    env: {},
  });
}

/** `--fps N`: the agent's `source.fps` for every clip instead of the clip's own rate (undefined: the clip's). */
export function parseFps(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const fps = Number(value);
  if (!(fps > 0 && fps <= 240)) throw new Error(`--fps must be a number above 0 and at most 240, got "${value}"`);
  return fps;
}

/**
 * The agent's movement records in the clip's units: speeds are pixels per frame of the rate the agent read the
 * clip at (`--fps`), the ground truth's per frame of the clip.
 */
export function inClipUnits(records: readonly EntranceMovementInput[], agentFps: number, clipFps: number): EntranceMovementInput[] {
  if (agentFps === clipFps) return [...records];
  // v px/s is v / agentFps per agent frame and v / clipFps per clip frame.
  const scale = agentFps / clipFps;
  return records.map((r) => ({
    ...r,
    ...(r.avgSpeed === undefined ? {} : { avgSpeed: r.avgSpeed * scale }),
    ...(r.p95Speed === undefined ? {} : { p95Speed: r.p95Speed * scale }),
  }));
}
