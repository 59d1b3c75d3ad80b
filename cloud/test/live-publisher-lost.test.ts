import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { deviceClient, fastLiveConfig, liveClient, type DeviceCommand } from './live-helpers.ts';

/**
 * What the gateway does when the device does not end a session itself: it crashed, restarted, went offline, or
 * accepted a start and never published. Sweeps are run by hand here (the timer is slowed down), and the clock is
 * moved by backdating the stored timestamps, so each check is looked at exactly when the test says.
 */
let t: TestApp;
let boxCounter = 0;
const newBox = () => `lost-box-${++boxCounter}`;

beforeAll(async () => {
  t = await buildTestApp({ live: fastLiveConfig({ sweepIntervalMs: 60_000, keepaliveTimeoutSeconds: 600 }) });
});
afterAll(() => t.close());

const db = () => t.app.ctx.db;
const live = () => t.app.ctx.live;

async function owner() {
  const user = await createUser(t.app);
  return { ...user, device: deviceClient(t.app, user.auth), web: liveClient(t.app, user.token) };
}

/** A session the device took up: START_STREAM polled and acknowledged, then STREAM_ACTIVE reported. */
async function activeSession() {
  const o = await owner();
  const box = newBox();
  await o.device.status(box);
  const session = await o.web.start(box);
  const [start] = await o.device.poll(box);
  await o.device.ack(box, start!.id);
  await o.device.event(box, 'STREAM_ACTIVE', session.id);
  return { ...o, box, session, start: start! };
}

/** Moves the session's past back by `seconds`: its START_STREAM hand-over, its move to ACTIVE and its media. */
async function age(sessionId: string, seconds: number) {
  await db().query(
    `UPDATE live_commands SET delivered_at = delivered_at - make_interval(secs => $2), acked_at = acked_at - make_interval(secs => $2) WHERE session_id = $1`,
    [sessionId, seconds],
  );
  await db().query(
    `UPDATE live_sessions SET active_at = active_at - make_interval(secs => $2), last_playlist_at = last_playlist_at - make_interval(secs => $2),
            last_frame_at = last_frame_at - make_interval(secs => $2) WHERE id = $1`,
    [sessionId, seconds],
  );
}

const sessionOf = async (ownerId: number, id: string) => (await live().findSession(ownerId, id))!;
const stopsFor = (commands: DeviceCommand[], sessionId: string) => commands.filter((c) => c.commandType === 'STOP_STREAM' && c.sessionId === sessionId);

function jpeg(): Buffer {
  const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=1', '-frames:v', '1', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1']);
  if (result.status !== 0) throw new Error(`ffmpeg failed: ${result.stderr.toString()}`);
  return result.stdout;
}

