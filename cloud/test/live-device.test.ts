import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, graphql, type TestApp } from './helper.ts';
import { deviceClient, eventually, fastLiveConfig, liveClient } from './live-helpers.ts';

let t: TestApp;
let boxCounter = 0;
const newBox = () => `box-${++boxCounter}`;

beforeAll(async () => {
  t = await buildTestApp({ live: fastLiveConfig() });
});
afterAll(() => t.close());

async function owner() {
  const user = await createUser(t.app);
  return { ...user, device: deviceClient(t.app, user.auth), web: liveClient(t.app, user.token) };
}

const statusOf = async (ownerId: number, sessionId: string) => (await t.app.ctx.live.findSession(ownerId, sessionId))?.status;

describe('device endpoints: validation and auth', () => {
  it.each([
    ['status', {}, 'boxId is required'],
    ['status', { boxId: 'b', colour: 'red' }, 'colour is not an allowed property'],
    ['status', { boxId: true }, 'boxId must be a string or an integer'],
    ['status', { boxId: 'b', lastErrorCode: 5 }, 'lastErrorCode must be a string or null'],
    ['poll', { boxId: 'b', limit: 0 }, 'limit must be >= 1'],
    ['poll', { boxId: 'b', limit: 51 }, 'limit must be <= 50'],
    ['poll', { boxId: 'b', waitSeconds: 26 }, 'waitSeconds must be <= 25'],
    ['command-ack', { boxId: 'b', status: 'accepted' }, 'commandId is required'],
    ['command-ack', { boxId: 'b', commandId: 'x', status: '' }, 'status must not be empty'],
    ['event', { boxId: 'b', eventType: 'STREAM_PAUSED' }, 'eventType must be one of "DEVICE_ONLINE", "STREAM_STARTING", "STREAM_ACTIVE", "STREAM_FAILED", "STREAM_STOPPED"'],
    ['event', { boxId: 'b', eventType: 'STREAM_FAILED', payload: 'boom' }, 'payload must be an object or null'],
  ])('%s %j → 400 naming the field', async (path, body, message) => {
    const { device } = await owner();
    const response = await device.post(path, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: message });
  });

  it('needs a token with the device scope, and a box-scoped token only speaks for its boxes', async () => {
    const anonymous = await t.app.inject({ method: 'POST', url: '/api/entrance-live/device/status', payload: { boxId: 'b' } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().error).toMatch(/missing token/);
    const reader = await createUser(t.app, { scopes: ['read'] });
    const refused = await deviceClient(t.app, reader.auth).status('b');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'this token lacks the "device" scope' });
    const boxToken = await createUser(t.app, { scopes: ['device'], boxIds: ['mine'] });
    const boxDevice = deviceClient(t.app, boxToken.auth);
    expect((await boxDevice.status('mine')).statusCode).toBe(200);
    const other = await boxDevice.poll('mine');
    expect(other).toEqual([]);
    const foreign = await boxDevice.status('theirs');
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual({ error: 'this token may not act for box "theirs"' });
  });
});

