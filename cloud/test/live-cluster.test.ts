import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { deviceClient, eventually, fastLiveConfig, liveClient } from './live-helpers.ts';

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

/** A graphql-transport-ws client: what a browser's subscription library speaks. */
async function subscribe(options: { initPayload?: Record<string, unknown>; headers?: Record<string, string>; boxId: string }) {
  const socket = new WebSocket(wsUrl, 'graphql-transport-ws', { headers: options.headers });
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data: Buffer) => {
    messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  const next = async (type: string, timeoutMs = 5000): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = messages.findIndex((m) => m.type === type);
      if (index >= 0) return messages.splice(index, 1)[0]!;
      if (Date.now() > deadline) throw new Error(`no "${type}" message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  socket.send(JSON.stringify({ type: 'connection_init', payload: options.initPayload ?? {} }));
  await next('connection_ack');
  socket.send(
    JSON.stringify({
      id: '1',
      type: 'subscribe',
      payload: { query: 'subscription ($boxId: ID!) { entranceLiveStreamSessionChanged(boxId: $boxId) { id boxId status playbackUrl lastErrorCode } }', variables: { boxId: options.boxId } },
    }),
  );
  return {
    /** The next session pushed to this subscription. */
    change: async (timeoutMs?: number) => {
      const message = await next('next', timeoutMs);
      const payload = message.payload as { data?: { entranceLiveStreamSessionChanged: { id: string; status: string } }; errors?: { message: string }[] };
      if (payload.errors) throw new Error(payload.errors[0]!.message);
      return payload.data!.entranceLiveStreamSessionChanged;
    },
    error: async () => (await next('error')).payload as { message: string; extensions?: { code?: string } }[],
    pending: () => messages.filter((m) => m.type === 'next').length,
    close: () => socket.close(),
  };
}

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
    const subscription = await subscribe({ initPayload: { token }, boxId: box });
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

  it('accepts the session cookie or an Authorization entry in connection_init, and keeps users apart', async () => {
    const alice = await createUser(one.app);
    const bob = await createUser(one.app);
    const box = newBox();
    const byCookie = await subscribe({ headers: { cookie: `service_session=${alice.token}` }, boxId: box });
    const byHeader = await subscribe({ initPayload: { Authorization: `Bearer ${alice.token}` }, boxId: box });
    const bobs = await subscribe({ initPayload: { token: bob.token }, boxId: box });
    const session = await liveClient(one.app, alice.token).start(box);
    expect((await byCookie.change()).id).toBe(session.id);
    expect((await byHeader.change()).id).toBe(session.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(bobs.pending()).toBe(0);
    for (const s of [byCookie, byHeader, bobs]) s.close();
  });

  it('refuses a subscription without a user, and names a bad token', async () => {
    const anonymous = await subscribe({ boxId: 'x' });
    expect((await anonymous.error())[0]).toMatchObject({ message: 'authentication required: send a token' });
    anonymous.close();
    const forged = await subscribe({ initPayload: { token: 'not.a.jwt' }, boxId: 'x' });
    expect((await forged.error())[0]?.message).toBe('token is invalid');
    forged.close();
  });
});
