import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { deviceClient, eventually, fastLiveConfig, liveClient, subscribeToSessions } from './live-helpers.ts';

/** Two app instances on one database, as behind a load balancer: wake-ups and sweeps must work across them. */
let one: TestApp;
let two: TestApp;
let wsUrl: string;

beforeAll(async () => {
  one = await buildTestApp({ live: fastLiveConfig() });
  two = await buildTestApp({ live: fastLiveConfig() }, { url: one.databaseUrl });
  await two.app.listen({ port: 0, host: '127.0.0.1' });
  wsUrl = `ws://127.0.0.1:${(two.app.server.address() as { port: number }).port}/graphql`;
});
afterAll(async () => {
  await two.close();
  await one.close();
});

let boxCounter = 0;
const newBox = () => `cluster-box-${++boxCounter}`;

describe('across instances', () => {
  it('a device long-polling instance two is woken by a start on instance one', async () => {
    const { token, auth } = await createUser(one.app);
    const box = newBox();
    const device = deviceClient(two.app, auth);
    await device.status(box);
    const polling = device.poll(box, { waitSeconds: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const startedAt = Date.now();
    const session = await liveClient(one.app, token).start(box);
    const commands = await polling;
    expect(commands).toMatchObject([{ commandType: 'START_STREAM', sessionId: session.id }]);
    expect(Date.now() - startedAt).toBeLessThan(2000);
  });

  it('a session expires once even though both instances sweep', async () => {
    const { token, auth, user } = await createUser(one.app);
    const box = newBox();
    const device = deviceClient(one.app, auth);
    await device.status(box);
    const session = await liveClient(one.app, token).start(box);
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    await eventually(() => one.app.ctx.live.findSession(user.id, session.id), (s) => s?.status === 'EXPIRED', 5000);
    const { rows } = await one.app.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM live_commands WHERE session_id = $1 AND command_type = 'STOP_STREAM'`, [session.id]);
    expect(rows[0]!.n).toBe(1);
  });
});

describe('entranceLiveStreamSessionChanged subscription', () => {
  it('pushes every change, including ones made on the other instance, authenticated by the connection_init token', async () => {
    const { token, auth } = await createUser(one.app);
    const box = newBox();
    const subscription = await subscribeToSessions(wsUrl, { initPayload: { token }, boxId: box });
    await deviceClient(one.app, auth).status(box);
    const session = await liveClient(one.app, token).start(box);
    expect(await subscription.change()).toMatchObject({ id: session.id, boxId: box, status: 'REQUESTED' });
    const device = deviceClient(one.app, auth);
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    expect(await subscription.change()).toMatchObject({ id: session.id, status: 'STARTING' });
    await device.event(box, 'STREAM_FAILED', session.id, { errorCode: 'NO_CAMERA' });
    expect(await subscription.change()).toMatchObject({ id: session.id, status: 'FAILED', lastErrorCode: 'NO_CAMERA' });
    subscription.close();
  });

  // EXPIRED reached a subscriber twice, and keep-alives pushed the same STARTING/ACTIVE session again and again.
  it('pushes each state once: keep-alives and repeated notifications bring nothing', async () => {
    const { token, auth, user } = await createUser(one.app);
    const box = newBox();
    const subscription = await subscribeToSessions(wsUrl, { initPayload: { token }, boxId: box });
    const device = deviceClient(one.app, auth);
    await device.status(box);
    const web = liveClient(one.app, token);
    const session = await web.start(box);
    expect(await subscription.change()).toMatchObject({ id: session.id, status: 'REQUESTED' });
    const [start] = await device.poll(box);
    await device.ack(box, start!.id);
    expect(await subscription.change()).toMatchObject({ id: session.id, status: 'STARTING' });
    for (let i = 0; i < 3; i++) await web.keepAlive(session.id);
    // A notification of nothing new (as a second instance's duplicate would be) is not passed on either.
    await one.app.ctx.db.query(`SELECT pg_notify('hivegate_live_sessions', $1)`, [JSON.stringify({ o: user.id, b: box, s: session.id })]);
    await web.stop(session.id);
    expect(await subscription.change()).toMatchObject({ id: session.id, status: 'STOPPING' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(subscription.pending()).toBe(0);
    subscription.close();
  });

  it('accepts the session cookie or an Authorization entry in connection_init, and keeps users apart', async () => {
    const alice = await createUser(one.app);
    const bob = await createUser(one.app);
    const box = newBox();
    const byCookie = await subscribeToSessions(wsUrl, { headers: { cookie: `service_session=${alice.token}` }, boxId: box });
    const byHeader = await subscribeToSessions(wsUrl, { initPayload: { Authorization: `Bearer ${alice.token}` }, boxId: box });
    const bobs = await subscribeToSessions(wsUrl, { initPayload: { token: bob.token }, boxId: box });
    // The box's camera has reported: a box the account never heard of is refused.
    await deviceClient(one.app, alice.auth).status(box);
    const session = await liveClient(one.app, alice.token).start(box);
    expect((await byCookie.change()).id).toBe(session.id);
    expect((await byHeader.change()).id).toBe(session.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(bobs.pending()).toBe(0);
    for (const s of [byCookie, byHeader, bobs]) s.close();
  });

  it('takes the session cookie only from pages of its own origin; a token in connection_init counts from anywhere', async () => {
    const alice = await createUser(one.app);
    const box = newBox();
    const cookie = `service_session=${alice.token}`;
    const ownOrigin = new URL(wsUrl.replace(/^ws/, 'http')).origin;
    // Another port of the same host: the same site, so a browser would send the SameSite=Lax cookie along.
    const elsewhere = 'http://127.0.0.1:1';
    const fromOwnPage = await subscribeToSessions(wsUrl, { headers: { cookie, origin: ownOrigin }, boxId: box });
    const fromElsewhere = await subscribeToSessions(wsUrl, { headers: { cookie, origin: elsewhere }, boxId: box });
    expect((await fromElsewhere.error())[0]).toMatchObject({
      message: `the session cookie is not accepted from ${elsewhere}: send a token in connection_init`,
      extensions: { code: 'UNAUTHENTICATED' },
    });
    const elsewhereWithToken = await subscribeToSessions(wsUrl, { headers: { cookie, origin: elsewhere }, initPayload: { token: alice.token }, boxId: box });
    // The box's camera has reported: a box the account never heard of is refused.
    await deviceClient(one.app, alice.auth).status(box);
    const session = await liveClient(one.app, alice.token).start(box);
    expect((await fromOwnPage.change()).id).toBe(session.id);
    expect((await elsewhereWithToken.change()).id).toBe(session.id);
    for (const s of [fromOwnPage, fromElsewhere, elsewhereWithToken]) s.close();
  });

  // A subscription kept its events flowing after its token was revoked: the socket was checked only when it opened.
  it('stops sending a revoked token its events', async () => {
    const alice = await createUser(one.app);
    const box = newBox();
    const subscription = await subscribeToSessions(wsUrl, { initPayload: { token: alice.token }, boxId: box });
    const live = liveClient(one.app, alice.token);
    await deviceClient(one.app, alice.auth).status(box);
    const first = await live.start(box);
    expect((await subscription.change()).id).toBe(first.id);
    await one.app.ctx.db.query('UPDATE api_tokens SET revoked_at = now() WHERE id = $1', [alice.tokenId]);
    await one.app.ctx.tokens.forget(alice.tokenId);
    await one.app.ctx.live.stopSession(alice.user.id, first.id);
    await expect(subscription.change()).rejects.toThrow('token has been revoked');
    // It then stayed open and answered every later event with the same error: now it completes after the first.
    expect(await subscription.completed()).toMatchObject({ type: 'complete', id: '1' });
    const again = (await one.app.ctx.tokens.issue({ userId: alice.user.id, name: 'again', scopes: ['*'] })).token;
    const watcher = await subscribeToSessions(wsUrl, { initPayload: { token: again }, boxId: box });
    const second = await liveClient(one.app, again).start(box);
    expect((await watcher.change()).id).toBe(second.id);
    await liveClient(one.app, again).stop(second.id);
    expect((await watcher.change()).status).toMatch(/^STOPP/);
    expect(subscription.pending()).toBe(0);
    watcher.close();
    subscription.close();
  });

  it('refuses a subscription without a user, and names a bad token', async () => {
    const anonymous = await subscribeToSessions(wsUrl, { boxId: 'x' });
    expect((await anonymous.error())[0]).toMatchObject({ message: 'authentication required: send a token' });
    anonymous.close();
    const forged = await subscribeToSessions(wsUrl, { initPayload: { token: 'not.a.jwt' }, boxId: 'x' });
    expect((await forged.error())[0]?.message).toBe('token is invalid');
    forged.close();
  });
});
