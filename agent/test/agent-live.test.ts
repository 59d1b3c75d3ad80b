import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { FileCamera } from '@hivegate/simulator';
import { describe, expect, it } from 'vitest';
import { FakeCloud } from './helpers/fake-cloud.ts';
import { countsSavedAtStop } from './helpers/saved-at-stop.ts';
import { generateClip, startNetworkCamera, useTwoBeesCamera, twoBeesLavfi } from './helpers/media.ts';

const cloud = new FakeCloud();

const { dir, camera } = useTwoBeesCamera('live', { loop: false, server: cloud });

const agentRoot = join(import.meta.dirname, '..');

/** `hivegate-agent run` on a camera (the motion detector, box `box`) as a child process, its stderr collected. */
function startAgent(source: string, box: string, extraArgs: string[] = []) {
  const stateDir = join(dir.path, `state-${box}`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'run', '--source', source, '--cloud', cloud.url, '--token', 'good-token', '--hive', 'h', '--box', box, '--state-dir', stateDir, '--detector', 'motion', ...extraArgs],
    { cwd: agentRoot, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const agent = {
    stateDir,
    stderr: '',
    /** Waits until stderr holds `text` (or the time is up). */
    async until(text: string, timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!agent.stderr.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    },
    /** SIGTERM, and the exit code. */
    async stop(): Promise<number | null> {
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    },
  };
  child.stderr.on('data', (chunk: Buffer) => (agent.stderr += chunk.toString()));
  return agent;
}

describe('agent on a live source', () => {
  // A live stop keeps the interval still open for the next start (a restart within it once lost the new run's counts):
  // what the agent counted is in the cloud or in that saved interval, and the trajectories go at once.
  it('counts from a network stream and, on SIGTERM, sends what is closed, saves the open interval and exits 0', async () => {
    const agent = startAgent(camera().url, 'b');
    await new Promise((r) => setTimeout(r, 9000)); // one pass of the 6 s stream, then a reconnect
    const code = await agent.stop();
    expect(agent.stderr).toContain('SIGTERM: stopping');
    expect(code).toBe(0);
    const movement = cloud.requests.filter((r) => r.path === '/entrance/v1/movement').flatMap((r) => r.body as { beesIn: number; beesOut: number; timestamp: number }[]);
    const saved = countsSavedAtStop(agent.stderr);
    expect(movement.length > 0 || saved.saved).toBe(true);
    expect(movement.reduce((n, m) => n + m.beesIn, 0) + saved.beesIn).toBeGreaterThanOrEqual(1);
    expect(movement.reduce((n, m) => n + m.beesOut, 0) + saved.beesOut).toBeGreaterThanOrEqual(1);
    // Live frames carry the wall clock: a sent interval is the current minute (or the one just before).
    if (movement.length > 0) expect(Math.abs(movement.at(-1)!.timestamp - Date.now() / 1000)).toBeLessThan(120);
    expect(cloud.requests.some((r) => r.path === '/api/entrance-heatmaps/trajectories')).toBe(true);
  }, 40_000);

  // A camera that stayed away was a log line at every attempt, each with a new ffmpeg address ("[tcp @ 0x55…]"), and
  // nothing said when it came back.
  it('says a camera outage on a doubling scale of attempts, in plain words, and when the camera is back', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const agent = startAgent(`http://127.0.0.1:${port}/stream.ts`, 'away');
    const statusFile = join(agent.stateDir, 'status.json');
    const status = () => (existsSync(statusFile) ? (JSON.parse(readFileSync(statusFile, 'utf8')) as { captureReconnects: number; captureProblem?: string }) : undefined);
    const deadline = Date.now() + 30_000;
    while ((status()?.captureReconnects ?? 0) < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    // Written while no frame comes: it used to hold the last frame's state for as long as the camera was away.
    expect(status()?.captureProblem).toMatch(/^source lost: /);
    const attempts = status()!.captureReconnects;
    expect(attempts).toBeGreaterThanOrEqual(4);
    const back = await startNetworkCamera(join(dir.path, 'two-bees.ts'), { loop: true, port });
    try {
      await agent.until('capture: the source is back');
      expect(await agent.stop()).toBe(0);
    } finally {
      await back.close();
    }
    const failures = Number(/capture: the source is back, after (\d+) failed attempts\n/.exec(agent.stderr)?.[1]);
    expect(failures).toBeGreaterThanOrEqual(attempts);
    const said = [...agent.stderr.matchAll(/capture reconnecting \(attempt (\d+)\): (.*) \(retry in \d+ ms\)/g)];
    expect(said.map((line) => Number(line[1]))).toEqual([1, 2, 4, 8, 16].filter((n) => n <= failures));
    expect(said[0]![2]).toBe(`source lost: tcp: Connection to tcp://127.0.0.1:${port} failed: Connection refused; http://127.0.0.1:${port}/stream.ts: Connection refused`);
    expect(agent.stderr).not.toMatch(/@ 0x/);
    expect(status()?.captureProblem).toBeUndefined();
  }, 60_000);

  it('reads a camera slower than source.fps at its own rate, with nothing repeated, and sets the frame counts for it', async () => {
    // A 15 fps camera with sensor noise (no two of its pictures alike), read at up to the default 30.
    const clip = await generateClip(join(dir.path, 'slow.ts'), { seconds: 6, fps: 15, width: 640, height: 480, lavfi: `${twoBeesLavfi(15)},noise=alls=8:allf=t`, container: 'mpegts' });
    const slowCamera = await startNetworkCamera(clip, { loop: true });
    const agent = startAgent(slowCamera.url, 'slow');
    try {
      await agent.until('source: ');
      await new Promise((r) => setTimeout(r, 4000)); // a status file written with frames in it
    } finally {
      await agent.stop();
      await slowCamera.close();
    }
    expect(agent.stderr).toContain(
      'source: the camera sends 15 fps, fewer than the 30 of source.fps, so its frames are taken as they come, 15 a second, and the settings counted in frames follow that rate: tracker.minHits 2, tracker.maxMissedFrames 10, counting.interactionMinFrames 2',
    );
    // Read at 30, half of its frames would be repeats to skip (and the rest stamped on 30 fps slots).
    const status = JSON.parse(readFileSync(join(agent.stateDir, 'status.json'), 'utf8')) as { framesProcessed: number; framesRepeated: number; readFps: number };
    expect(status.framesProcessed).toBeGreaterThan(30);
    expect(status.framesRepeated).toBe(0);
    expect(status.readFps).toBe(15);
    const shown = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'status', '--state-dir', agent.stateDir], { cwd: agentRoot }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    // Stopped by now: the read rate stays, the frame rate is not shown as if current.
    expect(shown).toMatch(/no current frame rate \(the source read at 15\), \d+ frames, 0 dropped, 0 repeats skipped/);
  }, 60_000);

  it('skips the repeats of a camera that slows down after it started, says what rate it delivers, and follows it', async () => {
    // 3 s at 30 fps, then every other frame only (as a camera that lengthens its exposure when a cloud comes over):
    // ffmpeg found 30 fps when it connected and fills the gaps with repeats.
    const clip = await generateClip(join(dir.path, 'slowing.ts'), { seconds: 14, fps: 30, width: 320, height: 240, lavfi: "testsrc=s=320x240:r=30,noise=alls=8:allf=t,select='lt(t\\,3)+not(mod(n\\,2))'", container: 'mpegts' });
    // Played in real time (this helper's cameras pace by bytes, which a clip of two rates would bend), from when the
    // agent connects: started with the camera, an agent slow to start on a loaded machine joined after the 3 s at 30
    // fps and found a 15 fps camera.
    const slowingCamera = new FileCamera({ file: clip, startWhenWatched: true });
    const agent = startAgent(await slowingCamera.start(), 'slowing', ['--width', '320', '--height', '240']);
    try {
      // The notes come once the first 10 s of frames (300 at 30 fps) are in: 90 new, then new and repeated frames by
      // halves.
      await agent.until('repeated the one before');
      await agent.until('new pictures now come at', 5000);
    } finally {
      await agent.stop();
      await slowingCamera.stop();
    }
    expect(agent.stderr).toMatch(/source: [34][0-9] % of the first 300 frames repeated the one before and were skipped: the camera delivers about (1[5-9]|20)(\.\d)? fps, not the 30 it is read at/);
    expect(agent.stderr).not.toContain('the camera sends');
    // Under 20 new pictures a second over those 10 s: the frame-counted settings follow (at 30: 3, 20 and 3).
    expect(agent.stderr).toMatch(
      /source: new pictures now come at about (1[5-9]|2[01])(\.\d)? a second \(over the last 10 s\), and the settings counted in frames follow: tracker\.minHits 2, tracker\.maxMissedFrames 1[0-4], counting\.interactionMinFrames 2/,
    );
  }, 60_000);
});
