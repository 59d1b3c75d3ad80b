import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, statusFilePath } from '../src/agent.ts';
import { resolveConfig } from '../src/config/config.ts';
import { FakeGateway } from './helpers/fake-gateway.ts';
import { startTwoBeesCamera, tempDir, type NetworkCamera } from './helpers/media.ts';

const dir = tempDir('agent-camera');
const gateway = new FakeGateway();
let camera: NetworkCamera;

beforeAll(async () => {
  camera = await startTwoBeesCamera(dir.path, { loop: true });
  await gateway.start();
}, 60_000);
afterAll(async () => {
  await camera?.close();
  await gateway.stop();
  dir.cleanup();
});

const framesProcessed = () => Number((gateway.statuses.at(-1)?.status as { framesProcessed?: number } | undefined)?.framesProcessed ?? 0);

describe('agent streaming from the camera it counts with', () => {
  it('streams on START_STREAM and stops on STOP_STREAM while frames keep reaching the detector', async () => {
    const config = resolveConfig({
      file: {
        hiveId: 'hive-1', boxId: 'box-1', deviceId: 'pi-e2e', source: { url: camera.url },
        cloud: { url: gateway.url, token: gateway.deviceToken },
        live: { statusIntervalSeconds: 1, pollWaitSeconds: 1 },
        counting: { intervalSeconds: 5 },
        // The clip's bees are drawn rectangles: the motion detector counts them, the bee model rightly does not.
        detector: { kind: 'motion' },
        stateDir: join(dir.path, 'state'),
      },
      env: {},
    });
    let stop: () => void = () => {};
    const logs: string[] = [];
    const exit = runAgent(config, { stopSignal: new Promise<void>((resolve) => (stop = resolve)), log: (m) => logs.push(m) });

    await gateway.waitFor(() => gateway.events.some((e) => e.eventType === 'DEVICE_ONLINE') && framesProcessed() > 15, 20_000, 'the agent online and counting');
    const start = gateway.startStream('e2e', { qualityProfile: 'medium' });
    await gateway.waitFor(() => gateway.eventsOf('e2e').includes('STREAM_ACTIVE'), 20_000, 'STREAM_ACTIVE');
    expect(gateway.acks.find((a) => a.commandId === start.id)).toMatchObject({ status: 'accepted' });
    const framesAtActive = framesProcessed();
    await new Promise((r) => setTimeout(r, 3000));
    const streaming = gateway.statuses.at(-1)!;
    expect(streaming.publisherState).toBe('active');
    expect(framesProcessed() - framesAtActive).toBeGreaterThan(20); // counting goes on while streaming
    expect(streaming.status).toMatchObject({ stream: { sessionId: 'e2e', relayProtocol: 'hls', state: 'active' } });
    const playlist = gateway.files.get('e2e')!.get('index.m3u8')!.toString();
    expect(playlist).toMatch(/index\d+\.ts/);

    gateway.queue('STOP_STREAM', 'e2e', { sessionId: 'e2e', reason: 'stopped' });
    await gateway.waitFor(() => gateway.eventsOf('e2e').includes('STREAM_STOPPED'), 15_000, 'STREAM_STOPPED');
    const framesAtStop = framesProcessed();
    await gateway.waitFor(() => framesProcessed() > framesAtStop + 15 && gateway.statuses.at(-1)!.publisherState === 'idle', 10_000, 'counting after the stream');

    stop();
    expect(await exit).toBe(0);
    expect(gateway.eventsOf('e2e')).toEqual(['STREAM_STARTING', 'STREAM_ACTIVE', 'STREAM_STOPPED']);
    expect(gateway.invalidBodies).toEqual([]); // heartbeats with real diagnostics fit the shared schemas
    const movement = gateway.ingested.filter((r) => r.path === '/entrance/v1/movement').flatMap((r) => r.body as { beesIn: number; beesOut: number }[]);
    expect(movement.reduce((sum, m) => sum + m.beesIn + m.beesOut, 0)).toBeGreaterThanOrEqual(2);
  }, 90_000);
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
        stateDir: join(dir.path, 'paced-state'),
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
    expect(stdout).toMatch(/whole frame:\s+one frame in [23] \(paced to the live camera\)/);
  }, 90_000);
});
