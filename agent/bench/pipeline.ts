// Frames per second of the agent's vision pipeline (capture → detector → tracker → counting) on a 640×480
// simulator clip, as the agent ships it (the bee model, motion-gated, inference on one thread) and with the
// motion detector, against decoding the same clip with ffmpeg alone in the same run.
// With --slot-model it also runs the model with the slot pass. --model and --slot-model may be given more than once
// (say, a float model and its 8-bit copy): every model runs alone, and the nth slot model runs beside the nth model
// (or the first), once for each --whole-every N given (the whole-frame model on every Nth frame only; default: the
// agent's).
// Each pipeline runs in a process of its own, so its peak RSS is its own and no run inherits another's compiled
// code or heap. The machines this runs on drift by ±20 % from one minute to the next, so the pipelines take turns:
// --rounds times each (default 3), the baseline before every round, and each row gives the median and the range.
// Last, the detectors alone, taking turns frame by frame on the same frames held in memory: the steadiest comparison
// of models this drift allows.
//   pnpm bench:agent [-- --seconds 20 --rounds 3 --model FILE --slot-model FILE --slot-margin LENGTHS --whole-every N]
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { createCapture, createVision } from '../src/agent.ts';
import type { Frame } from '../src/capture/frame.ts';
import { measureDecode, measurePipeline } from '../src/throughput.ts';
import { agentConfigFor, cachedClip, DEFAULT_CLIP_CACHE, type CachedClip } from './clips.ts';

const run = promisify(execFile);
const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    scenario: { type: 'string', default: 'busy-afternoon' },
    model: { type: 'string', multiple: true },
    'slot-model': { type: 'string', multiple: true },
    'slot-margin': { type: 'string' },
    'whole-every': { type: 'string', multiple: true },
    cache: { type: 'string', default: DEFAULT_CLIP_CACHE },
    /** Internal: run one pipeline (JSON `Pipeline`) and print its `PipelineRun` as JSON. */
    'run-one': { type: 'string' },
  },
});
const callerDir = process.env.INIT_CWD ?? process.cwd();

interface Pipeline {
  label: string;
  kind: 'onnx' | 'motion';
  model?: string;
  slotModel?: string;
  slotMargin?: number;
  wholeEvery?: number;
}

interface PipelineRun {
  frames: number;
  ms: number;
  detectMs: number;
  inferenceSkipped: number;
  crossings: number;
  describe: string;
  /** Peak RSS of the process that ran only this pipeline, bytes. */
  peakRss: number;
}

async function timeIt<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** The agent's configuration for a pipeline on the clip: its detector, the slot pass if any, one inference thread. */
function configFor(clip: CachedClip, { kind, model, slotModel, slotMargin, wholeEvery }: Pipeline) {
  const slot = slotModel
    ? { slot: { model: slotModel, ...(slotMargin === undefined ? {} : { marginLengths: slotMargin }), ...(wholeEvery === undefined ? {} : { wholeEvery }) } }
    : undefined;
  const config = agentConfigFor(clip, { detector: kind, model, ...(slot ? { detectorOverrides: slot } : {}) });
  config.detector.threads = 1;
  return config;
}

async function runPipeline(clip: CachedClip, pipeline: Pipeline): Promise<PipelineRun> {
  const result = await measurePipeline(configFor(clip, pipeline));
  const { frames, ms, detectMs, inferenceSkipped, beesIn, beesOut, detector, peakRssBytes } = result;
  return { frames, ms, detectMs, inferenceSkipped, crossings: beesIn + beesOut, describe: detector, peakRss: peakRssBytes };
}

/** Runs one pipeline in a fresh process (this script with --run-one, under the same loader). */
async function inChildProcess(pipeline: Pipeline): Promise<PipelineRun> {
  const script = fileURLToPath(import.meta.url);
  const args = [...process.execArgv, script, '--seconds', values.seconds, '--scenario', values.scenario, '--cache', values.cache, '--run-one', JSON.stringify(pipeline)];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 20 });
  const last = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as PipelineRun;
}

