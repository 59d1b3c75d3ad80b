import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config.ts';
import { loadMigrations } from '../src/db/migrate.ts';
import { parseMediaPlaylist as parseLivePlaylist } from '../src/live/playlist.ts';
import { parseMediaPlaylist as parseVodPlaylist } from '../src/video/hls-playlist.ts';
import { buildTestApp, createTestDatabase, createUser, type TestApp } from './helper.ts';
import { eventually, fastLiveConfig, SESSION_FIELDS, type DeviceCommand, type SessionView } from './live-helpers.ts';

/**
 * Two stateless instances behind an imaginary load balancer: one Postgres database and one S3 bucket (s3rver on
 * loopback), nothing else shared. Each request below goes to the instance a balancer might have picked, and the
 * answer must not depend on which one it was. The Pi camera cannot run here: the device's REST calls are made by
 * the test, and ffmpeg's lavfi test pattern stands in for the camera.
 */
const CLIP_SECONDS = 4;
const FPS = 15;

let work: string;
let clip: Buffer;
let s3: S3rver;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let a: TestApp;
let b: TestApp;
let originA: string;
let originB: string;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'hivegate-scale-'));
  const clipFile = path.join(work, 'clip.mp4');
  execFileSync('ffmpeg', [
    '-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=${FPS}`, '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', String(CLIP_SECONDS), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', String(2 * FPS), '-c:a', 'aac', '-shortest', clipFile,
  ]);
  clip = readFileSync(clipFile);

  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(work, 's3') });
  const { port } = await s3.run();
  database = await createTestDatabase();
  const shared: Partial<Config> = {
    storage: { kind: 's3', endpoint: `http://127.0.0.1:${port}`, bucket: 'hivegate-scale', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true, createBucket: true },
    jobs: { workers: 1, leaseSeconds: 30, pollSeconds: 2 },
    video: { maxBytes: 4 * 1024 * 1024 },
    live: fastLiveConfig({ keepaliveTimeoutSeconds: 30, stopGraceSeconds: 5 }),
  };
  // Started together, as an orchestrator rolls out replicas: both race for the migrations and the bucket.
  [a, b] = await Promise.all([buildTestApp(shared, database), buildTestApp(shared, database)]);
  originA = await a.app.listen({ port: 0, host: '127.0.0.1' });
  originB = await b.app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await database?.drop();
  await s3?.close();
  rmSync(work, { recursive: true, force: true });
});

async function gql<T>(origin: string, token: string, query: string, variables: Record<string, unknown>, field: string): Promise<T> {
  const response = await fetch(`${origin}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', token }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: Record<string, T>; errors?: { message: string }[] };
  if (body.errors) throw new Error(`${origin}: ${body.errors[0]!.message}`);
  return body.data![field]!;
}

async function device(origin: string, token: string, path: string, body: Record<string, unknown>) {
  const response = await fetch(`${origin}/api/entrance-live/device/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path} on ${origin} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const startLive = (origin: string, token: string, boxId: string) =>
  gql<SessionView>(origin, token, `mutation ($boxId: ID!) { startEntranceLiveStream(boxId: $boxId) { ${SESSION_FIELDS} } }`, { boxId }, 'startEntranceLiveStream');
const readLive = (origin: string, token: string, boxId: string) =>
  gql<SessionView | null>(origin, token, `query ($boxId: ID!) { entranceLiveStreamSession(boxId: $boxId) { ${SESSION_FIELDS} } }`, { boxId }, 'entranceLiveStreamSession');

/** Decodes media with ffprobe (every frame) and returns how many video frames it held. */
function decodedFrames(media: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', '-i', 'pipe:0']);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    // MPEG-TS lists the stream once per program too: the first line is the count.
    child.on('close', (code) => (code === 0 && err === '' ? resolve(Number(out.trim().split('\n')[0])) : reject(new Error(`ffprobe failed: ${err}`))));
    child.stdin.on('error', () => undefined);
    Readable.from([media]).pipe(child.stdin);
  });
}

async function fetchBytes(url: string): Promise<Buffer> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

