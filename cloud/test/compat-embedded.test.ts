import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { clientDocument, ExistingEntranceObserver, ffmpegJpegs, MjpegViewer } from './compat-helpers.ts';
import { createUser } from './helper.ts';
import { eventually, fastLiveConfig, type SessionView } from './live-helpers.ts';

/**
 * The JPEG push relay on the embedded database (PGlite: LISTEN/NOTIFY in-process), and an instance shutting down
 * while someone watches: the stream ends cleanly at once instead of holding the shutdown up.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-compat-embedded-'));
let app: FastifyInstance;
let base: string;
let closed = false;

beforeAll(async () => {
  app = await buildApp(
    defaultConfig({ databaseUrl: undefined, dataDir, storage: { kind: 'fs', dir: path.join(dataDir, 'blobs') }, logLevel: 'silent', live: fastLiveConfig({ keepaliveTimeoutSeconds: 30 }) }),
    { logger: false },
  );
  base = await app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => {
  if (!closed) await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('JPEG push on the embedded database', () => {
  it('relays the observer\u2019s frames to a viewer, and closing the instance ends the stream at once', async () => {
    const { token } = await createUser(app);
    const frames = await ffmpegJpegs(4);
    const device = new ExistingEntranceObserver({ baseUrl: base, apiToken: token, boxId: '394', pollIntervalMs: 300, frames, diagnostics: { supportedRelays: 'http-jpeg-push' } });
    await device.start();
    try {
      await eventually(async () => device.calls.filter((c) => c.path.endsWith('/status')).length, (n) => n > 0);
      const gql = async <T>(name: string, variables: Record<string, unknown>, field: string) => {
        const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', token }, body: JSON.stringify({ query: clientDocument(name), variables }) });
        return ((await response.json()) as { data: Record<string, T> }).data[field]!;
      };
      const session = await gql<SessionView>('web-app/start-live-stream.graphql', { boxId: '394', qualityProfile: 'inspect', recordingMode: 'off' }, 'startEntranceLiveStream');
      expect(session.relayProtocol).toBe('http-jpeg-push');
      const viewer = await MjpegViewer.open(session.playbackUrl!);
      await viewer.until((v) => v.parts.length >= 3, 5000, 'three frames');
      for (const part of viewer.parts) expect(frames.some((f) => f.equals(part.bytes))).toBe(true);
      await eventually(() => gql<SessionView | null>('web-app/live-session-for-box.graphql', { boxId: '394' }, 'entranceLiveStreamSession'), (s) => s?.status === 'ACTIVE');

      await device.stop();
      const started = Date.now();
      await app.close();
      closed = true;
      expect(Date.now() - started).toBeLessThan(3000);
      await viewer.until((v) => v.parser.complete && v.closed, 2000, 'the stream to end');
    } finally {
      await device.stop();
    }
  });
});
