import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { fastLiveConfig, type DeviceCommand } from './live-helpers.ts';

/**
 * The existing entrance observer's and sensor scale's REST bodies, exactly as those devices build them (Python
 * `None` as null, ids as strings, zone-less `isoformat()` times), against the cloud.
 */
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ live: fastLiveConfig({ keepaliveTimeoutSeconds: 30 }), heatmaps: { grid: { cols: 160, rows: 120 }, renderDebounceSeconds: 60 } });
});
afterAll(() => t.close());

function device(token: string) {
  return (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
}

/** The observer's status body: every field present, the unset ones null. */
const statusBody = (boxId: string, override: Record<string, unknown> = {}) => ({
  boxId,
  deviceId: 'entrance-observer',
  appVersion: 'dev',
  cameraStatus: 'ok',
  publisherState: 'idle',
  lastErrorCode: null,
  lastErrorMessage: null,
  status: {},
  ...override,
});

async function startedSession(token: string, boxId: string) {
  const post = device(token);
  expect((await post('/api/entrance-live/device/status', statusBody(boxId))).json()).toMatchObject({ message: 'OK', pendingCommands: 0 });
  const started = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { token },
    payload: { query: 'mutation ($boxId: ID!) { startEntranceLiveStream(boxId: $boxId) { id status } }', variables: { boxId } },
  });
  const session = (started.json() as { data: { startEntranceLiveStream: { id: string; status: string } } }).data.startEntranceLiveStream;
  const poll = await post('/api/entrance-live/device/poll', { ...statusBody(boxId), limit: 10 });
  const [command] = (poll.json() as { commands: DeviceCommand[] }).commands;
  return { session, command: command!, post };
}

describe('entrance observer live calls', () => {
  it('DEVICE_ONLINE with a null sessionId records presence and moves nothing', async () => {
    const { token } = await createUser(t.app);
    const answer = await device(token)('/api/entrance-live/device/event', { boxId: '394', sessionId: null, eventType: 'DEVICE_ONLINE', payload: { cameraStatus: 'ok', publisherState: 'idle' } });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ message: 'OK', sessionId: null, sessionStatus: null, applied: false });
  });

  it('command-ack "accepted" with {sessionId, relayProtocol} moves the session on; a repeat is answered as already acknowledged', async () => {
    const { token } = await createUser(t.app);
    const { session, command, post } = await startedSession(token, '394');
    expect(command).toMatchObject({ sessionId: session.id, commandType: 'START_STREAM' });
    const ack = { boxId: '394', commandId: command.id, status: 'accepted', payload: { sessionId: session.id, relayProtocol: command.payload.relayProtocol } };
    expect((await post('/api/entrance-live/device/command-ack', ack)).json()).toEqual({ message: 'OK', commandId: command.id, alreadyAcknowledged: false, sessionStatus: 'STARTING' });
    expect((await post('/api/entrance-live/device/command-ack', ack)).json()).toEqual({ message: 'OK', commandId: command.id, alreadyAcknowledged: true, sessionStatus: 'STARTING' });
    const unknown = await post('/api/entrance-live/device/command-ack', { ...ack, commandId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'no command "00000000-0000-4000-8000-000000000000" for box "394"' });

    // STOP_STREAM is acked with {sessionId} only, then STREAM_STOPPED carries a reason.
    await t.app.inject({ method: 'POST', url: '/graphql', headers: { token }, payload: { query: 'mutation ($id: ID!) { stopEntranceLiveStream(sessionId: $id) }', variables: { id: session.id } } });
    const [stop] = ((await post('/api/entrance-live/device/poll', { ...statusBody('394'), limit: 10 })).json() as { commands: DeviceCommand[] }).commands;
    expect(stop).toMatchObject({ commandType: 'STOP_STREAM', payload: { sessionId: session.id, reason: 'stopped' } });
    expect((await post('/api/entrance-live/device/command-ack', { boxId: '394', commandId: stop!.id, status: 'accepted', payload: { sessionId: session.id } })).statusCode).toBe(200);
    const stopped = await post('/api/entrance-live/device/event', { boxId: '394', sessionId: session.id, eventType: 'STREAM_STOPPED', payload: { cameraStatus: 'ok', publisherState: 'idle', reason: 'commanded-stop' } });
    expect(stopped.json()).toEqual({ message: 'OK', sessionId: session.id, sessionStatus: 'STOPPED', applied: true });
  });

  it('command-ack "ignored" with {sessionId, reason} fails the session, keeping the reason for the browser', async () => {
    const { token } = await createUser(t.app);
    const { session, command, post } = await startedSession(token, '396');
    const ack = await post('/api/entrance-live/device/command-ack', { boxId: '396', commandId: command.id, status: 'ignored', payload: { sessionId: session.id, reason: 'camera busy recording' } });
    expect(ack.json()).toEqual({ message: 'OK', commandId: command.id, alreadyAcknowledged: false, sessionStatus: 'FAILED' });
    expect(await t.app.ctx.live.sessions.findById(session.id)).toMatchObject({ status: 'FAILED', lastErrorCode: 'START_IGNORED', lastErrorMessage: 'camera busy recording' });
  });

  it('STREAM_FAILED takes the error text from `message`, as the observer names it', async () => {
    const { token } = await createUser(t.app);
    const { session, post } = await startedSession(token, '397');
    const failed = await post('/api/entrance-live/device/event', {
      boxId: '397',
      sessionId: session.id,
      eventType: 'STREAM_FAILED',
      payload: { cameraStatus: 'error', publisherState: 'error', errorCode: 'CAMERA_UNAVAILABLE', message: 'no frames from /dev/video0' },
    });
    expect(failed.json()).toMatchObject({ sessionStatus: 'FAILED', applied: true });
    expect(await t.app.ctx.live.sessions.findById(session.id)).toMatchObject({ lastErrorCode: 'CAMERA_UNAVAILABLE', lastErrorMessage: 'no frames from /dev/video0' });
  });
});

