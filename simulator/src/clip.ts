import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Mp4Encoder } from './io/encoder.ts';
import { Progress, type ProgressStream } from './io/progress.ts';
import { SceneRenderer } from './render/renderer.ts';
import type { Scenario } from './scenario/scenario.ts';
import { planPopulation } from './scene/population.ts';
import { Timeline } from './scene/timeline.ts';
import { GroundTruthBuilder, type GroundTruth, type TruthIds } from './truth/ground-truth.ts';

/**
 * Changes whenever the same scenario and seed render to other pixels (2: frames handed to ffmpeg blue-first, so
 * converted to yuv420p by another converter; 3: x264 set as a Raspberry Pi 5 camera sets it; 4: two x264
 * threads, which code slightly other bits; 5: turn-back bees placed so that the clip shows them outside the
 * entrance zone before and after their visit, and left out where that does not fit, which moves or removes some
 * of them in scenarios that have them). Caches of rendered clips key on it, so a stale render is not reused.
 */
export const RENDER_REVISION = 5;

export interface RenderClipOptions {
  scenario: Scenario;
  outDir: string;
  ids: TruthIds;
  /** Where progress goes; nothing is reported when absent. */
  progress?: ProgressStream;
  /** x264 preset (default superfast). */
  preset?: string;
}

export interface RenderedClip {
  clipPath: string;
  truthPath: string;
  truth: GroundTruth;
  frames: number;
  seconds: number;
}

/** Renders a scenario to `outDir/clip.mp4` and writes its ground truth to `outDir/truth.json`. */
export async function renderClip(options: RenderClipOptions): Promise<RenderedClip> {
  const { scenario, outDir, ids } = options;
  await mkdir(outDir, { recursive: true });
  const clipPath = join(outDir, 'clip.mp4');
  const truthPath = join(outDir, 'truth.json');
  const startedAt = performance.now();

  const population = planPopulation(scenario);
  const renderer = new SceneRenderer(population);
  const timeline = new Timeline(population);
  const truth = new GroundTruthBuilder(population, ids);
  const { camera } = scenario;
  const encoder = new Mp4Encoder({
    path: clipPath,
    width: camera.width,
    height: camera.height,
    fps: camera.fps,
    crf: scenario.crf,
    preset: options.preset,
    creationTime: new Date(Date.parse(scenario.startTime)).toISOString(),
  });
  const progress = options.progress ? new Progress(`render ${scenario.name}`, population.frameCount, options.progress) : undefined;

  await encoder.start();
  try {
    for (let frame = 0; frame < population.frameCount; frame++) {
      const states = timeline.statesAt(frame);
      truth.observe(timeline.timeOf(frame), states);
      const buffer = await encoder.acquire();
      renderer.render(frame, states, buffer);
      encoder.submit(buffer);
      progress?.update(frame + 1);
    }
    await encoder.finish();
  } catch (error) {
    await encoder.stop();
    throw error;
  }
  const result = truth.finish();
  await writeFile(truthPath, JSON.stringify(result));
  const seconds = (performance.now() - startedAt) / 1000;
  const frames = population.frameCount;
  progress?.finish(`${frames} frames in ${seconds.toFixed(1)} s (${(frames / seconds).toFixed(0)} fps, ${(frames / camera.fps / seconds).toFixed(1)}x real time) -> ${outDir}`);
  return { clipPath, truthPath, truth: result, frames, seconds };
}