describe('two instances on one database and one bucket', () => {
  it('both came up, the schema was migrated once, and a token issued on one is accepted by the other', async () => {
    const { rows } = await a.app.ctx.db.query<{ version: number; name: string; batches: number }>(
      `SELECT version, name, count(*) OVER (PARTITION BY applied_at)::int AS batches FROM schema_migrations ORDER BY version`,
    );
    const migrations = loadMigrations();
    expect(rows.map((r) => [r.version, r.name])).toEqual(migrations.map((m) => [m.version, m.name]));
    // One transaction applied them all (its now() is shared): the other instance found nothing left to do.
    expect(rows.every((r) => r.batches === migrations.length)).toBe(true);
    for (const origin of [originA, originB]) expect((await fetch(`${origin}/health`)).status).toBe(200);

    // Neither was given JWT_SECRET: both use the one the first stored in the database.
    const { token } = await createUser(a.app);
    expect(await gql(originB, token, '{ __typename }', {}, '__typename')).toBe('Query');
  });

  it('a live command created through A reaches a device long-polling B', async () => {
    const { token } = await createUser(a.app, { scopes: ['control', 'read', 'device'] });
    const box = 'scale-live-command';
    await device(originB, token, 'status', { boxId: box, cameraStatus: 'ok', publisherState: 'idle' });
    const polling = device(originB, token, 'poll', { boxId: box, waitSeconds: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the poll park on B
    const startedAt = Date.now();
    const session = await startLive(originA, token, box);
    const { commands } = (await polling) as { commands: DeviceCommand[] };
    // Woken through Postgres NOTIFY, not by the end of the 10 s wait.
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(commands).toMatchObject([{ commandType: 'START_STREAM', sessionId: session.id }]);
  });

  it('a video uploaded to A is transcoded by a worker of either instance and plays from B', async () => {
    const { token } = await createUser(a.app, { scopes: ['control', 'read'] });
    const box = 'scale-video';
    const form = new FormData();
    const query = 'mutation ($file: Upload!, $detectionsFile: Upload, $boxId: ID!) { uploadGateVideo(file: $file, detectionsFile: $detectionsFile, boxId: $boxId) }';
    form.append('operations', JSON.stringify({ query, variables: { file: null, detectionsFile: null, boxId: box } }));
    form.append('map', JSON.stringify({ file: ['variables.file'], detectionsFile: ['variables.detectionsFile'] }));
    form.append('file', new Blob([clip], { type: 'video/mp4' }), 'entrance.mp4');
    form.append('detectionsFile', new Blob(['{"frames":[]}'], { type: 'application/json' }), 'detections.json');
    const uploaded = await fetch(`${originA}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(await uploaded.json()).toEqual({ data: { uploadGateVideo: true } });

    // Which instance runs the transcode is up to whoever claims the job first; watch the lease to see it.
    const workers = new Map([[a.app.ctx.jobs.workerId, 'A'], [b.app.ctx.jobs.workerId, 'B']]);
    const runners = new Set<string>();
    const videosQuery = `query ($boxId: ID!) { gateVideos(boxId: $boxId) { id state failureReason playlistURL } }`;
    type Video = { id: string; state: string; failureReason: string | null; playlistURL: string | null };
    const ready = await eventually(
      async () => {
        const { rows } = await b.app.ctx.db.query<{ locked_by: string | null }>(`SELECT locked_by FROM jobs WHERE kind = 'video.transcode' AND state = 'running'`);
        for (const row of rows) if (row.locked_by) runners.add(row.locked_by);
        const [video] = await gql<Video[]>(originB, token, videosQuery, { boxId: box }, 'gateVideos');
        if (video?.state === 'FAILED') throw new Error(`transcode failed: ${video.failureReason}`);
        return video;
      },
      (video) => video?.state === 'READY',
      30_000,
    );
    for (const runner of runners) expect(workers.has(runner), `job leased by an unknown worker ${runner}`).toBe(true);
    // The handler marks the video READY before the queue marks its job done; CI once read the job in between.
    const [job] = await eventually(() => b.app.ctx.jobs.list('video.transcode'), ([first]) => first?.state !== 'running', 10_000);
    expect(job).toMatchObject({ state: 'done', attempts: 1 });
    console.info(`transcode ran on instance ${[...runners].map((r) => workers.get(r)).join(', ') || '(finished between samples)'}`);

    // B signs the URL for its own origin and serves it from the shared bucket.
    expect(ready!.playlistURL!.startsWith(`${originB}/media/`)).toBe(true);
    const playlist = parseVodPlaylist((await fetchBytes(ready!.playlistURL!)).toString());
    expect(playlist.endList).toBe(true);
    expect(playlist.segments.reduce((sum, s) => sum + s.durationSeconds, 0)).toBeCloseTo(CLIP_SECONDS, 0);
    const frames = await Promise.all(playlist.segments.map(async (s) => decodedFrames(await fetchBytes(new URL(s.uri, ready!.playlistURL!).toString()))));
    expect(frames.reduce((sum, n) => sum + n, 0)).toBe(CLIP_SECONDS * FPS);

    const streams = await gql<{ id: string; playlistURL: string }[]>(originB, token, `query ($boxIds: [ID]) { videoStreams(boxIds: $boxIds) { id playlistURL } }`, { boxIds: [box] }, 'videoStreams');
    // Signed again on this read (the grant's expiry may differ by a second), for the same playlist on B.
    expect(streams).toEqual([{ id: ready!.id, playlistURL: expect.stringMatching(new RegExp(`^${originB}/media/[^/]+/videos/${ready!.id}/index\\.m3u8$`)) }]);
    expect((await fetchBytes(streams[0]!.playlistURL)).toString()).toContain('#EXT-X-ENDLIST');
  }, 60_000);

  it('a live stream published to A plays from B', async () => {
    const { token } = await createUser(a.app, { scopes: ['control', 'read', 'device'] });
    const box = 'scale-live-media';
    await device(originB, token, 'status', { boxId: box, cameraStatus: 'ok', publisherState: 'idle' });
    const session = await startLive(originA, token, box);
    const { commands } = (await device(originB, token, 'poll', { boxId: box, waitSeconds: 5 })) as { commands: DeviceCommand[] };
    const [start] = commands;
    expect(start).toMatchObject({ commandType: 'START_STREAM', sessionId: session.id });
    await device(originB, token, 'command-ack', { boxId: box, commandId: start!.id, status: 'accepted', payload: { sessionId: session.id } });

    // The payload names the origin the device polled (B). Behind a balancer both share PUBLIC_URL; here the
    // publish is sent to A on purpose, so that media written by one instance must be served by the other.
    const { publisherUrl, publishToken } = start!.payload as { publisherUrl: string; publishToken: string };
    expect(publisherUrl.startsWith(originB)).toBe(true);
    const publishToA = new URL(new URL(publisherUrl).pathname, originA).toString();
    const publishing = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn('ffmpeg', [
        '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=${FPS}`, '-t', '4',
        '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', String(FPS), '-pix_fmt', 'yuv420p',
        '-f', 'hls', '-method', 'PUT', '-http_persistent', '1', '-hls_time', '1', '-hls_list_size', '3',
        '-hls_flags', 'delete_segments+program_date_time', '-headers', `Authorization: Bearer ${publishToken}\r\n`, publishToA,
      ], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });

    const active = await eventually(() => readLive(originB, token, box), (s) => s?.status === 'ACTIVE' && s.playbackUrl !== null, 8000);
    expect(active!.playbackUrl!.startsWith(`${originB}/media/`)).toBe(true);
    const playlist = parseLivePlaylist((await fetchBytes(active!.playbackUrl!)).toString());
    expect(playlist.segments.length).toBeGreaterThan(0);
    const segment = await fetchBytes(new URL(playlist.segments.at(-1)!, active!.playbackUrl!).toString());
    expect(await decodedFrames(segment)).toBeGreaterThanOrEqual(FPS - 1);
    expect(await publishing).toEqual({ code: 0, stderr: '' });

    expect(await gql<boolean>(originB, token, `mutation ($id: ID!) { stopEntranceLiveStream(sessionId: $id) }`, { id: session.id }, 'stopEntranceLiveStream')).toBe(true);
  }, 30_000);
});
