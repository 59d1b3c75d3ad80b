import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveFfmpeg } from '../src/capture/ffmpeg-binary.ts';
import { DeviceClient } from '../src/device/device-client.ts';
import { DeviceLoop, type DeviceLoopEvent } from '../src/device/device-loop.ts';
import { LiveStreamer } from '../src/live/live-streamer.ts';
import { FakeGateway } from './helpers/fake-gateway.ts';
import { syntheticCamera } from './helpers/frames.ts';

const camera = { width: 320, height: 240, fps: 15, pixelFormat: 'gray' as const };
let gateway: FakeGateway;
let loop: DeviceLoop | undefined;
let feed: { stop: () => void } | undefined;
let loopEvents: DeviceLoopEvent[];

beforeEach(async () => {
  gateway = new FakeGateway();
  await gateway.start();
  loopEvents = [];
});
afterEach(async () => {
  await loop?.stop(500);
  loop = undefined;
  feed?.stop();
  await gateway.stop();
  expect(gateway.invalidBodies).toEqual([]); // every body the agent sent fits the shared schemas
});

/** The device loop with a real LiveStreamer (real ffmpeg) fed by a synthetic camera. */
function startDevice(options: Partial<ConstructorParameters<typeof DeviceLoop>[0]> = {}, token = gateway.deviceToken): { streamer: LiveStreamer; loop: DeviceLoop } {
  const streamer: LiveStreamer = new LiveStreamer({ ffmpegPath: resolveFfmpeg(), camera, jpegFps: 4, startTimeoutMs: 15_000, onEvent: (e) => device.reportStream(e) });
  feed = syntheticCamera(camera, (frame) => streamer.offer(frame));
  const device: DeviceLoop = new DeviceLoop({
    client: new DeviceClient(gateway.url, token),
    boxId: 'box-1', deviceId: 'pi-test', appVersion: 'hivegate-agent/test', streams: streamer,
    snapshot: () => ({ cameraStatus: 'running', publisherState: streamer.state, lastErrorCode: null, lastErrorMessage: null, status: { fps: 15, outboxPending: 0 } }),
    statusIntervalMs: 300, pollWaitSeconds: 1, backoff: { initialMs: 50, maxMs: 200 },
    onEvent: (e) => loopEvents.push(e),
    ...options,
  });
  loop = device;
  device.start();
  return { streamer, loop: device };
}

