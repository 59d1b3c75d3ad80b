import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../cloud/src/config.ts';
import { buildTestApp, createUser, graphql, type TestApp } from '../../cloud/test/helper.ts';
import { eventually, SESSION_FIELDS, type SessionView } from '../../cloud/test/live-helpers.ts';
import { runAgent } from '../src/agent.ts';
import { resolveConfig } from '../src/config/config.ts';
import { useTwoBeesCamera } from './helpers/media.ts';

// The agent against the project's real live gateway (the cloud app on a test database of the local Postgres):
// the browser side is GraphQL, as the web app calls it; the device side is the agent itself, over real HTTP.
const run = promisify(execFile);
let cloud: TestApp;
let cloudUrl = '';

const { dir, camera } = useTwoBeesCamera('cloud-live', { loop: true });

beforeAll(async () => {
  // A long stop grace: the session can only reach STOPPED because the agent reported STREAM_STOPPED.
  cloud = await buildTestApp({ live: { ...defaultConfig().live, stopGraceSeconds: 600 } });
  await cloud.app.listen({ port: 0, host: '127.0.0.1' });
  cloudUrl = `http://127.0.0.1:${(cloud.app.server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => {
  await cloud.close();
});

/** The web app's live card calls; an answer that is not GraphQL fails with the answer itself. */
function browserOf(token: string) {
  const call = async <T>(query: string, variables: Record<string, unknown>, field: string): Promise<T> => {
    const result = await graphql(cloud.app, token, query, variables);
    if (result.errors) throw new Error(`${field}: ${result.errors[0]!.message}`);
    if (!result.data) throw new Error(`${field}: not a GraphQL answer: ${JSON.stringify(result)}`);
    return result.data[field] as T;
  };
  return {
    start: (boxId: string, qualityProfile: string) =>
      call<SessionView>(`mutation ($boxId: ID!, $qualityProfile: String) { startEntranceLiveStream(boxId: $boxId, qualityProfile: $qualityProfile) { ${SESSION_FIELDS} } }`, { boxId, qualityProfile }, 'startEntranceLiveStream'),
    stop: (sessionId: string) => call<boolean>(`mutation ($sessionId: ID!) { stopEntranceLiveStream(sessionId: $sessionId) }`, { sessionId }, 'stopEntranceLiveStream'),
    read: (boxId: string) => call<SessionView | null>(`query ($boxId: ID!) { entranceLiveStreamSession(boxId: $boxId) { ${SESSION_FIELDS} } }`, { boxId }, 'entranceLiveStreamSession'),
  };
}

const framesProcessed = (stateDir: string) => Number((JSON.parse(readFileSync(join(stateDir, 'status.json'), 'utf8')) as { framesProcessed: number }).framesProcessed);

describe('agent and the cloud live gateway', () => {
  it('GraphQL start → the agent streams → ACTIVE and playable → stop → STOPPED, counting all along', async () => {
    const { token } = await createUser(cloud.app, { scopes: ['ingest', 'device', 'read', 'control'] });
    const browser = browserOf(token);
    const stateDir = join(dir.path, 'state');
    const config = resolveConfig({
      file: {
        hiveId: 'hive-1', boxId: 'box-1', deviceId: 'pi-cloud', source: { url: camera().url }, cloud: { url: cloudUrl, token },
        live: { statusIntervalSeconds: 1, pollWaitSeconds: 2 }, counting: { intervalSeconds: 5 }, stateDir,
      },
      env: {},
    });
    let stopAgent: () => void = () => {};
    const logs: string[] = [];
    const exit = runAgent(config, { stopSignal: new Promise<void>((resolve) => (stopAgent = resolve)), log: (m) => logs.push(m) });
    try {
      // Once the device has been seen, a new session is REQUESTED (not DEVICE_OFFLINE) and START_STREAM is queued.
      await eventually(async () => logs.some((l) => l.startsWith('agent running')), Boolean, 20_000);
      await new Promise((r) => setTimeout(r, 1500));
      const session = await browser.start('box-1', 'low');
      expect(['REQUESTED', 'STARTING']).toContain(session.status);

      const active = await eventually(() => browser.read('box-1'), (s) => s?.status === 'ACTIVE' && s.playbackUrl !== null, 30_000);
      expect(active!.lastErrorCode).toBeNull();
      const framesAtActive = framesProcessed(stateDir);

      // The playlist plays: the signed URL serves it and its segments decode. (GraphQL ran through inject, so the
      // URL names inject's host; the path is what a player fetches.)
      const playbackUrl = new URL(new URL(active!.playbackUrl!).pathname + new URL(active!.playbackUrl!).search, cloudUrl).toString();
      const playlistResponse = await fetch(playbackUrl);
      expect(playlistResponse.status).toBe(200);
      const playlist = await playlistResponse.text();
      expect(playlist.startsWith('#EXTM3U')).toBe(true);
      const segment = playlist.split('\n').find((l) => l.trim().endsWith('.ts'))!.trim();
      const segmentResponse = await fetch(new URL(segment, playbackUrl));
      expect(segmentResponse.status).toBe(200);
      const segmentFile = join(dir.path, 'segment.ts');
      writeFileSync(segmentFile, Buffer.from(await segmentResponse.arrayBuffer()));
      const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=width,height,nb_read_frames', '-of', 'json', segmentFile]);
      const stream = (JSON.parse(stdout) as { streams: { width: number; height: number; nb_read_frames: string }[] }).streams[0]!;
      expect(stream).toMatchObject({ width: 320, height: 240 });
      expect(Number(stream.nb_read_frames)).toBeGreaterThan(0);

      await new Promise((r) => setTimeout(r, 2500));
      expect(framesProcessed(stateDir) - framesAtActive).toBeGreaterThan(15); // counting goes on while streaming

      const device = await cloud.app.ctx.db.query<{ device_id: string; app_version: string; diagnostics: Record<string, unknown> }>(
        'SELECT device_id, app_version, diagnostics FROM live_devices WHERE box_id = $1',
        ['box-1'],
      );
      expect(device.rows[0]).toMatchObject({ device_id: 'pi-cloud', app_version: 'hivegate-agent/0.1.0', diagnostics: { fps: expect.any(Number), framesProcessed: expect.any(Number) } });

      expect(await browser.stop(active!.id)).toBe(true);
      await eventually(() => browser.read('box-1'), (s) => s === null, 20_000);
      const ended = await cloud.app.ctx.db.query<{ status: string }>('SELECT status FROM live_sessions WHERE id = $1', [active!.id]);
      expect(ended.rows[0]!.status).toBe('STOPPED');
      expect(logs.some((l) => l.includes(`stopping stream for session ${active!.id} (STOP_STREAM)`))).toBe(true);
      const framesAtStop = framesProcessed(stateDir);
      await eventually(async () => framesProcessed(stateDir), (n) => n > framesAtStop + 15, 10_000);
    } finally {
      stopAgent();
    }
    expect(await exit).toBe(0);
    expect(logs.filter((l) => /^live: .*failed|LIVE CONTROL STOPPED/.test(l))).toEqual([]);
  }, 120_000);
});
