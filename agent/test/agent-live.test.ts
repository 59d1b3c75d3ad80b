import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeCloud } from './helpers/fake-cloud.ts';
import { generateClip, startNetworkCamera, startTwoBeesCamera, tempDir, twoBeesLavfi, type NetworkCamera } from './helpers/media.ts';

const dir = tempDir('live');
const cloud = new FakeCloud();
let camera: NetworkCamera;

beforeAll(async () => {
  camera = await startTwoBeesCamera(dir.path, { loop: false });
  await cloud.start();
}, 60_000);
afterAll(async () => {
  await camera?.close();
  await cloud.stop();
  dir.cleanup();
});

describe('agent on a live source', () => {
  it('counts from a network stream and, on SIGTERM, flushes what it has to the cloud and exits 0', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'run', '--source', camera.url, '--cloud', cloud.url, '--token', 'good-token', '--hive', 'h', '--box', 'b', '--state-dir', join(dir.path, 'state'), '--detector', 'motion'],
      { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise((r) => setTimeout(r, 9000)); // one pass of the 6 s stream, then a reconnect
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr).toContain('SIGTERM: stopping');
    expect(code).toBe(0);
    const movement = cloud.requests.filter((r) => r.path === '/entrance/v1/movement').flatMap((r) => r.body as { beesIn: number; beesOut: number; timestamp: number }[]);
    expect(movement.length).toBeGreaterThanOrEqual(1);
    expect(movement.reduce((n, m) => n + m.beesIn, 0)).toBeGreaterThanOrEqual(1);
    expect(movement.reduce((n, m) => n + m.beesOut, 0)).toBeGreaterThanOrEqual(1);
    // Live frames carry the wall clock: the interval is the current minute (or the one just before).
    expect(Math.abs(movement.at(-1)!.timestamp - Date.now() / 1000)).toBeLessThan(120);
    expect(cloud.requests.some((r) => r.path === '/api/entrance-heatmaps/trajectories')).toBe(true);
  }, 40_000);

  it('skips the repeats of a camera slower than source.fps and says what rate it delivers', async () => {
    // A 15 fps camera with sensor noise (no two of its pictures alike), read at the default 30.
    const clip = await generateClip(join(dir.path, 'slow.ts'), { seconds: 6, fps: 15, width: 640, height: 480, lavfi: `${twoBeesLavfi(15)},noise=alls=8:allf=t`, container: 'mpegts' });
    const slowCamera = await startNetworkCamera(clip, { loop: true });
    const stateDir = join(dir.path, 'state-slow');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'run', '--source', slowCamera.url, '--cloud', cloud.url, '--token', 'good-token', '--hive', 'h', '--box', 'slow', '--state-dir', stateDir, '--detector', 'motion'],
      { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      // The note comes once the first 10 s of frames (300 at 30 fps) are in.
      const deadline = Date.now() + 30_000;
      while (!stderr.includes('source: ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('exit', resolve));
      await slowCamera.close();
    }
    expect(stderr).toMatch(/source: (4[6-9]|5[0-4]) % of the first 300 frames repeated the one before and were skipped: the camera delivers about 1[4-6](\.\d)? fps, not the 30 of source\.fps/);
    const status = JSON.parse(readFileSync(join(stateDir, 'status.json'), 'utf8')) as { framesProcessed: number; framesRepeated: number };
    expect(status.framesRepeated / (status.framesRepeated + status.framesProcessed)).toBeCloseTo(0.5, 1);
  }, 60_000);
});
