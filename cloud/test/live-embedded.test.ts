import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { createUser } from './helper.ts';
import { deviceClient, eventually, fastLiveConfig, liveClient } from './live-helpers.ts';

/** The live gateway on the embedded database (PGlite): LISTEN/NOTIFY in-process, SKIP LOCKED sweeps. */
const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-live-embedded-'));
let app: FastifyInstance;

beforeAll(async () => {
  app = await buildApp(defaultConfig({ databaseUrl: undefined, dataDir, storage: { kind: 'fs', dir: path.join(dataDir, 'blobs') }, logLevel: 'silent', live: fastLiveConfig() }), { logger: false });
}, 60_000);
afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('live gateway on the embedded database', () => {
  it('wakes a long-poll, moves the session on device events and expires it without keep-alive', async () => {
    const { token, auth, user } = await createUser(app);
    const device = deviceClient(app, auth);
    const web = liveClient(app, token);
    await device.status('box');
    const polling = device.poll('box', { waitSeconds: 10 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const startedAt = Date.now();
    const session = await web.start('box');
    const [start] = await polling;
    expect(start).toMatchObject({ commandType: 'START_STREAM', sessionId: session.id });
    expect(Date.now() - startedAt).toBeLessThan(2000);
    expect((await device.ack('box', start!.id)).json()).toMatchObject({ sessionStatus: 'STARTING' });
    expect((await device.event('box', 'STREAM_ACTIVE', session.id)).json()).toMatchObject({ sessionStatus: 'ACTIVE' });
    await eventually(() => app.ctx.live.findSession(user.id, session.id), (s) => s?.status === 'EXPIRED', 5000);
    expect((await device.poll('box'))[0]).toMatchObject({ commandType: 'STOP_STREAM', payload: { reason: 'expired' } });
  });
});
