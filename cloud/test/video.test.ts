import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pngjs from 'pngjs';
import { parseMediaPlaylist } from '../src/video/hls-playlist.ts';
import { resolveBinary } from '../src/video/ffmpeg.ts';
import { buildTestApp, createTestDatabase, createUser, FFMPEG_WAIT_MS, waitFor, type TestApp } from './helper.ts';

const CLIP_SECONDS = 6;
const FPS = 25;
const MAX_BYTES = 1024 * 1024;

let work: string;
let clip: Buffer;
let t: TestApp;
let base: string;

const UPLOAD = `mutation ($file: Upload!, $detectionsFile: Upload, $boxId: ID!, $startTime: DateTime) {
  uploadGateVideo(file: $file, detectionsFile: $detectionsFile, boxId: $boxId, startTime: $startTime)
}`;
const VIDEOS = `query ($boxId: ID!, $limit: Int) {
  gateVideos(boxId: $boxId, limit: $limit) { id boxId state progress failureReason startTime endTime durationSeconds width height sizeBytes posterURL playlistURL createdAt }
}`;
const STREAMS = `query ($boxIds: [ID], $active: Boolean) { videoStreams(boxIds: $boxIds, active: $active) { id maxSegment playlistURL active startTime endTime } }`;

interface Part {
  field: string;
  data: Buffer | string;
  filename: string;
  type: string;
}

/** The existing device's request: one multipart POST with the operation, the map, then the files. */
async function upload(origin: string, headers: Record<string, string>, variables: Record<string, unknown>, parts: Part[]) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: UPLOAD, variables: { file: null, detectionsFile: null, ...variables } }));
  const map: Record<string, string[]> = {};
  for (const part of parts) map[part.field] = [`variables.${part.field}`];
  form.append('map', JSON.stringify(map));
  for (const part of parts) form.append(part.field, new Blob([part.data], { type: part.type }), part.filename);
  const response = await fetch(`${origin}/graphql`, { method: 'POST', headers, body: form });
  return { status: response.status, body: (await response.json()) as { data?: { uploadGateVideo: boolean | null }; errors?: { message: string; extensions?: { code?: string } }[] } };
}

/**
 * Sends the head of a multipart upload declaring a body of `declaredBytes`, then only its first bytes, and waits for
 * the answer: a server that reads the body before it authenticates never answers this client.
 */
async function answerBeforeBody(origin: string, headers: Record<string, string>, declaredBytes = 60 * 1024 * 1024) {
  const boundary = `hivegate-${randomBytes(8).toString('hex')}`;
  const operations = JSON.stringify({ query: UPLOAD, variables: { file: null, boxId: 'zz' } });
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${operations}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n{"0":["variables.file"]}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="0"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const firstBytes = Buffer.concat([head, Buffer.alloc(64 * 1024)]);
  const request = httpRequest(`${origin}/graphql`, {
    method: 'POST',
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + declaredBytes) },
  });
  request.on('error', () => undefined);
  try {
    const answered = new Promise<IncomingMessage>((resolve) => request.once('response', resolve));
    request.write(firstBytes);
    const response = await Promise.race([
      answered,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer while the body was still being sent')), 10_000)),
    ]);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    return { status: response.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: unknown; errors?: { message: string; extensions?: { code?: string } }[] }, sentBytes: firstBytes.length };
  } finally {
    request.destroy();
  }
}

const videoPart = (data: Buffer | string = clip, filename = 'entrance.mp4'): Part => ({ field: 'file', data, filename, type: 'video/mp4' });
const detectionsPart = (data = '{"frames":[{"t":0,"boxes":[]}]}'): Part => ({ field: 'detectionsFile', data, filename: 'detections.json', type: 'application/json' });

async function gql(origin: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${origin}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', token }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: Record<string, unknown>; errors?: { message: string; extensions?: { code?: string } }[] };
}

interface VideoView {
  id: string;
  state: string;
  progress: number;
  failureReason: string | null;
  playlistURL: string | null;
  posterURL: string | null;
  [key: string]: unknown;
}

async function videosOf(origin: string, token: string, boxId: string | number): Promise<VideoView[]> {
  const result = await gql(origin, token, VIDEOS, { boxId });
  if (result.errors) throw new Error(result.errors[0]!.message);
  return result.data!.gateVideos as VideoView[];
}

async function waitForState(origin: string, token: string, boxId: string | number, state: string): Promise<VideoView> {
  return waitFor(async () => {
    const [video] = await videosOf(origin, token, boxId);
    if (video?.state === 'FAILED' && state !== 'FAILED') throw new Error(`transcode failed: ${video.failureReason}`);
    return video?.state === state ? video : null;
  }, `the video of box ${boxId} to be ${state}`, FFMPEG_WAIT_MS);
}

