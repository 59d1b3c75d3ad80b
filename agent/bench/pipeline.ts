// Frames per second of the agent's vision pipeline (capture → detector → tracker → counting) on a 640×480
// simulator clip, as the agent ships it (the bee model, motion-gated, inference on one thread) and with the
// motion detector, against decoding the same clip with ffmpeg alone in the same run. Peak RSS of this process.
// With --slot-model it also runs the model with the slot pass, in the same run. --model and --slot-model may be
// given more than once (say, a float model and its 8-bit copy): every model runs alone, and the nth slot model
// runs beside the nth model (or the first), all in the same run.
//   pnpm bench:agent [-- --seconds 20 --model FILE --slot-model FILE --slot-margin LENGTHS]
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { createCapture, createVision } from '../src/agent.ts';
import { resolveFfmpeg } from '../src/capture/ffmpeg-binary.ts';
import { agentConfigFor, cachedClip, type CachedClip } from './clips.ts';

const run = promisify(execFile);
const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    seconds: { type: 'string', default: '20' },
    scenario: { type: 'string', default: 'busy-afternoon' },
    model: { type: 'string', multiple: true },
    'slot-model': { type: 'string', multiple: true },
    'slot-margin': { type: 'string' },
    cache: { type: 'string', default: join(tmpdir(), 'hivegate-accuracy-clips') },
  },
});
const callerDir = process.env.INIT_CWD ?? process.cwd();
const models: (string | undefined)[] = values.model?.length ? values.model.map((m) => resolve(callerDir, m)) : [undefined];
const slotModels = (values['slot-model'] ?? []).map((m) => resolve(callerDir, m));

async function timeIt<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

interface PipelineRun {
  frames: number;
  ms: number;
  detectMs: number;
  inferenceSkipped: number;
  crossings: number;
  describe: string;
}

const slotMargin = values['slot-margin'] === undefined ? undefined : Number(values['slot-margin']);

async function pipeline(clip: CachedClip, kind: 'onnx' | 'motion', model?: string, slotModel?: string): Promise<PipelineRun> {
  const slot = slotModel ? { slot: { model: slotModel, ...(slotMargin === undefined ? {} : { marginLengths: slotMargin }) } } : undefined;
  const config = agentConfigFor(clip, { detector: kind === 'motion' ? 'motion' : 'onnx', model, ...(slot ? { detectorOverrides: slot } : {}) });
  config.detector.threads = 1;
  const capture = createCapture(config);
  const { detector, tracker, counter } = await createVision(config);
  let detectMs = 0;
  let crossings = 0;
  const { ms, value: frames } = await timeIt(async () => {
    await capture.start();
    let n = 0;
    for await (const frame of capture) {
      const t0 = performance.now();
      const detections = await detector.detect(frame);
      detectMs += performance.now() - t0;
      const update = tracker.update(frame.timestampMs, detections);
      crossings += counter.onFrame(frame.timestampMs, update.tracks, update.ended).crossings.length;
      n++;
    }
    crossings += counter.flush(tracker.flush()).crossings.length;
    return n;
  });
  return { frames, ms, detectMs, inferenceSkipped: detector.skippedFrames ?? 0, crossings, describe: detector.describe() };
}

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const clip = await cachedClip(values.scenario, seconds, values.cache);
  const { width, height, fps, frameCount } = clip.truth;
  const ffmpeg = resolveFfmpeg();

  // Baseline: ffmpeg decoding and converting to RGB at the capture size, writing nowhere.
  const decode = await timeIt(() => run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-i', clip.clip, '-vf', `fps=${fps},scale=${width}:${height},format=rgb24`, '-f', 'null', '-']));
  // Capture alone: the same decode plus the pipe into Node and frame splitting.
  const captureOnly = await timeIt(async () => {
    const capture = createCapture(agentConfigFor(clip, { detector: 'motion' }));
    await capture.start();
    let n = 0;
    for await (const _frame of capture) n++;
    return n;
  });
  const runs: [string, PipelineRun][] = [];
  for (const [i, model] of models.entries()) runs.push([`full pipeline, ${model ? `model ${i + 1}` : 'shipped model'}`, await pipeline(clip, 'onnx', model)]);
  for (const [i, slotModel] of slotModels.entries()) {
    const model = models[i] ?? models[0];
    runs.push([`full pipeline, ${model ? `model ${models.indexOf(model) + 1}` : 'shipped model'} + slot ${i + 1}`, await pipeline(clip, 'onnx', model, slotModel)]);
  }
  runs.push(['full pipeline, motion detector', await pipeline(clip, 'motion')]);

  const fpsOf = (n: number, ms: number) => (n / ms) * 1000;
  const decodeFps = fpsOf(frameCount, decode.ms);
  const captureFps = fpsOf(captureOnly.value, captureOnly.ms);
  console.log(`clip: simulator scenario ${values.scenario}, ${width}x${height} @ ${fps} fps, ${seconds} s (${frameCount} frames); ${clip.truth.crossings.length} true crossings`);
  console.log(`ffmpeg decode only:                 ${decodeFps.toFixed(1)} frames/s`);
  console.log(`capture (ffmpeg → Node frames):     ${captureFps.toFixed(1)} frames/s`);
  for (const [label, r] of runs) {
    const fullFps = fpsOf(r.frames, r.ms);
    console.log(
      `${`${label}:`.padEnd(36)}${fullFps.toFixed(1)} frames/s, ratio to decode ${(fullFps / decodeFps).toFixed(2)} ` +
        `(detector ${(r.detectMs / r.frames).toFixed(2)} ms/frame, inference skipped on ${r.inferenceSkipped} frames, ${r.crossings} crossings; ${r.describe})`,
    );
  }
  console.log(`peak RSS (agent process, all pipelines): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

await main();