describe('entrance observer telemetry', () => {
  const trajectories = (timestamp: unknown) => ({ boxId: '394', timestamp, frameDimensions: { height: 480, width: 640 }, trackHistory: { '3': [[10, 20], [12, 25]] } });

  it.each([
    ['a zone-less isoformat() string with microseconds', '2026-05-01T10:15:30.123456'],
    ['an ISO string with a zone', '2026-05-01T10:15:30Z'],
    ['Unix seconds', 1_777_630_530],
  ])('takes trajectory uploads timed with %s', async (_name, timestamp) => {
    const { token } = await createUser(t.app);
    const answer = await device(token)('/api/entrance-heatmaps/trajectories', trajectories(timestamp));
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ message: 'OK', trajectories: 1, points: 2, duplicate: false });
  });

  it('refuses a timestamp that is no date, naming the field', async () => {
    const { token } = await createUser(t.app);
    const answer = await device(token)('/api/entrance-heatmaps/trajectories', trajectories('2026-02-30T10:00:00'));
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toEqual({ error: 'timestamp "2026-02-30T10:00:00" is not a valid date and time' });
  });

  it('takes the observer\u2019s movement counts without a timestamp and the scale\u2019s temperature', async () => {
    const { token } = await createUser(t.app);
    const post = device(token);
    const movement = { boxId: '394', hiveId: '33', beesIn: 12, beesOut: 9, netFlow: 3, avgSpeed: 3.8, p95Speed: 7.1, stationaryBees: 2, detectedBees: 31, beeInteractions: 4 };
    expect((await post('/entrance/v1/movement', movement)).json()).toEqual({ message: 'OK' });
    expect((await post('/iot/v1/metrics', { hiveId: '33', fields: { temperatureCelsius: 21.5 } })).json()).toEqual({ message: 'OK' });
  });
});
