import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, statusFilePath } from '../src/agent.ts';
import { resolveConfig } from '../src/config/config.ts';
import { FakeGateway } from './helpers/fake-gateway.ts';
import { generateClip, startNetworkCamera, tempDir, twoBeesLavfi, type NetworkCamera } from './helpers/media.ts';

const dir = tempDir('agent-pacing');
const gateway = new FakeGateway();
let camera: NetworkCamera;

beforeAll(async () => {
  const clip = await generateClip(join(dir.path, 'bees.ts'), { seconds: 6, fps: 15, width: 640, height: 480, lavfi: twoBeesLavfi(15), container: 'mpegts' });
  camera = await startNetworkCamera(clip, { loop: true });
  await gateway.start();
}, 60_000);
afterAll(async () => {
  await camera?.close();
  await gateway.stop();
  dir.cleanup();
});

describe('agent behind a live camera', () => {
  it('spaces out the whole-frame model instead of only dropping frames, and says so', async () => {
    // A slow CPU cannot be had here, so a fast camera stands in for it: ffmpeg's fps filter makes the loopback stream
    // 240 frames a second, more than the shipped models keep up with on any CPU measured (160 at most).
    const config = resolveConfig({
      file: {
        hiveId: 'hive-1', boxId: 'box-1', deviceId: 'pi-pacing', source: { url: camera.url, fps: 240 },
        cloud: { url: gateway.url, token: gateway.deviceToken },
        live: { statusIntervalSeconds: 1, pollWaitSeconds: 1 },
        // Every frame goes to the models (the stream's repeated frames would be skipped as still).
        detector: { kind: 'onnx', motionGate: false, slot: { wholeEveryWhenBehind: 3 } } as never,
        stateDir: join(dir.path, 'state'),
      },
      env: {},
    });
    expect(config.detector.slot).toMatchObject({ wholeEvery: 1, wholeEveryWhenBehind: 3 });
    let stop: () => void = () => {};
    const logs: string[] = [];
    const exit = runAgent(config, { stopSignal: new Promise<void>((resolve) => (stop = resolve)), log: (m) => logs.push(m) });
    const status = () => (existsSync(statusFilePath(config)) ? (JSON.parse(readFileSync(statusFilePath(config), 'utf8')) as { wholeEvery?: number; framesProcessed: number }) : undefined);
    await gateway.waitFor(() => (status()?.wholeEvery ?? 1) >= 2, 40_000, 'the whole-frame model spaced out');
    // The operator sees it too, in the device's heartbeat.
    await gateway.waitFor(() => ((gateway.statuses.at(-1)?.status as { wholeEvery?: number } | undefined)?.wholeEvery ?? 1) >= 2, 10_000, 'the spacing in a heartbeat');
    stop();
    expect(await exit).toBe(0);
    expect(logs).toContainEqual(expect.stringMatching(/^behind the camera \(.*ms between frames\): the whole-frame model now runs on one frame in 2$/));
    expect(logs.filter((m) => m.startsWith('room to spare'))).toEqual([]);
    expect(status()!.wholeEvery).toBeLessThanOrEqual(3);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'status', '--state-dir', config.stateDir], { cwd: join(import.meta.dirname, '..') });
    expect(stdout).toMatch(/whole frame:\s+one frame in [23] \(spaced out when behind a live camera\)/);
  }, 90_000);
});
