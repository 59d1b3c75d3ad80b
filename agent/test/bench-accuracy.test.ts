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

  it('refuses a rate that is not a positive number up to 240', async () => {
    await expect(benchAccuracy(['--fps=0', '--cache', cache.path])).rejects.toMatchObject({ stderr: expect.stringContaining('--fps must be a number above 0 and at most 240, got "0"') });
  }, 60_000);
});
