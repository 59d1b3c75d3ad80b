import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scenario } from '../src/scenario/scenario.ts';
import { findScenario, withOverrides } from '../src/scenario/suite.ts';
import type { GroundTruth } from '../src/truth/ground-truth.ts';
import { buildDataset, clipKey, type Dataset, type DatasetLabels } from '../train/dataset.ts';
import type { TrainingClip } from '../train/plan.ts';
import { packageDir, run } from './helpers.ts';

// Real rendering and real ffmpeg: the exported frames must be what the agent's model will be fed.
describe('training dataset export', () => {
  let dir: string;
  let dataset: Dataset;
  const clip: TrainingClip = { scenario: withOverrides(findScenario('busy-afternoon') as Scenario, { durationSeconds: 1 }), frameStep: 3 };
  const clipDir = () => join(dir, 'clips', clipKey(clip));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hivegate-train-data-'));
    dataset = await buildDataset({ clips: [clip], cacheDir: dir, inputWidth: 320, inputHeight: 240 });
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps every third frame with its true boxes in input pixels', () => {
    const labels = JSON.parse(readFileSync(dataset.labelsPath, 'utf8')) as DatasetLabels;
    const truth = JSON.parse(readFileSync(join(clipDir(), 'truth.json'), 'utf8')) as GroundTruth;
    expect(dataset.count).toBe(10);
    expect(labels).toMatchObject({ inputWidth: 320, inputHeight: 240, count: 10, clips: [{ name: 'busy-afternoon', width: 640, height: 480, fps: 30, frames: 10 }] });
    expect(labels.frames.map((f) => f.frame)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
    const sixth = truth.frames[6]!.boxes;
    expect(labels.frames[2]!.boxes).toHaveLength(sixth.length);
    expect(labels.frames[2]!.boxes[0]![0]).toBeCloseTo(sixth[0]!.x / 2, 1);
    expect(statSync(dataset.framesPath).size).toBe(10 * 2 * 320 * 240 * 3);
    // The trainer takes its slot-band crops around the entrance zone, so the zone travels in input pixels too.
    expect(labels.clips[0]!.zone).toEqual(truth.entranceZone.map(([x, y]) => [expect.closeTo(x / 2, 2), expect.closeTo(y / 2, 2)]));
  });

  it('pairs each kept frame with the one 1 or 2 frames before it, and labels how far each bee moved since', () => {
    const labels = JSON.parse(readFileSync(dataset.labelsPath, 'utf8')) as DatasetLabels;
    const truth = JSON.parse(readFileSync(join(clipDir(), 'truth.json'), 'utf8')) as GroundTruth;
    expect(labels.frames.map((f) => f.gap)).toEqual([0, 2, 1, 2, 1, 2, 1, 2, 1, 2]);
    const pair = labels.frames[3]!; // frame 9 against frame 7
    const earlier = new Map(truth.frames[7]!.boxes.map((b) => [b.trackId, b]));
    truth.frames[9]!.boxes.forEach((box, i) => {
      const was = earlier.get(box.trackId);
      if (was) expect(pair.movements[i]).toEqual([expect.closeTo((box.x - was.x) / 2, 1), expect.closeTo((box.y - was.y) / 2, 1)]);
      else expect(pair.movements[i]).toBeNull();
    });
    expect(labels.frames[0]!.movements.every((m) => m !== null && m[0] === 0 && m[1] === 0)).toBe(true);
  });

  it('stores the earlier frame of each pair before the labelled one', async () => {
    const full = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', join(clipDir(), 'clip.mp4'), '-vf', 'scale=640:480:flags=bilinear,format=rgb24,scale=320:240:flags=area', '-frames:v', '10', '-f', 'rawvideo', 'pipe:1']);
    const frameBytes = 320 * 240 * 3;
    const stored = readFileSync(dataset.framesPath);
    // Pair 2 is frame 6 against frame 5, pair 3 is frame 9 against frame 7.
    expect(stored.subarray(4 * frameBytes, 5 * frameBytes).equals(full.output.subarray(5 * frameBytes, 6 * frameBytes))).toBe(true);
    expect(stored.subarray(5 * frameBytes, 6 * frameBytes).equals(full.output.subarray(6 * frameBytes, 7 * frameBytes))).toBe(true);
    expect(stored.subarray(6 * frameBytes, 7 * frameBytes).equals(full.output.subarray(7 * frameBytes, 8 * frameBytes))).toBe(true);
    expect(stored.subarray(7 * frameBytes, 8 * frameBytes).equals(full.output.subarray(9 * frameBytes, 10 * frameBytes))).toBe(true);
  });

  it('stores the 2×2 mean of the RGB frames the agent captures', async () => {
    const full = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', join(clipDir(), 'clip.mp4'), '-vf', 'scale=640:480:flags=bilinear,format=rgb24', '-frames:v', '1', '-f', 'rawvideo', 'pipe:1']);
    const stored = readFileSync(dataset.framesPath).subarray(0, 320 * 240 * 3);
    let worst = 0;
    for (let y = 0; y < 240; y += 7) {
      for (let x = 0; x < 320; x += 5) {
        for (let c = 0; c < 3; c++) {
          const at = (yy: number, xx: number) => full.output[(yy * 640 + xx) * 3 + c]!;
          const mean = (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1)) / 4;
          worst = Math.max(worst, Math.abs(stored[(y * 320 + x) * 3 + c]! - mean));
        }
      }
    }
    expect(worst).toBeLessThanOrEqual(1);
  });

  it('exports a zoom-2 dataset at the frame size into a folder of its own, beside the 320x240 one', async () => {
    const zoomed = await buildDataset({ clips: [clip], cacheDir: dir, inputWidth: 640, inputHeight: 480 });
    expect(zoomed.framesPath).not.toBe(dataset.framesPath);
    expect(statSync(dataset.framesPath).size).toBe(10 * 2 * 320 * 240 * 3);
    expect(statSync(zoomed.framesPath).size).toBe(10 * 2 * 640 * 480 * 3);
    const labels = JSON.parse(readFileSync(zoomed.labelsPath, 'utf8')) as DatasetLabels;
    const truth = JSON.parse(readFileSync(join(clipDir(), 'truth.json'), 'utf8')) as GroundTruth;
    expect(labels.frames[2]!.boxes[0]![0]).toBeCloseTo(truth.frames[6]!.boxes[0]!.x, 1);
    const full = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', join(clipDir(), 'clip.mp4'), '-vf', 'scale=640:480:flags=bilinear,format=rgb24', '-frames:v', '1', '-f', 'rawvideo', 'pipe:1']);
    expect(readFileSync(zoomed.framesPath).subarray(0, 640 * 480 * 3).equals(full.output)).toBe(true);
  });

  it('reuses rendered clips on the next export', async () => {
    const before = statSync(join(clipDir(), 'clip.mp4')).mtimeMs;
    const again = await buildDataset({ clips: [clip], cacheDir: dir, inputWidth: 320, inputHeight: 240 });
    expect(again.count).toBe(10);
    expect(statSync(join(clipDir(), 'clip.mp4')).mtimeMs).toBe(before);
  });
});

describe('train-detector command line', () => {
  const trainDetector = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'train/train-detector.ts', ...args], { cwd: packageDir });

  it('refuses network widths that are not four channel counts, naming the option, before rendering anything', async () => {
    const result = await trainDetector('--out', 'model.onnx', '--widths', '16,16');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--widths must be four channel counts like 16,16,48,64, got "16,16"');
  });

  it('refuses an output stride other than 1 or 2, naming the option, before rendering anything', async () => {
    const result = await trainDetector('--out', 'model.onnx', '--stride', '4');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--stride must be an integer from 1 to 2, got "4"');
  });

  it('refuses a zoom other than 1 or 2, naming the option, before rendering anything', async () => {
    const result = await trainDetector('--out', 'model.onnx', '--zoom', '3');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--zoom must be an integer from 1 to 2, got "3"');
  });

  it.each(['1.5', '-0.2', 'most'])('refuses a slot share of %s, naming the option, before rendering anything', async (value) => {
    const result = await trainDetector('--out', 'model.onnx', `--slot-share=${value}`);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--slot-share must be a number from 0 to 1, got "${value}"`);
  });
});