async function blobKeys(app: TestApp['app'], prefix = 'videos/'): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of app.ctx.blobs.list(prefix)) keys.push(entry.key);
  return keys;
}

function tempLeftovers(app: TestApp['app']): string[] {
  const dir = path.join(app.ctx.config.dataDir, 'tmp');
  return existsSync(dir) ? readdirSync(dir) : [];
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'hivegate-video-'));
  const clipFile = path.join(work, 'clip.mp4');
  // A short low-resolution test pattern with a tone, made here so nothing binary is committed.
  execFileSync(resolveBinary('ffmpeg', undefined), [
    '-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=${FPS}`, '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', String(CLIP_SECONDS), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '50', '-c:a', 'aac', '-shortest', clipFile,
  ]);
  clip = readFileSync(clipFile);
  t = await buildTestApp({
    video: { maxBytes: MAX_BYTES },
    jobs: { workers: 1, leaseSeconds: 30, pollSeconds: 2 },
    heatmaps: { grid: { cols: 160, rows: 120 }, renderDebounceSeconds: 0.2 },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);

afterAll(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a data dir that cannot be written', () => {
  // A read-only DATA_DIR answered "ENOENT: no such file or directory, mkdir '/…/tmp'": a server path and the wrong cause.
  it('answers an upload with "storage is unavailable", naming no server path', async () => {
    const { token } = await createUser(t.app, { scopes: ['control', 'read'] });
    const uploads = path.join(t.config.dataDir, 'tmp');
    rmSync(uploads, { recursive: true, force: true });
    writeFileSync(uploads, 'in the way of the upload folder');
    try {
      const uploaded = await upload(base, { authorization: `Bearer ${token}` }, { boxId: 9, startTime: '2026-05-01T10:00:00' }, [videoPart(), detectionsPart()]);
      expect(uploaded.body.errors).toEqual([expect.objectContaining({ message: 'storage is unavailable', extensions: { code: 'STORAGE_UNAVAILABLE' } })]);
      expect(JSON.stringify(uploaded.body)).not.toContain(t.config.dataDir);
    } finally {
      rmSync(uploads, { force: true });
    }
  });
});