describe('device loop against a loopback gateway', () => {
  it('comes online, sends heartbeats, starts and stops a stream on command', async () => {
    const { streamer } = startDevice();
    await gateway.waitFor(() => gateway.events.some((e) => e.eventType === 'DEVICE_ONLINE'), 5000, 'DEVICE_ONLINE');
    expect(gateway.events[0]).toEqual({ boxId: 'box-1', eventType: 'DEVICE_ONLINE', payload: { deviceId: 'pi-test', appVersion: 'hivegate-agent/test' } });
    await gateway.waitFor(() => gateway.statuses.length >= 2, 5000, 'two heartbeats');
    expect(gateway.statuses[0]).toEqual({
      boxId: 'box-1', deviceId: 'pi-test', appVersion: 'hivegate-agent/test', cameraStatus: 'running', publisherState: 'idle',
      lastErrorCode: null, lastErrorMessage: null, status: { fps: 15, outboxPending: 0 },
    });
    expect(gateway.polls[0]).toMatchObject({ boxId: 'box-1', deviceId: 'pi-test', waitSeconds: 1, limit: 10 });

    const start = gateway.startStream('sess-1');
    await gateway.waitFor(() => gateway.eventsOf('sess-1').includes('STREAM_ACTIVE'), 15_000, 'STREAM_ACTIVE');
    expect(gateway.acks[0]).toEqual({ boxId: 'box-1', commandId: start.id, status: 'accepted', payload: { sessionId: 'sess-1', relayProtocol: 'hls', qualityProfile: 'low' } });
    expect(streamer.current).toEqual({ sessionId: 'sess-1', relayProtocol: 'hls' });
    expect(gateway.files.get('sess-1')!.has('index.m3u8')).toBe(true);

    const stop = gateway.queue('STOP_STREAM', 'sess-1', { sessionId: 'sess-1', reason: 'stopped' });
    await gateway.waitFor(() => gateway.eventsOf('sess-1').includes('STREAM_STOPPED'), 10_000, 'STREAM_STOPPED');
    expect(gateway.acks.find((a) => a.commandId === stop.id)).toMatchObject({ status: 'accepted', payload: { sessionId: 'sess-1', relayProtocol: 'hls' } });
    expect(gateway.eventsOf('sess-1')).toEqual(['STREAM_STARTING', 'STREAM_ACTIVE', 'STREAM_STOPPED']);
    expect(streamer.current).toBeUndefined();
    expect(gateway.files.get('sess-1')!.get('index.m3u8')!.toString()).toContain('#EXT-X-ENDLIST');
  }, 40_000);

  it('answers a redelivered START (lost acknowledgement) again without starting a second publisher', async () => {
    gateway.ackFailures = [500, 500, 500]; // every try of the first acknowledgement fails
    startDevice();
    const start = gateway.startStream('sess-2');
    await gateway.waitFor(() => gateway.acks.filter((a) => a.commandId === start.id).length >= 4 && start.acked, 10_000, 'the redelivered command to be acknowledged');
    await gateway.waitFor(() => gateway.eventsOf('sess-2').includes('STREAM_ACTIVE'), 15_000, 'STREAM_ACTIVE');
    const acks = gateway.acks.filter((a) => a.commandId === start.id);
    expect(new Set(acks.map((a) => JSON.stringify(a))).size).toBe(1); // the same answer every time
    expect(gateway.eventsOf('sess-2').filter((e) => e === 'STREAM_STARTING')).toHaveLength(1);
    expect(loopEvents.some((e) => e.type === 'command' && e.repeated)).toBe(true);
  }, 40_000);

  it('ignores a STOP for a session it is not streaming', async () => {
    startDevice();
    const stop = gateway.queue('STOP_STREAM', 'nobody', { sessionId: 'nobody' });
    await gateway.waitFor(() => stop.acked, 5000, 'the ack');
    expect(gateway.acks[0]).toEqual({ boxId: 'box-1', commandId: stop.id, status: 'ignored', payload: { sessionId: 'nobody', reason: 'not streaming session nobody' } });
  });

  it('takes a 404 about one command as final for that request, without holding the loop', async () => {
    startDevice({ unsupportedBackoffMs: 60_000 });
    gateway.ackFailures = [404]; // e.g. the gateway withdrew the command meanwhile
    const first = gateway.queue('STOP_STREAM', 'old', { sessionId: 'old' });
    await gateway.waitFor(() => gateway.acks.length >= 1, 5000, 'the first ack');
    const next = gateway.queue('STOP_STREAM', 'other', { sessionId: 'other' });
    await gateway.waitFor(() => next.acked && first.acked, 5000, 'the next command and the redelivered first one');
    expect(gateway.acks.filter((a) => a.commandId === first.id)).toHaveLength(2); // one 404, no retry of it, then the redelivery
    expect(loopEvents.some((e) => e.type === 'unsupported')).toBe(false);
  });

  it('reports a refused publish token as STREAM_FAILED and frees the slot', async () => {
    const { streamer } = startDevice();
    gateway.startStream('sess-3', { publishToken: 'not-the-token' });
    gateway.publishTokens.set('sess-3', 'the-token');
    await gateway.waitFor(() => gateway.eventsOf('sess-3').includes('STREAM_FAILED'), 15_000, 'STREAM_FAILED');
    const failed = gateway.events.find((e) => e.sessionId === 'sess-3' && e.eventType === 'STREAM_FAILED')!;
    expect(failed.payload).toMatchObject({ errorCode: 'PUBLISH_REFUSED' });
    expect(streamer.current).toBeUndefined();
    expect(streamer.lastError?.code).toBe('PUBLISH_REFUSED');
  }, 30_000);

  it('stops loudly on a 401 and resumes when the credentials change', async () => {
    startDevice({ blockedBackoffMs: 60_000 }, 'revoked-token');
    await gateway.waitFor(() => loopEvents.some((e) => e.type === 'blocked'), 5000, 'blocked');
    const blocked = loopEvents.filter((e) => e.type === 'blocked');
    expect(blocked).toHaveLength(1);
    expect(blocked[0]).toMatchObject({ status: 401, reason: expect.stringContaining('check cloud.token') });
    const seen = gateway.statuses.length + gateway.polls.length;
    await new Promise((r) => setTimeout(r, 800));
    expect(gateway.statuses.length + gateway.polls.length).toBe(seen); // nothing more is sent while blocked
    loop!.updateCredentials(gateway.url, gateway.deviceToken);
    await gateway.waitFor(() => gateway.events.some((e) => e.eventType === 'DEVICE_ONLINE') && gateway.statuses.length > 0, 5000, 'resumed');
  });

  it('backs off on server errors and recovers; backs off long when the cloud has no live gateway', async () => {
    gateway.deviceAnswer = 503;
    startDevice({ unsupportedBackoffMs: 60_000 });
    await gateway.waitFor(() => loopEvents.filter((e) => e.type === 'error').length >= 3, 5000, 'retries');
    gateway.deviceAnswer = undefined;
    await gateway.waitFor(() => gateway.events.some((e) => e.eventType === 'DEVICE_ONLINE'), 5000, 'recovery');
    // The recovery is an event of its own (the agent says it once; it said nothing before).
    await gateway.waitFor(() => loopEvents.some((e) => e.type === 'reconnected'), 5000, 'reconnected');
    const errorsBefore = loopEvents.findIndex((e) => e.type === 'reconnected');
    expect(loopEvents.slice(0, errorsBefore).every((e) => e.type === 'error')).toBe(true);
    gateway.deviceAnswer = 404;
    await gateway.waitFor(() => loopEvents.some((e) => e.type === 'unsupported'), 5000, 'unsupported');
    expect(loopEvents.filter((e) => e.type === 'unsupported')).toHaveLength(1);
  });
});