describe('a publisher that is gone', () => {
  // After an agent crash (kill -9) the session stayed ACTIVE for good on a frozen stream.
  it('fails an ACTIVE session with no media for LIVE_PUBLISHER_SILENCE_SECONDS as PUBLISHER_LOST and tells the device to stop', async () => {
    const { user, device, web, box, session } = await activeSession();
    const silence = t.config.live.publisherSilenceSeconds;
    await age(session.id, silence - 5);
    await live().sweepOnce();
    expect((await sessionOf(user.id, session.id)).status).toBe('ACTIVE');
    await age(session.id, 10);
    await live().sweepOnce();
    const failed = await sessionOf(user.id, session.id);
    expect(failed).toMatchObject({ status: 'FAILED', lastErrorCode: 'PUBLISHER_LOST' });
    expect(failed.lastErrorMessage).toMatch(new RegExp(`no video reached the gateway for ${silence} s`));
    expect(await web.read(box)).toBeNull();
    expect(stopsFor(await device.poll(box), session.id)).toMatchObject([{ payload: { sessionId: session.id, reason: 'failed' } }]);
  });

  it('counts every JPEG frame as a sign of life: a session publishing frames stays ACTIVE', async () => {
    const o = await owner();
    const box = newBox();
    await o.device.status(box);
    const session = await t.app.ctx.live.startSession(o.user.id, box, { qualityProfile: 'medium', recordingMode: 'none', relayProtocol: 'http-jpeg-push' });
    const [start] = await o.device.poll(box);
    await o.device.ack(box, start!.id);
    const payload = start!.payload as { publisherUrl: string; publishToken: string };
    const frame = () =>
      t.app.inject({ method: 'POST', url: new URL(payload.publisherUrl).pathname, headers: { 'content-type': 'image/jpeg', 'x-publish-token': payload.publishToken }, payload: jpeg() });
    expect((await frame()).statusCode).toBe(200);
    await age(session.id, t.config.live.publisherSilenceSeconds + 5);
    expect((await frame()).statusCode).toBe(200);
    await live().sweepOnce();
    expect((await sessionOf(o.user.id, session.id)).status).toBe('ACTIVE');
    // The existing observer's periodic status says "idle" even while it streams: fresh frames outweigh it.
    await o.device.status(box, { publisherState: 'idle' });
    expect((await sessionOf(o.user.id, session.id)).status).toBe('ACTIVE');
  });

  // The restarted agent's heartbeats said publisherState "idle" and the session still stayed ACTIVE.
  it('ends an ACTIVE session with silent media at once when the device heartbeat says it runs no stream (restarted agent)', async () => {
    const { user, device, box, session } = await activeSession();
    await age(session.id, 60);
    await device.status(box, { publisherState: 'idle' });
    const failed = await sessionOf(user.id, session.id);
    expect(failed).toMatchObject({ status: 'FAILED', lastErrorCode: 'PUBLISHER_LOST' });
    expect(failed.lastErrorMessage).toMatch(/publisherState "idle"/);
  });

  it('does not believe an "idle" heartbeat sent just as the device took the session up (it may predate the start)', async () => {
    const { user, device, box, session } = await activeSession();
    await device.status(box, { publisherState: 'idle' });
    await device.poll(box, { publisherState: 'idle' });
    expect((await sessionOf(user.id, session.id)).status).toBe('ACTIVE');
    // A device that says it streams keeps its session whatever the age.
    await age(session.id, 60);
    await device.status(box, { publisherState: 'active' });
    expect((await sessionOf(user.id, session.id)).status).toBe('ACTIVE');
  });

  // Box.device.online went false while the session stayed ACTIVE.
  it('fails a STARTING or ACTIVE session whose device went offline', async () => {
    const { user, session, box } = await activeSession();
    await db().query(`UPDATE live_devices SET last_seen_at = now() - make_interval(secs => $2) WHERE owner_id = $1 AND box_id = $3`, [user.id, t.config.live.deviceOnlineSeconds + 1, box]);
    await live().sweepOnce();
    const failed = await sessionOf(user.id, session.id);
    expect(failed).toMatchObject({ status: 'FAILED', lastErrorCode: 'PUBLISHER_LOST' });
    expect(failed.lastErrorMessage).toMatch(/went offline/);
  });
});

describe('a start that never publishes', () => {
  // A session whose device acked START "accepted" and never published stayed STARTING with no time limit.
  it('fails a STARTING session after LIVE_START_TIMEOUT_SECONDS as START_TIMEOUT and tells the device to stop', async () => {
    const { user, device, web } = await owner();
    const boxId = newBox();
    await device.status(boxId);
    const session = await web.start(boxId);
    const [start] = await device.poll(boxId);
    await device.ack(boxId, start!.id);
    const timeout = t.config.live.startTimeoutSeconds;
    await age(session.id, timeout - 5);
    await live().sweepOnce();
    expect((await sessionOf(user.id, session.id)).status).toBe('STARTING');
    await age(session.id, 10);
    await live().sweepOnce();
    const failed = await sessionOf(user.id, session.id);
    expect(failed).toMatchObject({ status: 'FAILED', lastErrorCode: 'START_TIMEOUT' });
    expect(failed.lastErrorMessage).toBe(`the camera accepted the start but no video arrived within ${timeout} s`);
    expect(stopsFor(await device.poll(boxId), session.id)).toMatchObject([{ payload: { sessionId: session.id, reason: 'failed' } }]);
  });
});
