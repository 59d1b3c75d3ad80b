import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgent } from '../src/agent.ts';
import { resolveConfig } from '../src/config/config.ts';
import { FakeGateway } from './helpers/fake-gateway.ts';
import { countsSavedAtStop } from './helpers/saved-at-stop.ts';
import { generateClip, startNetworkCamera, useTwoBeesCamera, twoBeesLavfi } from './helpers/media.ts';

const gateway = new FakeGateway();

const { dir, camera } = useTwoBeesCamera('agent-stream', { loop: true, server: gateway });

const framesProcessed = () => Number((gateway.statuses.at(-1)?.status as { framesProcessed?: number } | undefined)?.framesProcessed ?? 0);

describe('agent streaming from the camera it counts with', () => {
  it('streams on START_STREAM and stops on STOP_STREAM while frames keep reaching the detector', async () => {
    const config = resolveConfig({
      file: {
        hiveId: 'hive-1', boxId: 'box-1', deviceId: 'pi-e2e', source: { url: camera().url },
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
    // The local status file (read by `status`) did not show a stream at all.
    const localStatus = () => JSON.parse(readFileSync(join(dir.path, 'state', 'status.json'), 'utf8')) as { liveStream?: { sessionId: string; state: string } };
    await gateway.waitFor(() => localStatus().liveStream?.state === 'active', 10_000, 'the stream in the status file');
    expect(localStatus().liveStream).toMatchObject({ sessionId: 'e2e', relayProtocol: 'hls' });
    const playlist = gateway.files.get('e2e')!.get('index.m3u8')!.toString();
    expect(playlist).toMatch(/index\d+\.ts/);

    gateway.queue('STOP_STREAM', 'e2e', { sessionId: 'e2e', reason: 'stopped' });
    await gateway.waitFor(() => gateway.eventsOf('e2e').includes('STREAM_STOPPED'), 15_000, 'STREAM_STOPPED');
    const framesAtStop = framesProcessed();
    await gateway.waitFor(() => framesProcessed() > framesAtStop + 15 && gateway.statuses.at(-1)!.publisherState === 'idle', 10_000, 'counting after the stream');
    await gateway.waitFor(() => localStatus().liveStream === undefined, 10_000, 'no stream in the status file');

    stop();
    expect(await exit).toBe(0);
    expect(gateway.eventsOf('e2e')).toEqual(['STREAM_STARTING', 'STREAM_ACTIVE', 'STREAM_STOPPED']);
    expect(gateway.invalidBodies).toEqual([]); // heartbeats with real diagnostics fit the shared schemas
    const movement = gateway.ingested.filter((r) => r.path === '/entrance/v1/movement').flatMap((r) => r.body as { beesIn: number; beesOut: number }[]);
    // A live stop keeps the intervals still open for the next start: counted is what was sent and what was saved.
    const saved = countsSavedAtStop(logs);
    expect(movement.reduce((sum, m) => sum + m.beesIn + m.beesOut, 0) + saved.beesIn + saved.beesOut).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it("streams a camera slower than source.fps at the camera's own rate", async () => {
    const clip = await generateClip(join(dir.path, 'slow.ts'), { seconds: 6, fps: 15, width: 640, height: 480, lavfi: `${twoBeesLavfi(15)},noise=alls=8:allf=t`, container: 'mpegts' });
    const slowCamera = await startNetworkCamera(clip, { loop: true });
    const config = resolveConfig({
      file: {
        hiveId: 'hive-1', boxId: 'box-slow', deviceId: 'pi-slow', source: { url: slowCamera.url },
        cloud: { url: gateway.url, token: gateway.deviceToken },
        live: { statusIntervalSeconds: 1, pollWaitSeconds: 1 },
        detector: { kind: 'motion' },
        stateDir: join(dir.path, 'state-slow'),
      },
      env: {},
    });
    const statusesBefore = gateway.statuses.length;
    let stop: () => void = () => {};
    const exit = runAgent(config, { stopSignal: new Promise<void>((resolve) => (stop = resolve)), log: () => {} });
    try {
      await gateway.waitFor(() => gateway.statuses.length > statusesBefore && framesProcessed() > 15, 20_000, 'the agent counting');
      // The high profile keeps the camera's rate: 15 here, not the 30 of source.fps (which would repeat every frame).
      gateway.startStream('slow', { qualityProfile: 'high' });
      await gateway.waitFor(() => gateway.eventsOf('slow').includes('STREAM_STARTING'), 20_000, 'STREAM_STARTING');
      expect(gateway.events.find((e) => e.sessionId === 'slow' && e.eventType === 'STREAM_STARTING')?.payload).toMatchObject({ qualityProfile: 'high', width: 640, height: 480, fps: 15 });
    } finally {
      stop();
      await exit;
      await slowCamera.close();
    }
  }, 60_000);
});
