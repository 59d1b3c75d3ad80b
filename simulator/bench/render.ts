/**
 * Rendering speed. Prints frames per second and the multiple of real time for:
 *   - the renderer alone (one core: scene, rasteriser, sensor noise, ground truth),
 *   - the whole `sim render` pipeline (renderer + ffmpeg H.264 encoding + truth.json),
 *   - the baseline measured in the same run: the same encoder (ffmpeg, same settings, same transport) fed the
 *     same number of flat frames, i.e. the cost of encoding alone with nothing to draw.
 * Usage: pnpm bench:render [--scenario NAME] [--seconds S]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { renderClip } from '../src/clip.ts';
import { Mp4Encoder } from '../src/io/encoder.ts';
import { SceneRenderer } from '../src/render/renderer.ts';
import { findScenario, withOverrides } from '../src/scenario/suite.ts';
import { planPopulation } from '../src/scene/population.ts';
import { Timeline } from '../src/scene/timeline.ts';
import { GroundTruthBuilder } from '../src/truth/ground-truth.ts';

const { values } = parseArgs({
  // `pnpm bench:render -- --scenario dusk` hands the separator on; it separates nothing here.
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: { scenario: { type: 'string', default: 'busy-afternoon' }, seconds: { type: 'string', default: '30' } },
});
const base = findScenario(values.scenario);
if (!base) throw new Error(`unknown scenario ${values.scenario}`);
const scenario = withOverrides(base, { durationSeconds: Number(values.seconds) });
const { width, height, fps } = scenario.camera;
const ids = { hiveId: 'bench-hive', boxId: 'bench-box' };

function report(label: string, frames: number, seconds: number): number {
  const rate = frames / seconds;
  console.log(`${label.padEnd(34)} ${rate.toFixed(0).padStart(6)} frames/s  ${(rate / fps).toFixed(1).padStart(6)}x real time  (${frames} frames in ${seconds.toFixed(2)} s)`);
  return rate;
}

async function rendererOnly(): Promise<number> {
  const started = performance.now();
  const population = planPopulation(scenario);
  const renderer = new SceneRenderer(population);
  const timeline = new Timeline(population);
  const truth = new GroundTruthBuilder(population, ids);
  const out = new Uint8Array(renderer.frameBytes);
  const setup = performance.now();
  for (let frame = 0; frame < population.frameCount; frame++) {
    const states = timeline.statesAt(frame);
    truth.observe(timeline.timeOf(frame), states);
    renderer.render(frame, states, out);
  }
  truth.finish();
  const done = performance.now();
  console.log(`renderer setup (plan, board, noise table): ${(setup - started).toFixed(0)} ms; then ${((done - setup) / population.frameCount).toFixed(2)} ms a frame (bee sprites are drawn on first use)`);
  return report('renderer alone (one core)', population.frameCount, (done - started) / 1000);
}

async function pipeline(dir: string): Promise<number> {
  const result = await renderClip({ scenario, outDir: join(dir, 'clip'), ids });
  return report('sim render (render + encode)', result.frames, result.seconds);
}

async function flatBaseline(dir: string, frames: number): Promise<number> {
  const started = performance.now();
  const encoder = new Mp4Encoder({ path: join(dir, 'flat.mp4'), width, height, fps, crf: scenario.crf, creationTime: new Date().toISOString() });
  await encoder.start();
  try {
    for (let i = 0; i < frames; i++) {
      const buffer = await encoder.acquire();
      buffer.fill(128);
      encoder.submit(buffer);
    }
    await encoder.finish();
  } catch (error) {
    await encoder.stop();
    throw error;
  }
  return report('baseline: encoder on flat frames', frames, (performance.now() - started) / 1000);
}

const dir = await mkdtemp(join(tmpdir(), 'hivegate-render-bench-'));
try {
  console.log(`scenario ${scenario.name}: ${width}x${height} @ ${fps} fps, ${scenario.durationSeconds} s`);
  const frames = Math.round(scenario.durationSeconds * fps);
  const alone = await rendererOnly();
  const full = await pipeline(dir);
  const baseline = await flatBaseline(dir, frames);
  console.log(`renderer alone: ${(alone / fps).toFixed(1)}x real time (goal: at least 10x)`);
  console.log(`sim render vs flat-frame encoding baseline: ${(full / baseline).toFixed(2)} (1.00 = as fast as encoding nothing)`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