describe('presence, start and command delivery', () => {
  it('stores the latest status per box and answers OK with the pending command count', async () => {
    const { device, user } = await owner();
    const box = newBox();
    const response = await device.status(box, { deviceId: 'pi-7', appVersion: '1.2.3', cameraStatus: { sensor: 'imx708', ok: true }, status: { cpuTemp: 51.5 } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ message: 'OK', pendingCommands: 0 });
    // Fields left out keep their value; null clears one.
    await device.post('status', { boxId: box, publisherState: 'streaming', lastErrorCode: null });
    const stored = await t.app.ctx.live.devices.find(user.id, box);
    expect(stored).toMatchObject({ deviceId: 'pi-7', appVersion: '1.2.3', cameraStatus: { sensor: 'imx708', ok: true }, publisherState: 'streaming', diagnostics: { cpuTemp: 51.5 }, lastErrorCode: null });
  });

  it('start is idempotent per box and queues START_STREAM with the relay details for an online device', async () => {
    const { device, web } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box, 'high', 'none');
    expect(session).toMatchObject({
      boxId: box,
      status: 'REQUESTED',
      qualityProfile: 'high',
      recordingMode: 'none',
      relayProtocol: 'hls',
      clipHandoffEnabled: false,
      playbackUrl: null,
      relayDetails: { relayProtocol: 'hls', placeholder: false, publishToken: null, playbackContentType: 'application/vnd.apple.mpegurl' },
    });
    expect(session.relayDetails.publisherUrl).toBe(`http://localhost:80/api/entrance-live/publish/${session.id}/index.m3u8`);
    expect(Date.parse(session.expiresAt) - Date.now()).toBeGreaterThan(1000);
    expect((await web.start(box, 'low')).id).toBe(session.id);
    const [command, ...rest] = await device.poll(box);
    expect(rest).toEqual([]);
    expect(command).toMatchObject({ sessionId: session.id, commandType: 'START_STREAM', deliveredAt: expect.any(String) });
    expect(command!.payload).toMatchObject({ sessionId: session.id, relayProtocol: 'hls', qualityProfile: 'high', recordingMode: 'none', clipHandoffEnabled: false, publisherUrl: session.relayDetails.publisherUrl });
    expect(command!.payload.publishToken).toMatch(/^[\w-]{43}$/);
    expect(command!.payload.playbackUrl).toMatch(new RegExp(`^http://localhost:80/media/\\d+\\.[\\w-]+/live/${session.id}/index\\.m3u8$`));
  });

  it('rejects bad start arguments with the field named', async () => {
    const { token } = await owner();
    const result = await graphql(t.app, token, 'mutation { startEntranceLiveStream(boxId: "b", qualityProfile: "ultra high!") { id } }');
    expect(result.errors?.[0]).toMatchObject({ message: 'qualityProfile must be 1 to 32 letters, digits, "_" or "-"', extensions: { code: 'BAD_USER_INPUT' } });
    const reader = await createUser(t.app, { scopes: ['read'] });
    const forbidden = await graphql(t.app, reader.token, 'mutation { startEntranceLiveStream(boxId: "b") { id } }');
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('redelivers a command until it is acknowledged, then never again; acks are idempotent', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [first] = await device.poll(box);
    // Not due again yet: a device that has not acknowledged does not get it back at once.
    expect(await device.poll(box)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const [again] = await device.poll(box);
    expect(again).toMatchObject({ id: first!.id, deliveredAt: first!.deliveredAt });
    // The long-poll also wakes when the unacknowledged command falls due again.
    const waited = Date.now();
    const [third] = await device.poll(box, { waitSeconds: 5 });
    expect(third?.id).toBe(first!.id);
    expect(Date.now() - waited).toBeLessThan(2000);

    const ack = await device.ack(box, first!.id, 'accepted', { sessionId: session.id, relayProtocol: 'hls' });
    expect(ack.statusCode).toBe(200);
    expect(ack.json()).toEqual({ message: 'OK', commandId: first!.id, alreadyAcknowledged: false, sessionStatus: 'STARTING' });
    const twice = await device.ack(box, first!.id);
    expect(twice.json()).toEqual({ message: 'OK', commandId: first!.id, alreadyAcknowledged: true, sessionStatus: 'STARTING' });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await device.poll(box)).toEqual([]);
    expect(await statusOf(user.id, session.id)).toBe('STARTING');

    for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', 42]) {
      const response = await device.post('command-ack', { boxId: box, commandId: unknown, status: 'accepted' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: `no command "${unknown}" for box "${box}"` });
    }
    // The right command under another box of the same owner is unknown there too.
    expect((await device.ack('another-box', first!.id)).statusCode).toBe(404);
  });

  // "ultra" was streamed as medium while the session kept saying "ultra", and the device's note was never shown.
  it('takes the quality profile the device acknowledged and keeps its note as the notice; any recordingMode is taken, only "clip" records', async () => {
    const { device, web } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box, 'ultra', 'bogus');
    expect(session).toMatchObject({ qualityProfile: 'ultra', recordingMode: 'bogus', clipHandoffEnabled: false, notice: null });
    const [start] = await device.poll(box);
    expect(start!.payload).toMatchObject({ qualityProfile: 'ultra', recordingMode: 'bogus', clipHandoffEnabled: false });
    const note = 'qualityProfile "ultra" is not one of low, medium, high: using medium';
    await device.ack(box, start!.id, 'accepted', { sessionId: session.id, relayProtocol: 'hls', qualityProfile: 'medium', note });
    expect(await web.read(box)).toMatchObject({ status: 'STARTING', qualityProfile: 'medium', recordingMode: 'bogus', notice: note });
  });

  it('keeps the asked quality when the acknowledgement names none or a malformed one', async () => {
    const { device, web } = await owner();
    const box = newBox();
    await device.status(box);
    await web.start(box, 'high');
    const [start] = await device.poll(box);
    await device.ack(box, start!.id, 'accepted', { qualityProfile: 'not a profile!' });
    expect(await web.read(box)).toMatchObject({ status: 'STARTING', qualityProfile: 'high', notice: null });
  });

  // A malformed sessionId was answered "live session not found"; a box never heard of waited in DEVICE_OFFLINE.
  it('names a malformed sessionId and a boxId the account has never heard of as bad input', async () => {
    const { web, device } = await owner();
    for (const call of [() => web.stop('not-a-uuid'), () => web.keepAlive('not-a-uuid')]) {
      await expect(call()).rejects.toMatchObject({ message: 'sessionId "not-a-uuid" is malformed: a live session id is a UUID', code: 'BAD_USER_INPUT' });
    }
    await expect(web.stop('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const unknown = newBox();
    await expect(web.start(unknown)).rejects.toMatchObject({ message: `boxId "${unknown}" is not a box of this account: it has no counts, camera, clips, heatmaps or token`, code: 'BAD_USER_INPUT' });
    // Known but offline (its camera reported once, long ago) is still accepted and waits for it.
    const known = newBox();
    await device.status(known);
    await t.app.ctx.db.query(`UPDATE live_devices SET last_seen_at = now() - interval '1 hour' WHERE box_id = $1`, [known]);
    expect((await web.start(known)).status).toBe('DEVICE_OFFLINE');
  });

  it('an ignored START_STREAM fails the session with the device reason', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [start] = await device.poll(box);
    // Without one asked for, the profile was "standard", none of the agent's (low, medium, high).
    expect(start!.payload).toMatchObject({ qualityProfile: 'medium' });
    const ack = await device.ack(box, start!.id, 'ignored', { sessionId: session.id, reason: 'camera busy with recording' });
    expect(ack.json()).toMatchObject({ sessionStatus: 'FAILED' });
    const stored = await t.app.ctx.live.findSession(user.id, session.id);
    expect(stored).toMatchObject({ status: 'FAILED', lastErrorCode: 'START_IGNORED', lastErrorMessage: 'camera busy with recording' });
    expect(await web.read(box)).toBeNull();
  });

  it('long-poll returns as soon as a command is queued', async () => {
    const { device, web } = await owner();
    const box = newBox();
    await device.status(box);
    const started = Date.now();
    const polling = device.poll(box, { waitSeconds: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const session = await web.start(box);
    const commands = await polling;
    expect(commands.map((c) => [c.commandType, c.sessionId])).toEqual([['START_STREAM', session.id]]);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  // With its notification lost (a listening connection that died without a word), a queued command waited for the
  // device's next poll.
  it('long-poll reads the commands once more before it answers empty', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [start] = await device.poll(box);
    expect((await device.ack(box, start!.id)).statusCode).toBe(200);
    const polling = device.poll(box, { waitSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Queued behind the service's back: no notification wakes the poll.
    await t.app.ctx.db.query(
      `INSERT INTO live_commands (id, owner_id, box_id, session_id, command_type, payload) VALUES (gen_random_uuid(), $1, $2, $3, 'STOP_STREAM', '{}'::jsonb)`,
      [user.id, box, session.id],
    );
    expect((await polling).map((c) => c.commandType)).toEqual(['STOP_STREAM']);
  });

  it('long-poll with nothing queued answers an empty list in the last fifth of the wait, at spread-out times', async () => {
    const { device } = await owner();
    // Ten devices polling in the same instant do not all come back in the same instant.
    const durations = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const started = Date.now();
        expect(await device.poll(newBox(), { waitSeconds: 0.5 })).toEqual([]);
        return Date.now() - started;
      }),
    );
    for (const ms of durations) expect(ms).toBeGreaterThanOrEqual(390);
    expect(Math.max(...durations) - Math.min(...durations)).toBeGreaterThan(15);
  });
});

describe('device offline, events and the session lifecycle', () => {
  it('a session for an offline device waits in DEVICE_OFFLINE; DEVICE_ONLINE records presence only, the next heartbeat moves it to REQUESTED', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    // Last heard from an hour ago: offline.
    await t.app.ctx.db.query(`UPDATE live_devices SET last_seen_at = now() - interval '1 hour' WHERE owner_id = $1 AND box_id = $2`, [user.id, box]);
    const session = await web.start(box);
    expect(session.status).toBe('DEVICE_OFFLINE');
    expect(await t.app.ctx.live.pendingCommandCount(user.id, box)).toBe(0);
    const online = await device.event(box, 'DEVICE_ONLINE', undefined, { appVersion: '2.0.0', cameraStatus: 'ok' });
    expect(online.statusCode).toBe(200);
    expect(online.json()).toEqual({ message: 'OK', sessionId: session.id, sessionStatus: 'DEVICE_OFFLINE', applied: false });
    const seen = await t.app.ctx.live.devices.find(user.id, box);
    expect(seen).toMatchObject({ appVersion: '2.0.0', cameraStatus: 'ok' });
    expect(Date.now() - seen!.lastSeenAt.getTime()).toBeLessThan(5000);
    expect(await t.app.ctx.live.pendingCommandCount(user.id, box)).toBe(0);
    // The device's next poll is the heartbeat that brings the session forward, and it carries START_STREAM at once.
    const [start] = await device.poll(box);
    expect(start).toMatchObject({ commandType: 'START_STREAM', sessionId: session.id });
    expect(await statusOf(user.id, session.id)).toBe('REQUESTED');
    await device.event(box, 'DEVICE_ONLINE');
    await device.status(box);
    expect(await statusOf(user.id, session.id)).toBe('REQUESTED');
    expect((await web.read(box))?.lastDeviceSeenAt).not.toBeNull();
  });

  it('DEVICE_ONLINE never moves a REQUESTED or STARTING session on (spec §3 rule 1)', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    expect((await device.event(box, 'DEVICE_ONLINE', session.id)).json()).toMatchObject({ sessionStatus: 'REQUESTED', applied: false });
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    expect((await device.event(box, 'DEVICE_ONLINE', session.id, { publisherState: 'starting' })).json()).toMatchObject({ sessionStatus: 'STARTING', applied: false });
    expect(await statusOf(user.id, session.id)).toBe('STARTING');
  });

  it('moves through STARTING and ACTIVE on device events and records STREAM_FAILED errors', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    await device.poll(box);
    expect((await device.event(box, 'STREAM_STARTING', session.id)).json()).toMatchObject({ sessionStatus: 'STARTING', applied: true });
    expect((await device.event(box, 'STREAM_ACTIVE')).json()).toMatchObject({ sessionId: session.id, sessionStatus: 'ACTIVE', applied: true });
    // A late STREAM_STARTING changes nothing.
    expect((await device.event(box, 'STREAM_STARTING', session.id)).json()).toMatchObject({ sessionStatus: 'ACTIVE', applied: false });
    const failed = await device.event(box, 'STREAM_FAILED', session.id, { errorCode: 'ENCODER_EXIT', errorMessage: 'ffmpeg exited with 1' });
    expect(failed.json()).toMatchObject({ sessionStatus: 'FAILED', applied: true });
    expect(await t.app.ctx.live.findSession(user.id, session.id)).toMatchObject({ lastErrorCode: 'ENCODER_EXIT', lastErrorMessage: 'ffmpeg exited with 1' });
    // Ended: later reports are answered but ignored.
    expect((await device.event(box, 'STREAM_ACTIVE', session.id)).json()).toMatchObject({ sessionStatus: 'FAILED', applied: false });
    const unknown = await device.event(box, 'STREAM_ACTIVE', '00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect((await device.event(newBox(), 'STREAM_ACTIVE')).json()).toEqual({ error: expect.stringMatching(/has no live session/) });
  });

  it('stop queues STOP_STREAM, goes STOPPING, then STOPPED on the device event', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    expect(await web.stop(session.id)).toBe(true);
    expect(await statusOf(user.id, session.id)).toBe('STOPPING');
    expect((await web.read(box))?.status).toBe('STOPPING');
    const [stop] = await device.poll(box);
    expect(stop).toMatchObject({ commandType: 'STOP_STREAM', sessionId: session.id, payload: { sessionId: session.id, reason: 'stopped' } });
    expect((await device.ack(box, stop!.id)).json()).toMatchObject({ alreadyAcknowledged: false, sessionStatus: 'STOPPING' });
    expect((await device.event(box, 'STREAM_STOPPED', session.id)).json()).toMatchObject({ sessionStatus: 'STOPPED', applied: true });
    expect(await web.read(box)).toBeNull();
    expect(await web.stop(session.id)).toBe(true);
    // A new start after the stop opens a new session.
    expect((await web.start(box)).id).not.toBe(session.id);
  });

  // A STOP acked "ignored" (the device runs no stream for the session) still waited the whole stop grace.
  it('a STOP_STREAM acknowledged "ignored" ends the STOPPING session at once', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    await web.stop(session.id);
    const [stop] = await device.poll(box);
    const ack = await device.ack(box, stop!.id, 'ignored', { sessionId: session.id, reason: `not streaming session ${session.id}` });
    expect(ack.json()).toMatchObject({ alreadyAcknowledged: false, sessionStatus: 'STOPPED' });
    expect(await t.app.ctx.live.findSession(user.id, session.id)).toMatchObject({ status: 'STOPPED', lastErrorCode: null });
    expect(await web.read(box)).toBeNull();
  });

  // A stop the device began (agent SIGTERM, systemctl restart) read as plain STOPPED, the same as the viewer's Stop.
  it('a stream the device stops by itself ends STOPPED with DEVICE_STOPPED and its reason; a stop the viewer asked for carries none', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    await device.event(box, 'STREAM_ACTIVE', session.id);
    expect((await device.event(box, 'STREAM_STOPPED', session.id, { reason: 'agent shutting down', framesSent: 12 })).json()).toMatchObject({ sessionStatus: 'STOPPED', applied: true });
    expect(await t.app.ctx.live.findSession(user.id, session.id)).toMatchObject({
      status: 'STOPPED', lastErrorCode: 'DEVICE_STOPPED', lastErrorMessage: 'the camera stopped streaming (agent shutting down)',
    });

    const asked = await web.start(box);
    const [again] = await device.poll(box);
    await device.ack(box, again!.id);
    await web.stop(asked.id);
    await device.event(box, 'STREAM_STOPPED', asked.id, { reason: 'STOP_STREAM' });
    expect(await t.app.ctx.live.findSession(user.id, asked.id)).toMatchObject({ status: 'STOPPED', lastErrorCode: null, lastErrorMessage: null });
  });

  /** A session stopped while its device is away: STOPPED once the grace period is over (waited for here). */
  async function stoppedWhileDeviceAway() {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    await device.poll(box);
    await web.stop(session.id);
    await eventually(() => statusOf(user.id, session.id), (s) => s === 'STOPPED', 4000);
    return { device, user, box, session };
  }

  it('a STOPPING session becomes STOPPED after the grace period without the device', async () => {
    const { user, session } = await stoppedWhileDeviceAway();
    expect(await statusOf(user.id, session.id)).toBe('STOPPED');
  });

  it('prunes history: a STOP_STREAM never picked up is withdrawn an hour after the session ended, the session goes after LIVE_HISTORY_DAYS', async () => {
    // The device never comes back: the session ends after the grace period with its STOP_STREAM still pending.
    const { device, user, box, session } = await stoppedWhileDeviceAway();
    await eventually(async () => (await t.app.ctx.live.sessions.findById(session.id))?.mediaReleasedAt, (at) => Boolean(at), 4000);
    const pending = () => t.app.ctx.live.commands.pendingCount(user.id, box);
    expect(await pending()).toBe(1);
    const live = t.app.ctx.live;
    const endedAt = (await live.sessions.findById(session.id))!.endedAt!.getTime();
    expect(await live.pruneHistory(new Date(endedAt + 59 * 60_000))).toMatchObject({ deleted: 0 });
    expect(await pending()).toBe(1);
    expect((await live.pruneHistory(new Date(endedAt + 61 * 60_000))).withdrawn).toBeGreaterThanOrEqual(1);
    expect(await pending()).toBe(0);
    expect(await device.poll(box)).toEqual([]);
    expect(await live.sessions.findById(session.id)).toBeDefined();
    const days = t.config.live.historyDays;
    expect((await live.pruneHistory(new Date(endedAt + (days + 1) * 86_400_000))).deleted).toBeGreaterThanOrEqual(1);
    expect(await live.sessions.findById(session.id)).toBeUndefined();
  });

  it('stopping before the device received START_STREAM withdraws it and ends at once', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    await web.stop(session.id);
    expect(await statusOf(user.id, session.id)).toBe('STOPPED');
    expect(await device.poll(box)).toEqual([]);
  });

  it('without keep-alive the session expires and the device is told to stop; keep-alive extends it', async () => {
    const { device, web, user } = await owner();
    const box = newBox();
    await device.status(box);
    const session = await web.start(box);
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const kept = await web.keepAlive(session.id);
    expect(kept.status).toBe('STARTING');
    expect(Date.parse(kept.expiresAt)).toBeGreaterThan(Date.parse(session.expiresAt) + 1000);
    expect(kept.lastKeepaliveAt).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await statusOf(user.id, session.id)).toBe('STARTING');
    await eventually(() => statusOf(user.id, session.id), (s) => s === 'EXPIRED', 4000);
    expect(await web.read(box)).toBeNull();
    const [stop] = await device.poll(box);
    expect(stop).toMatchObject({ commandType: 'STOP_STREAM', payload: { sessionId: session.id, reason: 'expired' } });
    // A keep-alive that comes too late reads the final state rather than reviving the session.
    expect((await web.keepAlive(session.id)).status).toBe('EXPIRED');
  });
});

