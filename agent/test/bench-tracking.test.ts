import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/media.ts';

const exec = promisify(execFile);
const agentRoot = fileURLToPath(new URL('..', import.meta.url));
const benchTracking = (args: string[]) => exec(process.execPath, ['--import', 'tsx', 'bench/tracking.ts', ...args], { cwd: agentRoot });

describe('bench:tracking --drop-every', () => {
  const cache = tempDir('bench-tracking');
  afterAll(() => cache.cleanup());

  it('hides every Nth frame from the detector and scores the rest', async () => {
    const { stdout } = await benchTracking(['--scenarios', 'busy-afternoon', '--seconds', '1', '--drop-every', '3', '--cache', cache.path]);
    expect(stdout).toMatch(/\| busy-afternoon \|/);
    const [clipDir] = readdirSync(cache.path).filter((name) => name.startsWith('busy-afternoon'));
    const [cached] = readdirSync(join(cache.path, clipDir!)).filter((name) => name.startsWith('detections-'));
    const frames = JSON.parse(readFileSync(join(cache.path, clipDir!, cached!), 'utf8')) as { dropped?: true }[];
    expect(frames).toHaveLength(30);
    expect(frames.map((f, i) => (f.dropped ? i : -1)).filter((i) => i >= 0)).toEqual([2, 5, 8, 11, 14, 17, 20, 23, 26, 29]);
  }, 120_000);

  it('refuses a step that would drop every frame or is not a whole number', async () => {
    for (const bad of ['1', '2.5', 'x']) {
      await expect(benchTracking(['--drop-every', bad, '--cache', cache.path])).rejects.toMatchObject({ stderr: expect.stringContaining(`--drop-every takes a whole number ≥ 2, got "${bad}"`) });
    }
  }, 60_000);
});
