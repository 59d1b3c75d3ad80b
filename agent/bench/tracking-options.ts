// Option reading, its refusals included, lives apart so that tests can check it without starting a run.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SCENARIOS } from '@hivegate/simulator';
import type { PartialAgentConfig } from '../src/config/config.ts';
import { DEFAULT_CLIP_CACHE, parseFps, parseSeeds } from './clips.ts';

export interface TrackingOptions {
  seconds: number;
  seeds: number;
  scenarios: string[];
  model: string | undefined;
  kind: 'onnx' | 'motion';
  detectorOverrides: PartialAgentConfig['detector'];
  trackerOverrides: PartialAgentConfig['tracker'];
  countingOverrides: PartialAgentConfig['counting'];
  /** Detector score threshold; the agent default when not given. */
  threshold: number | undefined;
  cacheDir: string;
  explain: boolean;
  identities: boolean;
  /** --trace scenario:bee prints that bee's frames: its true centre, the detections and the tracks near it. */
  traced: { scenario: string; bee: number } | undefined;
  /** --drop-every N: every Nth frame is lost as a live camera loses frames the agent has no time for. */
  dropEvery: number | undefined;
  agentFps: number | undefined;
  /**
   * --arrival-delay MS: frames reach the agent up to MS ms late (seeded, uniform), as a live source's do while the
   * agent is busy, and are stamped by the live capture's stream clock; with --arrival-stamps, at their arrival instead.
   */
  arrivalDelayMs: number | undefined;
  arrivalStamps: boolean;
}

/** Reads bench:tracking's arguments; paths are resolved from `callerDir`. Throws, naming the option, on a bad one. */
export function readTrackingOptions(argv: readonly string[], callerDir: string): TrackingOptions {
  const { values } = parseArgs({
    // `pnpm x -- --flag` hands the separator on; it separates nothing here.
    args: argv.filter((arg) => arg !== '--'),
    options: {
      split: { type: 'string', default: 'train' },
      scenarios: { type: 'string' },
      seconds: { type: 'string', default: '60' },
      seeds: { type: 'string', default: '1' },
      model: { type: 'string' },
      kind: { type: 'string', default: 'onnx' },
      detector: { type: 'string', default: '{}' },
      tracker: { type: 'string', default: '{}' },
      counting: { type: 'string', default: '{}' },
      threshold: { type: 'string' },
      cache: { type: 'string', default: DEFAULT_CLIP_CACHE },
      explain: { type: 'boolean', default: false },
      identities: { type: 'boolean', default: false },
      trace: { type: 'string' },
      'drop-every': { type: 'string' },
      fps: { type: 'string' },
      'arrival-delay': { type: 'string' },
      'arrival-stamps': { type: 'boolean', default: false },
    },
  });
  const model = values.model ? resolve(callerDir, values.model) : undefined;
  if (values.kind !== 'onnx' && values.kind !== 'motion') throw new Error(`--kind takes onnx or motion, got "${values.kind}"`);
  if (values.kind === 'motion' && model) throw new Error('--model is for the onnx detector');
  const dropEvery = values['drop-every'] === undefined ? undefined : Number(values['drop-every']);
  if (dropEvery !== undefined && !(Number.isInteger(dropEvery) && dropEvery >= 2)) throw new Error(`--drop-every takes a whole number ≥ 2, got "${values['drop-every']}"`);
  const arrivalDelayMs = values['arrival-delay'] === undefined ? undefined : Number(values['arrival-delay']);
  if (arrivalDelayMs !== undefined && !(arrivalDelayMs >= 0 && arrivalDelayMs <= 1000)) throw new Error(`--arrival-delay takes milliseconds from 0 to 1000, got "${values['arrival-delay']}"`);
  if (values['arrival-stamps'] && arrivalDelayMs === undefined) throw new Error('--arrival-stamps needs --arrival-delay');
  return {
    seconds: Number(values.seconds),
    seeds: parseSeeds(values.seeds),
    scenarios: values.scenarios ? values.scenarios.split(',') : SCENARIOS.filter((s) => s.split === values.split).map((s) => s.name),
    model,
    kind: values.kind,
    detectorOverrides: JSON.parse(values.detector) as PartialAgentConfig['detector'],
    trackerOverrides: JSON.parse(values.tracker) as PartialAgentConfig['tracker'],
    countingOverrides: JSON.parse(values.counting) as PartialAgentConfig['counting'],
    threshold: values.threshold ? Number(values.threshold) : undefined,
    cacheDir: resolve(callerDir, values.cache),
    explain: values.explain,
    identities: values.identities,
    traced: values.trace ? { scenario: values.trace.split(':')[0]!, bee: Number(values.trace.split(':')[1]) } : undefined,
    dropEvery,
    agentFps: parseFps(values.fps),
    arrivalDelayMs,
    arrivalStamps: values['arrival-stamps'],
  };
}