describe('isolation between users', () => {
  it('another user cannot read, keep alive, stop or acknowledge for a session', async () => {
    const alice = await owner();
    const bob = await owner();
    const box = newBox();
    await alice.device.status(box);
    const session = await alice.web.start(box);
    const [start] = await alice.device.poll(box);
    expect(await bob.web.read(box)).toBeNull();
    await expect(bob.web.keepAlive(session.id)).rejects.toMatchObject({ message: 'live session not found', code: 'NOT_FOUND' });
    await expect(bob.web.stop(session.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await bob.device.ack(box, start!.id)).statusCode).toBe(404);
    expect((await bob.device.event(box, 'STREAM_ACTIVE', session.id)).statusCode).toBe(404);
    // Bob's device for a box of the same name sees none of Alice's commands, and his start is his own.
    expect(await bob.device.poll(box)).toEqual([]);
    expect((await bob.web.start(box)).id).not.toBe(session.id);
    expect(await statusOf(alice.user.id, session.id)).toBe('REQUESTED');
  });

  it('unauthenticated GraphQL calls are refused', async () => {
    const result = await graphql(t.app, undefined, 'query { entranceLiveStreamSession(boxId: "b") { id } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('Box.device on GraphQL', () => {
  const BOXES = 'query { boxes { id device { online lastSeenAt deviceId appVersion } } }';
  type BoxDevice = { id: string; device: { online: boolean; lastSeenAt: string; deviceId: string | null; appVersion: string | null } | null };
  const boxesOf = async (token: string) => {
    const result = await graphql(t.app, token, BOXES);
    if (result.errors) throw new Error(result.errors[0]!.message);
    return new Map((result.data!.boxes as BoxDevice[]).map((b) => [b.id, b.device]));
  };
  const countBees = async (auth: Record<string, string>, boxId: string) => {
    const response = await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: auth, payload: { hiveId: 'devices-hive', boxId, beesIn: 1, beesOut: 0 } });
    expect(response.statusCode).toBe(200);
  };

  it("shows each box's device to its owner only: online until DEVICE_ONLINE_SECONDS pass without a sighting, null when never seen", async () => {
    const alice = await owner();
    const bob = await owner();
    const [seen, quiet, silent] = [newBox(), newBox(), newBox()];
    for (const box of [seen, quiet, silent]) await countBees(alice.auth, box);
    await countBees(bob.auth, seen);
    await alice.device.status(seen, { deviceId: 'pi-1', appVersion: '2.0.0' });
    await alice.device.status(quiet, { deviceId: 'pi-2' });
    await t.app.ctx.db.query(`UPDATE live_devices SET last_seen_at = now() - interval '10 minutes' WHERE owner_id = $1 AND box_id = $2`, [alice.user.id, quiet]);

    const mine = await boxesOf(alice.token);
    expect(mine.get(seen)).toMatchObject({ online: true, deviceId: 'pi-1', appVersion: '2.0.0' });
    expect(Date.now() - Date.parse(mine.get(seen)!.lastSeenAt)).toBeLessThan(60_000);
    expect(mine.get(quiet)).toMatchObject({ online: false, deviceId: 'pi-2' });
    expect(Date.now() - Date.parse(mine.get(quiet)!.lastSeenAt)).toBeGreaterThan(9 * 60_000);
    expect(mine.get(silent)).toBeNull();
    // Bob's box of the same name: his device never reported, Alice's is not his.
    expect((await boxesOf(bob.token)).get(seen)).toBeNull();

    // A box-scoped token sees the devices of its own boxes only.
    const scoped = await t.app.ctx.tokens.issue({ userId: alice.user.id, name: 'one box', scopes: ['read'], boxIds: [quiet] });
    const seenByScoped = await boxesOf(scoped.token);
    expect(seenByScoped.get(quiet)).toMatchObject({ deviceId: 'pi-2' });
    expect(seenByScoped.get(seen) ?? null).toBeNull();
  });
});

describe('shutdown', () => {
  it('answers waiting long-polls with no commands as soon as the instance closes, instead of holding shutdown up', async () => {
    const other = await buildTestApp({ live: fastLiveConfig() });
    await other.app.listen({ port: 0, host: '127.0.0.1' });
    const { auth } = await createUser(other.app);
    const url = `http://127.0.0.1:${(other.app.server.address() as { port: number }).port}/api/entrance-live/device/poll`;
    const parked = fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ boxId: 'b', waitSeconds: 20 }) });
    await eventually(async () => other.app.ctx.live.signals.waitingPolls, (n) => n === 1);
    const closing = Date.now();
    await other.close();
    expect(Date.now() - closing).toBeLessThan(5000);
    const response = await parked;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ commands: [] });
  });
});
