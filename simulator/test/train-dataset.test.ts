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
import { run } from './helpers.ts';

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
    expect(statSync(dataset.framesPath).size).toBe(10 * 320 * 240 * 3);
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

  it('reuses rendered clips on the next export', async () => {
    const before = statSync(join(clipDir(), 'clip.mp4')).mtimeMs;
    const again = await buildDataset({ clips: [clip], cacheDir: dir, inputWidth: 320, inputHeight: 240 });
    expect(again.count).toBe(10);
    expect(statSync(join(clipDir(), 'clip.mp4')).mtimeMs).toBe(before);
  });
});
