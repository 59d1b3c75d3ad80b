import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderClip, type RenderedClip } from '../src/clip.ts';
import { SceneRenderer } from '../src/render/renderer.ts';
import type { Scenario } from '../src/scenario/scenario.ts';
import { findScenario, withOverrides } from '../src/scenario/suite.ts';
import { planPopulation } from '../src/scene/population.ts';
import { Timeline } from '../src/scene/timeline.ts';
import type { GroundTruth } from '../src/truth/ground-truth.ts';
import { probe, run } from './helpers.ts';

// Real ffmpeg, real files: a short render must give a decodable H.264 mp4 and its ground truth.
describe('renderClip', () => {
  let dir: string;
  let clip: RenderedClip;
  const scenario = withOverrides(findScenario('crowded-entrance') as Scenario, { durationSeconds: 2.5 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hivegate-sim-clip-'));
    clip = await renderClip({ scenario, outDir: dir, ids: { hiveId: 'hive-7', boxId: 'box-3' } });
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes an H.264 mp4 with every frame at the scenario size and rate, stamped with the start time', async () => {
    const info = await probe(clip.clipPath);
    expect(info).toMatchObject({ codec: 'h264', width: 640, height: 480, frames: 75, rate: '30/1' });
    expect(info.creationTime).toBe('2024-07-02T12:00:00.000000Z');
  });

  it('decodes to the picture the renderer drew: bees on a board under a wall with a dark slot', async () => {
    // Mean brightness of a few rows, decoded by ffmpeg from the file.
    const decoded = await run('ffmpeg', ['-v', 'error', '-i', clip.clipPath, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1']);
    expect(decoded.code).toBe(0);
    const gray = decoded.output;
    expect(gray.length).toBe(640 * 480);
    const rowMean = (y: number) => gray.subarray(y * 640 + 150, y * 640 + 490).reduce((s, v) => s + v, 0) / 340;
    const slotRow = Math.round(480 * 0.22) + 8;
    expect(rowMean(slotRow)).toBeLessThan(60);
    expect(rowMean(40)).toBeGreaterThan(rowMean(slotRow) + 60);
  });

  it('keeps the colours the renderer drew (its blue-first frames reach the file in the right channel order)', async () => {
    const population = planPopulation(scenario);
    const drawn = new Uint8Array(640 * 480 * 3);
    new SceneRenderer(population).render(0, new Timeline(population).statesAt(0), drawn);
    const decoded = await run('ffmpeg', ['-v', 'error', '-i', clip.clipPath, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1']);
    expect(decoded.code).toBe(0);
    const means = (pixels: Uint8Array, order: readonly [number, number, number]) => {
      const sums = [0, 0, 0];
      for (let i = 0; i < pixels.length; i += 3) for (let c = 0; c < 3; c++) (sums[c] as number) += pixels[i + order[c]!] as number;
      return sums.map((sum) => sum / (pixels.length / 3));
    };
    const [drawnR, drawnG, drawnB] = means(drawn, [2, 1, 0]) as [number, number, number];
    const [fileR, fileG, fileB] = means(decoded.output, [0, 1, 2]) as [number, number, number];
    // The wooden board is clearly warmer than blue, so swapped channels cannot pass.
    expect(drawnR - drawnB).toBeGreaterThan(20);
    for (const [file, truth] of [[fileR, drawnR], [fileG, drawnG], [fileB, drawnB]] as const) expect(Math.abs(file - truth)).toBeLessThan(3);
  });

  it('writes the ground truth beside it', async () => {
    const truth = JSON.parse(await readFile(clip.truthPath, 'utf8')) as GroundTruth;
    expect(truth).toMatchObject({ width: 640, height: 480, fps: 30, frameCount: 75, startTime: Date.parse('2024-07-02T12:00:00Z') / 1000 });
    expect(truth.frames).toHaveLength(75);
    expect(truth.frames.some((f) => f.boxes.length > 5)).toBe(true);
    expect(truth.entranceZone.length).toBeGreaterThanOrEqual(3);
    expect(truth.intervals).toEqual([expect.objectContaining({ hiveId: 'hive-7', boxId: 'box-3', timestamp: truth.startTime + 60 })]);
    expect(truth).toEqual(JSON.parse(JSON.stringify(clip.truth)));
  });
});
