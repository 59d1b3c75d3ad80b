import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RENDER_REVISION, renderClip } from '../src/clip.ts';
import { resolveTool, StderrTail } from '../src/io/ffmpeg.ts';
import type { GroundTruth } from '../src/truth/ground-truth.ts';
import type { TruthFrame } from '../src/truth/recorder.ts';
import type { TrainingClip } from './plan.ts';

/**
 * Training data for the detector: frames as the agent's model sees them (H.264-decoded, converted to RGB the
 * way the agent's capture does, shrunk to the model input by area averaging) and the true boxes scaled to
 * model-input pixels. The model also sees the frame before, and learns how far each bee moved since, so every
 * sample is a pair: the earlier frame, then the labelled one. Written as one raw file of
 * `count × 2 × height × width × 3` bytes (RGB, row-major) plus a JSON file with the boxes and movements, which
 * the Python trainer reads with numpy.
 */

/** How far a bee's centre moved from the earlier frame of a pair to the labelled one, input px. */
export type Movement = [number, number];

export interface DatasetLabels {
  version: 2;
  inputWidth: number;
  inputHeight: number;
  count: number;
  /** Per clip; `zone` is the counting zone around the hive opening in input pixels, where the slot model runs. */
  clips: { name: string; seed: number; width: number; height: number; fps: number; frames: number; zone: [number, number][] }[];
  /**
   * One entry per stored pair, in file order: which clip, which frame of it, how many frames earlier the pair's
   * first frame is (0: the same frame, as the agent's first frame is paired with itself), the [cx, cy, w, h]
   * boxes, and per box its movement since the earlier frame (null when the bee was not visible then).
   */
  frames: { clip: number; frame: number; gap: number; boxes: [number, number, number, number][]; movements: (Movement | null)[] }[];
}

export interface DatasetOptions {
  clips: readonly TrainingClip[];
  /** Rendered clips are kept here between runs (keyed by their scenario) and the dataset is written here. */
  cacheDir: string;
  inputWidth: number;
  inputHeight: number;
  log?: (line: string) => void;
}

export interface Dataset {
  framesPath: string;
  labelsPath: string;
  count: number;
}

/**
 * The ffmpeg arguments that turn a clip into model-input frames: first exactly the agent's capture conversion
 * (decode, RGB at the clip's own size, bilinear flags), then area averaging down to the input size, which is
 * what the agent's preprocessing does in TypeScript.
 */
export function decodeArgs(clipPath: string, clipWidth: number, clipHeight: number, inputWidth: number, inputHeight: number): string[] {
  return [
    '-hide_banner', '-loglevel', 'error', '-nostdin', '-i', clipPath,
    '-vf', `scale=${clipWidth}:${clipHeight}:flags=bilinear,format=rgb24,scale=${inputWidth}:${inputHeight}:flags=area`,
    '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1',
  ];
}

/** Labels keep 0.01 px: finer than any model resolves, and the JSON stays short. */
const toHundredths = (v: number): number => Math.round(v * 100) / 100;

/** The true boxes of one frame in model-input pixels, rounded to 0.01 px. */
export function boxesInInput(frame: TruthFrame, scaleX: number, scaleY: number): [number, number, number, number][] {
  const r = toHundredths;
  return frame.boxes.map((b) => [r(b.x * scaleX), r(b.y * scaleY), r(b.w * scaleX), r(b.h * scaleY)]);
}

/**
 * Frames between the two of a pair: 1 and 2 in turn (a camera at half the rate, or a frame the agent's motion
 * gate skipped, shows a bee twice as far on), 0 for a clip's first frame, which has nothing before it.
 */
export function pairGap(frame: number, keptIndex: number): number {
  return Math.min(frame, keptIndex % 2 === 0 ? 1 : 2);
}

/** Each box's centre movement since `earlier`, matched by track id, in input pixels; null for a bee not seen then. */
export function movementsInInput(frame: TruthFrame, earlier: TruthFrame, scaleX: number, scaleY: number): (Movement | null)[] {
  const r = toHundredths;
  const before = new Map(earlier.boxes.map((b) => [b.trackId, b]));
  return frame.boxes.map((b) => {
    const was = before.get(b.trackId);
    return was ? [r((b.x - was.x) * scaleX), r((b.y - was.y) * scaleY)] : null;
  });
}