/** Each ONNX pipeline's detector on the same frames, one frame each in turn, `passes` times: median ms a frame. */
async function detectorsInTurn(clip: CachedClip, pipelines: readonly Pipeline[], frameCount: number, passes: number): Promise<number[]> {
  // Colour frames, as the models' pipelines capture them (the motion detector's are gray).
  const capture = createCapture(agentConfigFor(clip, { detector: 'onnx' }));
  await capture.start();
  const frames: Frame[] = [];
  for await (const frame of capture) {
    frames.push(frame);
    if (frames.length >= frameCount) break;
  }
  await capture.stop();
  const detectors = [];
  for (const pipeline of pipelines) detectors.push((await createVision(configFor(clip, pipeline))).detector);
  const perPass = pipelines.map(() => [] as number[]);
  for (let pass = 0; pass < passes; pass++) {
    const sums = pipelines.map(() => 0);
    for (const frame of frames) {
      for (const [i, detector] of detectors.entries()) {
        const t0 = performance.now();
        await detector.detect(frame);
        sums[i] = sums[i]! + performance.now() - t0;
      }
    }
    sums.forEach((sum, i) => perPass[i]!.push(sum / frames.length));
  }
  await Promise.all(detectors.map((detector) => detector.release?.()));
  return perPass.map(median);
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (!(seconds > 0) || !Number.isInteger(rounds) || rounds < 1) throw new Error('--seconds must be positive and --rounds a whole number ≥ 1');
  const clip = await cachedClip(values.scenario, seconds, values.cache);
  const onlyOne = values['run-one'];
  if (onlyOne) {
    console.log(JSON.stringify(await runPipeline(clip, JSON.parse(onlyOne) as Pipeline)));
    return;
  }
  const models: (string | undefined)[] = values.model?.length ? values.model.map((m) => resolve(callerDir, m)) : [undefined];
  const slotModels = (values['slot-model'] ?? []).map((m) => resolve(callerDir, m));
  const slotMargin = values['slot-margin'] === undefined ? undefined : Number(values['slot-margin']);
  const wholeEvery: (number | undefined)[] = values['whole-every']?.map(Number) ?? [undefined];
  const name = (model: string | undefined) => (model ? `model ${models.indexOf(model) + 1}` : 'shipped model');
  const pipelines: Pipeline[] = [
    ...models.map((model): Pipeline => ({ label: name(model), kind: 'onnx', ...(model ? { model } : {}) })),
    ...slotModels.flatMap((slotModel, i) =>
      wholeEvery.map((every): Pipeline => {
        const model = models[i] ?? models[0];
        return {
          label: `${name(model)} + slot ${i + 1}${every === undefined ? '' : `, whole every ${every}`}`,
          kind: 'onnx',
          ...(model ? { model } : {}),
          slotModel,
          ...(slotMargin === undefined ? {} : { slotMargin }),
          ...(every === undefined ? {} : { wholeEvery: every }),
        };
      }),
    ),
    { label: 'motion detector', kind: 'motion' },
  ];

  // The agent's own config check, on every pipeline before the first round: a bad --slot-margin or --whole-every
  // fails now, naming the setting, not in a child process minutes later.
  for (const pipeline of pipelines) configFor(clip, pipeline);
  const { width, height, fps, frameCount } = clip.truth;
  const fpsOf = (n: number, ms: number) => (n / ms) * 1000;
  const decodeFps: number[] = [];
  const captureFps: number[] = [];
  const results = new Map<Pipeline, { fps: number[]; ratio: number[]; detectMs: number[]; peakRss: number; run: PipelineRun }>();
  for (let round = 1; round <= rounds; round++) {
    // Baseline: ffmpeg decoding and converting to RGB as the capture does, writing nowhere.
    const decode = await measureDecode(agentConfigFor(clip, { detector: 'onnx' }), frameCount);
    decodeFps.push(fpsOf(decode.frames, decode.ms));
    // Capture alone: the same decode plus the pipe into Node and frame splitting.
    const captureOnly = await timeIt(async () => {
      const capture = createCapture(agentConfigFor(clip, { detector: 'motion' }));
      await capture.start();
      let n = 0;
      for await (const _frame of capture) n++;
      return n;
    });
    captureFps.push(fpsOf(captureOnly.value, captureOnly.ms));
    for (const pipeline of pipelines) {
      const r = await inChildProcess(pipeline);
      const entry = results.get(pipeline) ?? { fps: [], ratio: [], detectMs: [], peakRss: 0, run: r };
      entry.fps.push(fpsOf(r.frames, r.ms));
      entry.ratio.push(fpsOf(r.frames, r.ms) / decodeFps.at(-1)!);
      entry.detectMs.push(r.detectMs / r.frames);
      entry.peakRss = Math.max(entry.peakRss, r.peakRss);
      results.set(pipeline, entry);
    }
    process.stderr.write(`round ${round} of ${rounds} done\n`);
  }
  const modelPipelines = pipelines.filter((p) => p.kind === 'onnx');
  const inTurn = await detectorsInTurn(clip, modelPipelines, Math.min(150, frameCount), 6);

  const range = (xs: number[], digits: number) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
  console.log(`clip: simulator scenario ${values.scenario}, ${width}x${height} @ ${fps} fps, ${seconds} s (${frameCount} frames); ${clip.truth.crossings.length} true crossings; ${rounds} round(s), medians (range)`);
  console.log(`ffmpeg decode only:                     ${median(decodeFps).toFixed(1)} frames/s (${range(decodeFps, 1)})`);
  console.log(`capture (ffmpeg → Node frames):         ${median(captureFps).toFixed(1)} frames/s (${range(captureFps, 1)})`);
  for (const pipeline of pipelines) {
    const { fps: rates, ratio, detectMs, peakRss, run: r } = results.get(pipeline)!;
    console.log(
      `${`full pipeline, ${pipeline.label}:`.padEnd(40)}${median(rates).toFixed(1)} frames/s (${range(rates, 1)}), ratio to decode ${median(ratio).toFixed(2)} ` +
        `(detector ${median(detectMs).toFixed(2)} ms/frame, inference skipped on ${r.inferenceSkipped} frames, ${r.crossings} crossings, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB; ${r.describe})`,
    );
  }
  console.log(`detectors alone, in turn frame by frame on the first ${Math.min(150, frameCount)} frames, median of 6 passes:`);
  for (const [i, pipeline] of modelPipelines.entries()) console.log(`  ${`${pipeline.label}:`.padEnd(38)}${inTurn[i]!.toFixed(2)} ms/frame`);
}

await main();
