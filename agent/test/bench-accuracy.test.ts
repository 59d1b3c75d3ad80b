import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/media.ts';

const exec = promisify(execFile);
const agentRoot = fileURLToPath(new URL('..', import.meta.url));
const benchAccuracy = (args: string[]) => exec(process.execPath, ['--import', 'tsx', 'bench/accuracy.ts', ...args], { cwd: agentRoot });

describe('bench:accuracy --fps', () => {
  const cache = tempDir('bench-accuracy');
  afterAll(() => cache.cleanup());

  it('reads a 25 fps clip at 15 fps and scores each frame against the clip frame it shows', async () => {
    const json = join(cache.path, 'result.json');
    const { stdout } = await benchAccuracy(['--scenarios', 'heldout-hd-fanning', '--seconds', '5', '--detectors', 'onnx', '--fps', '15', '--cache', cache.path, '--json', json]);
    expect(stdout).toContain('read at 15 fps');
    const { results } = JSON.parse(readFileSync(json, 'utf8')) as { results: { frames: number; mot: { mota: number; idf1: number }; intervals: { fields: Record<string, { meanAbsError: number; meanTruth: number }> } }[] };
    expect(results).toHaveLength(1);
    expect(results[0]!.frames).toBe(75);
    // Scored against the wrong clip frames (frame k taken for clip frame k instead of about 5k/3), the tracks would
    // drift from the true bees within a second and MOTA would fall far below this.
    expect(results[0]!.mot.mota).toBeGreaterThan(0.8);
    expect(results[0]!.mot.idf1).toBeGreaterThan(0.8);
  }, 180_000);

  it('reads a 25 fps clip at 30 fps as at its own rate: repeats skipped, each frame at its clip time', async () => {
    type Result = { frames: number; mot: object; intervals: object; agentRecords: object[] };
    const run = async (fps: string[]) => {
      const json = join(cache.path, `result${fps.join('').replace(/\W/g, '')}.json`);
      await benchAccuracy(['--scenarios', 'heldout-hd-fanning', '--seconds', '5', '--detectors', 'onnx', ...fps, '--cache', cache.path, '--json', json]);
      return (JSON.parse(readFileSync(json, 'utf8')) as { results: Result[] }).results[0]!;
    };
    // The frame-counted defaults follow the rate new pictures come at: 17 frames lost at 25 fps, read at 25 or at 30.
    const own = await run([]);
    const at30 = await run(['--fps', '30']);
    expect(own.frames).toBe(125);
    const figures = (r: Result) => ({ frames: r.frames, mot: r.mot, intervals: r.intervals, records: r.agentRecords });
    // Speeds are rounded in the agent's units (px per 1/30 s) before they are put in the clip's: equal within 0.005.
    const within = (value: unknown): unknown =>
      typeof value === 'number' ? expect.closeTo(value, 2) : Array.isArray(value) ? value.map(within) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, within(v)])) : value;
    // Tracking the repeats (one frame in six) or stamping frames with their 33 ms slots changed every figure here.
    expect(figures(at30)).toEqual(within(figures(own)));
  }, 180_000);

  it('refuses a rate that is not a positive number up to 240', async () => {
    await expect(benchAccuracy(['--fps=0', '--cache', cache.path])).rejects.toMatchObject({ stderr: expect.stringContaining('--fps must be a number above 0 and at most 240, got "0"') });
  }, 60_000);
});