/** Key of a rendered clip in the cache: anything that changes the pixels changes the key. */
export function clipKey(clip: TrainingClip): string {
  const hash = createHash('sha256').update(JSON.stringify({ revision: RENDER_REVISION, scenario: clip.scenario })).digest('hex').slice(0, 12);
  return `${clip.scenario.name}-${hash}`;
}

export async function buildDataset(options: DatasetOptions): Promise<Dataset> {
  const { cacheDir, inputWidth, inputHeight } = options;
  const log = options.log ?? (() => {});
  // One folder per input size: a zoom-2 export (15 GB) does not overwrite the 320x240 one.
  const outDir = join(cacheDir, `dataset-${inputWidth}x${inputHeight}`);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const framesPath = join(outDir, 'frames.u8');
  const labelsPath = join(outDir, 'labels.json');
  const labels: DatasetLabels = { version: 2, inputWidth, inputHeight, count: 0, clips: [], frames: [] };
  const sink = createWriteStream(framesPath);
  const ffmpeg = resolveTool('ffmpeg');
  try {
    for (const [index, clip] of options.clips.entries()) {
      const { scenario } = clip;
      const dir = join(cacheDir, 'clips', clipKey(clip));
      const truthPath = join(dir, 'truth.json');
      if (!existsSync(join(dir, 'complete'))) {
        await rm(dir, { recursive: true, force: true });
        await renderClip({ scenario, outDir: dir, ids: { hiveId: 'train', boxId: 'train' } });
        await writeFile(join(dir, 'complete'), '');
      }
      const truth = JSON.parse(readFileSync(truthPath, 'utf8')) as GroundTruth;
      const before = labels.count;
      const scaleX = inputWidth / truth.width;
      const scaleY = inputHeight / truth.height;
      await decodeInto(ffmpeg, join(dir, 'clip.mp4'), truth, clip.frameStep, options, sink, (frame, gap) => {
        const current = truth.frames[frame]!;
        labels.frames.push({
          clip: index,
          frame,
          gap,
          boxes: boxesInInput(current, scaleX, scaleY),
          movements: movementsInInput(current, truth.frames[frame - gap]!, scaleX, scaleY),
        });
        labels.count++;
      });
      const zone = truth.entranceZone.map(([x, y]): [number, number] => [toHundredths(x * scaleX), toHundredths(y * scaleY)]);
      labels.clips.push({ name: scenario.name, seed: scenario.seed, width: truth.width, height: truth.height, fps: truth.fps, frames: labels.count - before, zone });
      log(`data: ${index + 1}/${options.clips.length} ${scenario.name} (seed ${scenario.seed}): ${labels.count - before} frames, ${labels.count} in all`);
    }
  } finally {
    sink.end();
    await once(sink, 'close');
  }
  await writeFile(labelsPath, JSON.stringify(labels));
  return { framesPath, labelsPath, count: labels.count };
}

async function decodeInto(ffmpeg: string, clipPath: string, truth: GroundTruth, step: number, options: DatasetOptions, sink: WriteStream, onPair: (frame: number, gap: number) => void): Promise<void> {
  const frameBytes = options.inputWidth * options.inputHeight * 3;
  // The last frames decoded, newest first: a pair's earlier frame is taken from here.
  const recent: Buffer[] = [];
  let kept = 0;
  const child = spawn(ffmpeg, decodeArgs(clipPath, truth.width, truth.height, options.inputWidth, options.inputHeight), { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = new StderrTail();
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const closed = once(child, 'close') as Promise<[number | null]>;
  let pending: Buffer = Buffer.alloc(0);
  let frame = 0;
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= frameBytes) {
      const data = pending.subarray(0, frameBytes);
      pending = pending.subarray(frameBytes);
      const current = Buffer.from(data);
      if (frame % step === 0 && frame < truth.frames.length) {
        const gap = pairGap(frame, kept++);
        sink.write(gap === 0 ? current : recent[gap - 1]!);
        if (!sink.write(current)) await once(sink, 'drain');
        onPair(frame, gap);
      }
      recent.unshift(current);
      recent.length = Math.min(recent.length, 2);
      frame++;
    }
  }
  const [code] = await closed;
  if (code !== 0) throw new Error(`ffmpeg could not decode ${clipPath}: ${stderr.toString() || `exit code ${code}`}`);
  if (frame !== truth.frameCount) throw new Error(`${clipPath}: decoded ${frame} frames, the ground truth has ${truth.frameCount}`);
}