describe('stored video', () => {
  let readyVideo: VideoView;
  let owner: Awaited<ReturnType<typeof createUser>>;

  it('takes the two-file upload, transcodes it to HLS and plays it through signed URLs', async () => {
    owner = await createUser(t.app, { scopes: ['control', 'read'] });
    const uploaded = await upload(base, { authorization: `Bearer ${owner.token}` }, { boxId: 7, startTime: '2026-05-01T10:00:00' }, [videoPart(), detectionsPart()]);
    expect(uploaded).toEqual({ status: 200, body: { data: { uploadGateVideo: true } } });

    readyVideo = await waitForState(base, owner.token, 7, 'READY');
    expect(readyVideo).toMatchObject({
      boxId: '7',
      progress: 100,
      failureReason: null,
      startTime: '2026-05-01T10:00:00.000Z',
      width: 320,
      height: 240,
      sizeBytes: clip.length,
    });
    expect(readyVideo.durationSeconds as number).toBeCloseTo(CLIP_SECONDS, 1);
    expect(Date.parse(readyVideo.endTime as string) - Date.parse('2026-05-01T10:00:00Z')).toBeCloseTo(CLIP_SECONDS * 1000, -2);
    expect(readyVideo.playlistURL).toMatch(new RegExp(`^${base}/media/\\d+\\.[\\w-]+/videos/${readyVideo.id}/index\\.m3u8$`));
    // Its segments are fetched under the playlist's grant while it plays: the grant lasts the clip's length longer
    // than the links' lifetime (a 3-hour clip started near the expiry stalled half-way).
    const expires = Number(/\/media\/(\d+)\./.exec(readyVideo.playlistURL!)![1]) * 1000;
    expect(expires - Date.now()).toBeGreaterThan((t.app.ctx.config.mediaUrlTtlSeconds + CLIP_SECONDS - 5) * 1000);
    expect(expires - Date.now()).toBeLessThanOrEqual((t.app.ctx.config.mediaUrlTtlSeconds + Math.ceil(CLIP_SECONDS) + 1) * 1000);

    // The playlist: VOD, real durations adding up to the clip, target = ceil(longest).
    const playlistResponse = await fetch(readyVideo.playlistURL!);
    expect(playlistResponse.status).toBe(200);
    expect(playlistResponse.headers.get('cache-control')).toBe('no-cache');
    const playlist = parseMediaPlaylist(await playlistResponse.text());
    expect(playlist).toMatchObject({ playlistType: 'VOD', endList: true, mediaSequence: 0 });
    const durations = playlist.segments.map((s) => s.durationSeconds);
    expect(durations.length).toBeGreaterThanOrEqual(3);
    expect(Math.abs(durations.reduce((a, b) => a + b, 0) - CLIP_SECONDS)).toBeLessThanOrEqual(1 / FPS);
    expect(playlist.targetDuration).toBe(Math.ceil(Math.max(...durations)));
    for (const d of durations.slice(0, -1)) expect(d).toBeGreaterThanOrEqual(1.9);

    // Every segment, fetched the way hls.js does (relative to the playlist URL, no headers), decodes.
    for (const segment of playlist.segments) {
      const response = await fetch(new URL(segment.uri, readyVideo.playlistURL!));
      expect(response.status, segment.uri).toBe(200);
      const file = path.join(work, segment.uri);
      writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      execFileSync(resolveBinary('ffmpeg', undefined), ['-v', 'error', '-xerror', '-i', file, '-f', 'null', '-']);
    }
    const ranged = await fetch(new URL(playlist.segments[0]!.uri, readyVideo.playlistURL!), { headers: { range: 'bytes=0-187' } });
    expect(ranged.status).toBe(206);
    expect((await ranged.arrayBuffer()).byteLength).toBe(188);

    const poster = await fetch(readyVideo.posterURL!);
    expect(poster.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await poster.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));

    const detections = await t.app.ctx.blobs.get(`videos/${readyVideo.id}/detections.json`);
    const chunks: Buffer[] = [];
    for await (const chunk of detections!.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('{"frames":[{"t":0,"boxes":[]}]}');
    expect(tempLeftovers(t.app)).toEqual([]);
  });

  it('answers the existing clients’ videoStreams query, numeric box ids included', async () => {
    const all = await gql(base, owner.token, STREAMS, { boxIds: [7], active: null });
    const [stream] = all.data!.videoStreams as Record<string, unknown>[];
    const segments = parseMediaPlaylist(await (await fetch(readyVideo.playlistURL!)).text()).segments.length;
    expect(stream).toMatchObject({ id: readyVideo.id, maxSegment: segments - 1, active: false, startTime: '2026-05-01T10:00:00.000Z', endTime: readyVideo.endTime });
    expect(stream!.playlistURL).toMatch(/\/index\.m3u8$/);
    expect((await fetch(stream!.playlistURL as string)).status).toBe(200);
    expect((await gql(base, owner.token, STREAMS, { boxIds: [7], active: true })).data!.videoStreams).toEqual([]);
    expect(((await gql(base, owner.token, STREAMS, {})).data!.videoStreams as unknown[]).length).toBeGreaterThanOrEqual(1);
  });

  it('draws the box’s heatmap over the newest video’s poster', async () => {
    const trackHistory = { '1': [[10, 10], [300, 200]] };
    const response = await fetch(`${base}/api/entrance-heatmaps/trajectories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(await t.app.ctx.tokens.issue({ userId: owner.user.id, name: 'device', scopes: ['ingest'], boxIds: null })).token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ boxId: 7, timestamp: '2026-05-01T10:00:03', frameDimensions: { width: 320, height: 240 }, trackHistory }),
    });
    expect(response.status).toBe(200);
    const day = await waitFor(async () => {
      const d = await t.app.ctx.heatmaps.get(owner.user.id, '7', '2026-05-01');
      return d?.imageKey ? d : null;
    }, 'the heatmap render', FFMPEG_WAIT_MS);
    const blob = await t.app.ctx.blobs.get(day.imageKey!);
    const chunks: Buffer[] = [];
    for await (const chunk of blob!.body) chunks.push(chunk as Buffer);
    const png = pngjs.PNG.sync.read(Buffer.concat(chunks));
    // The bottom-left corner has no bee path: without a still it would be transparent; here it is the frame.
    const corner = (png.height - 2) * png.width * 4 + 8;
    expect(png.data[corner + 3]).toBe(255);
  });

  it('shows nothing of one user’s videos to another and never issues their URLs', async () => {
    const stranger = await createUser(t.app);
    expect(await videosOf(base, stranger.token, 7)).toEqual([]);
    expect((await gql(base, stranger.token, STREAMS, { boxIds: [7] })).data!.videoStreams).toEqual([]);
    expect((await gql(base, stranger.token, STREAMS, {})).data!.videoStreams).toEqual([]);
    expect((await gql(base, stranger.token, `query ($id: ID!) { gateVideo(id: $id) { id playlistURL } }`, { id: readyVideo.id })).data!.gateVideo).toBeNull();
    // A signed URL of one video grants nothing else.
    const other = readyVideo.playlistURL!.replace(`/videos/${readyVideo.id}/`, `/videos/${Number(readyVideo.id) + 1}/`);
    expect((await fetch(other)).status).toBe(403);
  });

  // A Pi camera's raw .h264 was refused ("it has no duration") and Motion JPEG passed for a still image.
  it('takes a raw H.264 stream and Motion JPEG, timed by their frames', async () => {
    const user = await createUser(t.app, { scopes: ['ingest', 'read'] });
    const raw = path.join(work, 'camera.h264');
    const mjpeg = path.join(work, 'camera.mjpeg');
    const ffmpeg = resolveBinary('ffmpeg', undefined);
    execFileSync(ffmpeg, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=30', '-t', '4', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-f', 'h264', raw]);
    execFileSync(ffmpeg, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-t', '2', '-c:v', 'mjpeg', '-f', 'mjpeg', mjpeg]);
    for (const [file, boxId, seconds] of [[raw, 'raw-h264', 4], [mjpeg, 'raw-mjpeg', 2]] as const) {
      const result = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId }, [videoPart(readFileSync(file), path.basename(file))]);
      expect(result.body, boxId).toEqual({ data: { uploadGateVideo: true } });
      const ready = await waitForState(base, user.token, boxId, 'READY');
      expect(ready.durationSeconds as number, boxId).toBeCloseTo(seconds, 1);
      // Whole milliseconds: the segments' sum came out as 2.9999999999999996.
      expect(String(ready.durationSeconds), boxId).toMatch(/^\d+(\.\d{1,3})?$/);
      expect(ready).toMatchObject({ width: 320, height: 240 });
    }
  });

  // A 4K clip was transcoded at 4K: minutes of both cores per 10 s, holding up every job behind it.
  it('plays a clip larger than 1920×1080 at 1920×1080', async () => {
    const user = await createUser(t.app, { scopes: ['ingest', 'read'] });
    const large = path.join(work, 'large.mp4');
    execFileSync(resolveBinary('ffmpeg', undefined), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=green:size=2560x1440:rate=10', '-t', '1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', large]);
    expect((await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'qhd' }, [videoPart(readFileSync(large), 'large.mp4')])).body).toEqual({ data: { uploadGateVideo: true } });
    const ready = await waitForState(base, user.token, 'qhd', 'READY');
    expect(ready).toMatchObject({ width: 2560, height: 1440 }); // as recorded
    const playlist = parseMediaPlaylist(await (await fetch(ready.playlistURL!)).text());
    const segment = path.join(work, 'large-segment.ts');
    writeFileSync(segment, Buffer.from(await (await fetch(new URL(playlist.segments[0]!.uri, ready.playlistURL!))).arrayBuffer()));
    const size = execFileSync(resolveBinary('ffprobe', undefined), ['-v', 'error', '-select_streams', 'v', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', segment], { encoding: 'utf8' });
    expect(new Set(size.trim().split(/\s+/))).toEqual(new Set(['1920,1080'])); // the stream, once per MPEG-TS program too
  });

  // A camera retrying an upload whose answer it never got stored the clip again, once per retry.
  it('keeps one clip when the same bytes come again for the same box, also at once', async () => {
    const user = await createUser(t.app, { scopes: ['ingest', 'read'] });
    const auth = { authorization: `Bearer ${user.token}` };
    const before = await blobKeys(t.app);
    const results = await Promise.all([1, 2, 3].map(() => upload(base, auth, { boxId: 'retry', startTime: '2026-05-02T09:00:00Z' }, [videoPart()])));
    for (const result of results) expect(result.body).toEqual({ data: { uploadGateVideo: true } });
    await waitForState(base, user.token, 'retry', 'READY');
    expect((await upload(base, auth, { boxId: 'retry' }, [videoPart()])).body).toEqual({ data: { uploadGateVideo: true } });
    expect(await videosOf(base, user.token, 'retry')).toHaveLength(1);
    const originals = (await blobKeys(t.app)).filter((key) => !before.includes(key) && /\/original\./.test(key));
    expect(originals).toHaveLength(1); // the copies' files were not kept either
    // Other bytes, or the same bytes for another box, are another clip.
    expect((await upload(base, auth, { boxId: 'retry-2' }, [videoPart()])).body).toEqual({ data: { uploadGateVideo: true } });
    await waitForState(base, user.token, 'retry-2', 'READY');
    // The transcode's working folder was removed only after the clip was READY, so a reader could still find it.
    expect(tempLeftovers(t.app)).toEqual([]);
  });

  it('refuses a file that is not a video and leaves nothing behind', async () => {
    const user = await createUser(t.app, { scopes: ['ingest', 'read'] });
    const before = await blobKeys(t.app);
    const result = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'x' }, [
      videoPart('this is not a video, only a line of text\n'.repeat(50), 'notes.mp4'),
      detectionsPart(),
    ]);
    expect(result.body.data?.uploadGateVideo).toBeNull();
    expect(result.body.errors?.[0]).toMatchObject({ message: 'file is not a video: no video format was recognised in it', extensions: { code: 'BAD_USER_INPUT' } });
    const png = (await pngjs.PNG.sync.write(new pngjs.PNG({ width: 4, height: 4 }))) as Buffer;
    const still = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'x' }, [videoPart(png, 'still.png')]);
    expect(still.body.errors?.[0]?.message).toBe('file is not a video: it is a still image (png)');
    // Broke: an HLS playlist uploaded as a clip made ffmpeg read the local files it named (another user's original
    // came back as the uploader's clip). A file the server holds, named by its absolute path:
    const elsewhere = path.join(work, 'someone-elses.mp4');
    writeFileSync(elsewhere, clip);
    const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:6.0,\n${elsewhere}\n#EXT-X-ENDLIST\n`;
    for (const filename of ['clip.mp4', 'clip.m3u8']) {
      const smuggled = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'x' }, [videoPart(playlist, filename)]);
      expect(smuggled.body.errors?.[0]?.message, filename).toBe('file is not a video: no video format was recognised in it');
    }
    const concat = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'x' }, [videoPart(`ffconcat version 1.0\nfile '${elsewhere}'\n`, 'list.mp4')]);
    expect(concat.body.errors?.[0]?.message).toBe('file is not a video: no video format was recognised in it');
    // Broke: a startTime in 1970 or 2099 (a camera's unset clock) was stored as given.
    const unsetClock = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'x', startTime: '1970-01-01T00:00:00Z' }, [videoPart()]);
    expect(unsetClock.body.errors?.[0]).toMatchObject({ message: "startTime 1970-01-01T00:00:00.000Z is before 2000: is the device's clock set?", extensions: { code: 'BAD_USER_INPUT' } });
    const ahead = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'x', startTime: '2099-01-01T00:00:00Z' }, [videoPart()]);
    expect(ahead.body.errors?.[0]?.message).toMatch(/^startTime 2099-01-01T00:00:00.000Z is more than a day ahead of the server's clock/);
    expect(await videosOf(base, user.token, 'x')).toEqual([]);
    expect(await blobKeys(t.app)).toEqual(before);
    expect(tempLeftovers(t.app)).toEqual([]);
  });

  it('refuses an upload over VIDEO_MAX_BYTES with a clear error and leaves nothing behind', async () => {
    const user = await createUser(t.app, { scopes: ['ingest', 'read'] });
    const before = await blobKeys(t.app);
    const result = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'big' }, [videoPart(randomBytes(MAX_BYTES + 200_000))]);
    expect(result.body.errors?.[0]).toMatchObject({ message: 'file is larger than the 1 MB limit (VIDEO_MAX_BYTES)', extensions: { code: 'PAYLOAD_TOO_LARGE' } });
    const detectionsTooBig = await upload(base, { authorization: `Bearer ${user.token}` }, { boxId: 'big' }, [videoPart(), detectionsPart(`[${'0,'.repeat(MAX_BYTES / 2)}0]`)]);
    expect(detectionsTooBig.body.errors?.[0]?.message).toBe('detectionsFile is larger than the 1 MB limit (VIDEO_MAX_BYTES)');
    expect(await videosOf(base, user.token, 'big')).toEqual([]);
    expect(await blobKeys(t.app)).toEqual(before);
    expect(tempLeftovers(t.app)).toEqual([]);
  });

  it('checks the token: scope and box; refusals do not hang the request', async () => {
    const reader = await createUser(t.app, { scopes: ['read'] });
    const refused = await upload(base, { authorization: `Bearer ${reader.token}` }, { boxId: 1 }, [videoPart(), detectionsPart()]);
    expect(refused.body.errors?.[0]).toMatchObject({ message: 'this token lacks the "control" or "ingest" scope', extensions: { code: 'FORBIDDEN' } });
    const device = await createUser(t.app, { scopes: ['ingest', 'read'], boxIds: ['1'] });
    const otherBox = await upload(base, { token: device.token }, { boxId: 2 }, [videoPart()]);
    expect(otherBox.body.errors?.[0]).toMatchObject({ message: 'this token may not act for box "2"', extensions: { code: 'FORBIDDEN' } });
    const invalidQuery = await upload(base, { token: device.token }, { boxId: null }, [videoPart()]);
    expect(invalidQuery.body.errors?.[0]?.message).toContain('boxId');
    expect(await videosOf(base, device.token, 1)).toEqual([]);
  });

  // A multipart upload with a bad, revoked or missing token was read in full (60 MB) before "token is invalid" came back.
  it('refuses an upload without a valid token that may upload before reading its body', async () => {
    const garbage = await answerBeforeBody(base, { token: 'x' });
    expect(garbage).toMatchObject({ status: 401, body: { data: null, errors: [{ message: 'token is invalid', extensions: { code: 'UNAUTHENTICATED' } }] } });
    const revoked = await createUser(t.app, { scopes: ['ingest'] });
    await t.app.ctx.tokenRecords.revoke(revoked.tokenId);
    await t.app.ctx.tokens.forget(revoked.tokenId);
    const afterRevocation = await answerBeforeBody(base, { authorization: `Bearer ${revoked.token}` });
    expect(afterRevocation).toMatchObject({ status: 401, body: { errors: [{ message: 'token has been revoked', extensions: { code: 'UNAUTHENTICATED' } }] } });
    const headerOnly = await answerBeforeBody(base, { 'x-requested-with': '1' });
    expect(headerOnly).toMatchObject({ status: 401, body: { errors: [{ message: expect.stringMatching(/^missing token/), extensions: { code: 'UNAUTHENTICATED' } }] } });
    const reader = await createUser(t.app, { scopes: ['read'] });
    const readOnly = await answerBeforeBody(base, { token: reader.token });
    expect(readOnly).toMatchObject({ status: 403, body: { errors: [{ message: 'this token lacks the "control" or "ingest" scope', extensions: { code: 'FORBIDDEN' } }] } });
  });

  it('takes an upload signed in by the session cookie only with the CSRF proof header that forms from other sites cannot send', async () => {
    const owner = await createUser(t.app, { scopes: ['*'] });
    const cookie = `service_session=${owner.token}`;
    // What any page could make a browser send: a multipart form with the cookie and no header of its own.
    const forged = await upload(base, { cookie, origin: 'https://elsewhere.example' }, { boxId: 'csrf' }, [videoPart()]);
    expect(forged.status).toBe(403);
    expect(forged.body.errors?.[0]?.message).toBe(
      'multipart requests must carry the token in the Authorization or token header, or (signed in with the session cookie) an x-requested-with header',
    );
    const blank = await upload(base, { cookie, 'x-requested-with': ' ', token: '' }, { boxId: 'csrf' }, [videoPart()]);
    expect(blank.status).toBe(403);
    expect(await videosOf(base, owner.token, 'csrf')).toEqual([]);
    // The web app's request: the cookie and the header (which a page of another origin could send only after a preflight).
    const fromApp = await upload(base, { cookie, 'x-requested-with': 'XMLHttpRequest' }, { boxId: 'csrf' }, [videoPart()]);
    expect(fromApp.body).toEqual({ data: { uploadGateVideo: true } });
    expect(await videosOf(base, owner.token, 'csrf')).toHaveLength(1);
  });

  it('accepts the two files in either order', async () => {
    const user = await createUser(t.app, { scopes: ['control', 'read'] });
    const result = await upload(base, { token: user.token }, { boxId: 'reverse' }, [detectionsPart(), videoPart()]);
    expect(result.body).toEqual({ data: { uploadGateVideo: true } });
    const [video] = await videosOf(base, user.token, 'reverse');
    expect(video).toMatchObject({ width: 320, height: 240 });
    expect(await t.app.ctx.blobs.head(`videos/${video!.id}/detections.json`)).not.toBeNull();
  });

  it('stores a live session handed over as a clip like an upload', async () => {
    const user = await createUser(t.app, { scopes: ['control', 'read'] });
    const clipFile = path.join(work, 'clip.mp4');
    const startedAt = new Date('2026-05-02T08:30:00Z');
    const { streamId } = await t.app.ctx.videoService.acceptLiveClip({
      sessionId: 'session-1',
      ownerId: user.user.id,
      boxId: 'live-box',
      startedAt,
      endedAt: new Date(startedAt.getTime() + CLIP_SECONDS * 1000),
      segmentCount: 3,
      open: async () => createReadStream(clipFile),
    });
    const ready = await waitForState(base, user.token, 'live-box', 'READY');
    expect(ready).toMatchObject({ id: streamId, startTime: startedAt.toISOString(), width: 320, height: 240 });
  });

  // Paging by `to` skipped clips that start at the same time as the last one of a page.
  it('pages through a box\'s clips by the last one listed, clips starting together included', async () => {
    const user = await createUser(t.app, { scopes: ['read'] });
    const ids: string[] = [];
    for (const minute of [0, 1, 1, 1, 2]) {
      const id = await t.app.ctx.videos.reserveId();
      await t.app.ctx.videos.create(id, {
        ownerId: user.user.id, boxId: 'pages', startTime: new Date(Date.UTC(2026, 4, 3, 10, minute)), durationSeconds: 1, width: 320, height: 240, hasAudio: false,
        sizeBytes: 1, originalKey: `videos/${id}/original.mp4`, detectionsKey: null, contentSha256: `sha-${id}`,
      });
      ids.push(id);
    }
    const page = async (after: string | null) =>
      ((await gql(base, user.token, `query ($after: ID) { gateVideos(boxId: "pages", limit: 2, after: $after) { id } }`, { after })).data!.gateVideos as { id: string }[]).map((v) => v.id);
    const seen: string[] = [];
    for (let next = await page(null); next.length > 0; next = await page(seen.at(-1)!)) seen.push(...next);
    expect(seen).toEqual([ids[4], ids[3], ids[2], ids[1], ids[0]]);
    const stranger = await gql(base, user.token, `{ gateVideos(boxId: "elsewhere", after: "${ids[0]}") { id } }`);
    expect(stranger.errors?.[0]?.message).toBe(`after names no video of box elsewhere: ${ids[0]}`);
  });

  it('refuses bad list arguments clearly', async () => {
    const result = await gql(base, owner.token, VIDEOS, { boxId: 7, limit: 0 });
    expect(result.errors?.[0]).toMatchObject({ message: 'limit must be from 1 to 500, got 0', extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('deleting a video', () => {
  const DELETE = `mutation ($id: ID!) { deleteGateVideo(id: $id) }`;

  it('removes the row and every file; its signed URLs stop working; strangers and repeats are refused', async () => {
    const owner = await createUser(t.app, { scopes: ['ingest', 'read', 'control'] });
    const sent = await upload(base, { authorization: `Bearer ${owner.token}` }, { boxId: 'del-1' }, [videoPart(), detectionsPart()]);
    expect(sent.body.errors).toBeUndefined();
    const video = await waitForState(base, owner.token, 'del-1', 'READY');
    expect((await blobKeys(t.app, `videos/${video.id}/`)).length).toBeGreaterThan(3);

    const stranger = await createUser(t.app, { scopes: ['read', 'control'] });
    expect((await gql(base, stranger.token, DELETE, { id: video.id })).errors?.[0]?.message).toBe(`no video with id "${video.id}"`);
    const reader = await createUser(t.app, { scopes: ['read'] });
    expect((await gql(base, reader.token, DELETE, { id: video.id })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await blobKeys(t.app, `videos/${video.id}/`)).not.toEqual([]);

    expect(await gql(base, owner.token, DELETE, { id: video.id })).toEqual({ data: { deleteGateVideo: true } });
    expect(await blobKeys(t.app, `videos/${video.id}/`)).toEqual([]);
    expect(await videosOf(base, owner.token, 'del-1')).toEqual([]);
    expect((await fetch(video.playlistURL!)).status).toBe(404);
    expect((await gql(base, owner.token, DELETE, { id: video.id })).errors?.[0]?.message).toBe(`no video with id "${video.id}"`);
    expect((await gql(base, owner.token, DELETE, { id: 'not-a-number' })).errors?.[0]?.message).toBe('no video with id "not-a-number"');
  });

  it('leaves no files behind when the video is deleted while it is being transcoded', async () => {
    const owner = await createUser(t.app, { scopes: ['ingest', 'read', 'control'] });
    // Holds the transcode just before it writes the playlist (its segments and poster are stored by then).
    const blobs = t.app.ctx.blobs;
    const put = blobs.put.bind(blobs);
    let reached!: () => void;
    const atPlaylist = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    blobs.put = async (key, body, opts) => {
      if (key.endsWith('/index.m3u8')) {
        reached();
        await released;
      }
      return put(key, body, opts);
    };
    try {
      await upload(base, { authorization: `Bearer ${owner.token}` }, { boxId: 'del-2' }, [videoPart()]);
      await atPlaylist;
      const [video] = await videosOf(base, owner.token, 'del-2');
      expect(video?.state).toBe('PROCESSING');
      expect(await gql(base, owner.token, DELETE, { id: video!.id })).toEqual({ data: { deleteGateVideo: true } });
      release();
      const job = await waitFor(async () => {
        const jobs = await t.app.ctx.jobs.list<{ videoId: string }>('video.transcode');
        return jobs.find((j) => j.payload.videoId === video!.id && j.state === 'done');
      }, 'the transcode job to end', FFMPEG_WAIT_MS);
      expect(job.attempts).toBe(1);
      // Regression: a transcode that outlived its video used to store its playlist and mark nothing READY.
      expect(await blobKeys(t.app, `videos/${video!.id}/`)).toEqual([]);
      expect(await videosOf(base, owner.token, 'del-2')).toEqual([]);
    } finally {
      blobs.put = put;
      release();
    }
  });
});

describe('files without a video row', () => {
  it('are swept once they are old enough; an upload being stored and every stored video are left alone', async () => {
    // As a crash between storing an upload's files and inserting its row leaves them.
    const id = await t.app.ctx.videos.reserveId();
    await t.app.ctx.blobs.put(`videos/${id}/original.mp4`, Buffer.from('stored, then the process died'));
    const before = await blobKeys(t.app);
    expect(await t.app.ctx.videoService.sweepOrphanedFiles()).toEqual({ videos: 0, files: 0 });
    expect(await blobKeys(t.app)).toEqual(before);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await t.app.ctx.videoService.sweepOrphanedFiles(10)).toEqual({ videos: 1, files: 1 });
    expect(await blobKeys(t.app)).toEqual(before.filter((key) => !key.startsWith(`videos/${id}/`)));
    expect(before.filter((key) => !key.startsWith(`videos/${id}/`)).length).toBeGreaterThan(0);
  });
});

describe('a restart during transcoding', () => {
  it('hands the job over: the next instance on the same database finishes it READY', async () => {
    const database = await createTestDatabase();
    const storage = { kind: 'fs' as const, dir: path.join(work, 'shared-blobs') };
    // A wrapper that makes ffmpeg read its input at twice real time, so the transcode lasts long enough to be
    // interrupted at a known point (the only difference to the real binary).
    const slowFfmpeg = path.join(work, 'slow-ffmpeg');
    writeFileSync(slowFfmpeg, `#!/bin/sh\nexec "${resolveBinary('ffmpeg', undefined)}" -readrate 2 "$@"\n`);
    chmodSync(slowFfmpeg, 0o755);
    const jobs = { workers: 1, leaseSeconds: 30, pollSeconds: 1 };
    const first = await buildTestApp({ storage, jobs, video: { maxBytes: MAX_BYTES, ffmpegPath: slowFfmpeg } }, database);
    let second: TestApp | undefined;
    try {
      const origin = await first.app.listen({ port: 0, host: '127.0.0.1' });
      const user = await createUser(first.app, { scopes: ['control', 'read'] });
      expect((await upload(origin, { token: user.token }, { boxId: 'r' }, [videoPart()])).body).toEqual({ data: { uploadGateVideo: true } });
      const midway = await waitFor(async () => {
        const [video] = await videosOf(origin, user.token, 'r');
        return video?.state === 'PROCESSING' && video.progress > 0 ? video : null;
      }, 'visible progress', FFMPEG_WAIT_MS);
      expect(midway.progress).toBeLessThan(100);
      await first.close();

      // Stopping handed the job back at once (not after its lease), without counting the attempt.
      const check = new pg.Client({ connectionString: database.url });
      await check.connect();
      const { rows } = await check.query(`SELECT state, attempts, locked_by FROM jobs WHERE kind = 'video.transcode'`);
      await check.end();
      expect(rows).toEqual([{ state: 'queued', attempts: 0, locked_by: null }]);
      second = await buildTestApp({ storage, jobs, video: { maxBytes: MAX_BYTES } }, database);
      const origin2 = await second.app.listen({ port: 0, host: '127.0.0.1' });
      const ready = await waitForState(origin2, user.token, 'r', 'READY');
      const playlist = parseMediaPlaylist(await (await fetch(ready.playlistURL!)).text());
      expect(Math.abs(playlist.segments.reduce((a, s) => a + s.durationSeconds, 0) - CLIP_SECONDS)).toBeLessThanOrEqual(1 / FPS);
      // The video turns READY before the queue marks its job done; read the job once it has left 'running'.
      const record = await waitFor(async () => {
        const [job] = await second!.app.ctx.jobs.list<{ videoId: string }>('video.transcode');
        return job && job.state !== 'running' ? job : null;
      }, 'the transcode job to finish', 10_000);
      expect(record).toMatchObject({ state: 'done', attempts: 1, payload: { videoId: ready.id } });
    } finally {
      await second?.close();
      await first.close().catch(() => undefined);
      await database.drop();
    }
  });
});
