import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveClip } from '../src/live/clip.ts';
import { parseMediaPlaylist } from '../src/live/playlist.ts';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { eventually, fastLiveConfig, SESSION_FIELDS, subscribeToSessions, type DeviceCommand, type SessionView } from './live-helpers.ts';

/**
 * The whole live loop over real HTTP with the real ffmpeg as the publisher (lavfi test pattern instead of the Pi
 * camera, which cannot run here; the device's REST calls are made by the test as the agent would make them).
 */
let t: TestApp;
let base: string;
const handedOff: { clip: LiveClip; bytes: Buffer }[] = [];

beforeAll(async () => {
  t = await buildTestApp(
    { live: fastLiveConfig({ keepaliveTimeoutSeconds: 20, stopGraceSeconds: 5 }) },
    undefined,
    {
      liveClipHandoff: async (clip) => {
        const stream = await clip.open();
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        handedOff.push({ clip, bytes: Buffer.concat(chunks) });
        return { streamId: `stored-${clip.sessionId.slice(0, 8)}` };
      },
    },
  );
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(() => t.close());

async function http(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const response = await fetch(path.startsWith('http') ? path : `${base}${path}`, {
    method: init.method ?? 'POST',
    headers: { ...(init.body !== undefined && !Buffer.isBuffer(init.body) ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body === undefined ? undefined : Buffer.isBuffer(init.body) ? init.body : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

function user() {
  return createUser(t.app).then(({ user, token }) => {
    const auth = { authorization: `Bearer ${token}` };
    const gql = async <T>(query: string, variables: Record<string, unknown>, field: string) => {
      const response = await http('/graphql', { headers: { token }, body: { query, variables } });
      const body = response.json() as { data?: Record<string, T>; errors?: { message: string }[] };
      if (body.errors) throw new Error(body.errors[0]!.message);
      return body.data![field]!;
    };
    return {
      id: user.id,
      token,
      device: (path: string, body: Record<string, unknown>) => http(`/api/entrance-live/device/${path}`, { headers: auth, body }),
      start: (boxId: string, recordingMode?: string) =>
        gql<SessionView>(`mutation ($boxId: ID!, $recordingMode: String) { startEntranceLiveStream(boxId: $boxId, recordingMode: $recordingMode) { ${SESSION_FIELDS} } }`, { boxId, recordingMode }, 'startEntranceLiveStream'),
      read: (boxId: string) => gql<SessionView | null>(`query ($boxId: ID!) { entranceLiveStreamSession(boxId: $boxId) { ${SESSION_FIELDS} } }`, { boxId }, 'entranceLiveStreamSession'),
      keepAlive: (sessionId: string) => gql<SessionView>(`mutation ($sessionId: ID!) { keepEntranceLiveStreamAlive(sessionId: $sessionId) { ${SESSION_FIELDS} } }`, { sessionId }, 'keepEntranceLiveStreamAlive'),
      stop: (sessionId: string) => gql<boolean>(`mutation ($sessionId: ID!) { stopEntranceLiveStream(sessionId: $sessionId) }`, { sessionId }, 'stopEntranceLiveStream'),
    };
  });
}

/** ffmpeg's HLS muxer PUTting to the publisher URL, as the agent runs it. */
function publish(publisherUrl: string, publishToken: string, options: { seconds: number; realtime: boolean; listSize: number }) {
  const args = [
    '-hide_banner', '-loglevel', 'error',
    ...(options.realtime ? ['-re'] : []),
    '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15',
    '-t', String(options.seconds),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-pix_fmt', 'yuv420p',
    '-f', 'hls', '-method', 'PUT', '-http_persistent', '1', '-hls_time', '1', '-hls_list_size', String(options.listSize),
    '-hls_flags', 'delete_segments+program_date_time',
    '-headers', `Authorization: Bearer ${publishToken}\r\n`,
    publisherUrl,
  ];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** Decodes media with ffprobe and counts the video frames it holds. */
function countFrames(media: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', '-i', 'pipe:0']);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    // MPEG-TS lists the stream once per program too: the first line is the count.
    child.on('close', (code) => (code === 0 ? resolve(Number(out.trim().split('\n')[0])) : reject(new Error(`ffprobe failed: ${err}`))));
    child.stdin.on('error', () => undefined);
    Readable.from([media]).pipe(child.stdin);
  });
}

async function blobKeys(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of t.app.ctx.blobs.list(prefix)) keys.push(entry.key);
  return keys;
}

describe('live HLS relay with ffmpeg', () => {
  it('start → START_STREAM → ffmpeg publishes → ACTIVE → playable playlist → keep-alive → stop → STOPPED, media cleaned up', async () => {
    const owner = await user();
    const box = 'entrance-1';
    expect((await owner.device('status', { boxId: box, cameraStatus: 'ok', publisherState: 'idle' })).status).toBe(200);
    const session = await owner.start(box);
    expect(session.status).toBe('REQUESTED');

    const poll = await owner.device('poll', { boxId: box, cameraStatus: 'ok', publisherState: 'idle', waitSeconds: 5 });
    const [start] = (poll.json() as { commands: DeviceCommand[] }).commands;
    expect(start?.commandType).toBe('START_STREAM');
    const { publisherUrl, publishToken } = start!.payload as { publisherUrl: string; publishToken: string };
    expect(publisherUrl).toBe(`${base}/api/entrance-live/publish/${session.id}/index.m3u8`);
    expect((await owner.device('command-ack', { boxId: box, commandId: start!.id, status: 'accepted', payload: { sessionId: session.id, relayProtocol: 'hls' } })).json()).toMatchObject({ sessionStatus: 'STARTING' });
    expect((await owner.device('event', { boxId: box, sessionId: session.id, eventType: 'STREAM_STARTING', payload: {} })).json()).toMatchObject({ sessionStatus: 'STARTING' });

    const publishing = publish(publisherUrl, publishToken, { seconds: 5, realtime: true, listSize: 3 });
    // The first playlist makes the session ACTIVE before the device reports STREAM_ACTIVE.
    const active = await eventually(() => owner.read(box), (s) => s?.status === 'ACTIVE', 6000);
    expect(active!.playbackUrl).toMatch(new RegExp(`^${base}/media/\\d+\\.[\\w-]+/live/${session.id}/index\\.m3u8$`));
    expect(active!.relayDetails.playbackUrl).toBe(active!.playbackUrl);
    expect((await owner.device('event', { boxId: box, sessionId: session.id, eventType: 'STREAM_ACTIVE' })).json()).toMatchObject({ sessionStatus: 'ACTIVE', applied: false });

    const playlistResponse = await fetch(active!.playbackUrl!);
    expect(playlistResponse.status).toBe(200);
    expect(playlistResponse.headers.get('content-type')).toMatch(/mpegurl/);
    expect(playlistResponse.headers.get('cache-control')).toBe('no-cache');
    const playlist = parseMediaPlaylist(await playlistResponse.text());
    expect(playlist.segments.length).toBeGreaterThan(0);
    expect(playlist.programDateTimes.every((at) => at !== undefined && Math.abs(at - Date.now()) < 30_000)).toBe(true);
    // Segments resolve relative to the signed playlist URL, as in a player, and decode.
    const segmentUrl = new URL(playlist.segments.at(-1)!, active!.playbackUrl!).toString();
    const segment = await fetch(segmentUrl);
    expect(segment.status).toBe(200);
    expect(await countFrames(Buffer.from(await segment.arrayBuffer()))).toBeGreaterThanOrEqual(10);

    const result = await publishing;
    expect(result).toEqual({ code: 0, stderr: '' });
    // The sliding window: ffmpeg listed 3 and deleted what fell out; the store holds the window, not the stream.
    const stored = (await blobKeys(`live/${session.id}/`)).filter((k) => k.endsWith('.ts'));
    expect(stored.length).toBeGreaterThanOrEqual(3);
    expect(stored.length).toBeLessThanOrEqual(5);
    const finalPlaylist = parseMediaPlaylist(await (await fetch(active!.playbackUrl!)).text());
    for (const name of finalPlaylist.segments) expect(stored).toContain(`live/${session.id}/${name}`);

    const kept = await owner.keepAlive(session.id);
    expect(Date.parse(kept.expiresAt)).toBeGreaterThan(Date.parse(session.expiresAt));
    expect(kept.playbackUrl).not.toBeNull();

    expect(await owner.stop(session.id)).toBe(true);
    const stopPoll = await owner.device('poll', { boxId: box, waitSeconds: 2 });
    const [stop] = (stopPoll.json() as { commands: DeviceCommand[] }).commands;
    expect(stop).toMatchObject({ commandType: 'STOP_STREAM', sessionId: session.id });
    await owner.device('command-ack', { boxId: box, commandId: stop!.id, status: 'accepted', payload: { sessionId: session.id } });
    expect((await owner.device('event', { boxId: box, sessionId: session.id, eventType: 'STREAM_STOPPED' })).json()).toMatchObject({ sessionStatus: 'STOPPED' });
    expect(await owner.read(box)).toBeNull();

    // Over: publishing is refused, the media is deleted, the old playback URL finds nothing.
    const late = await http(publisherUrl, { method: 'PUT', headers: { authorization: `Bearer ${publishToken}` }, body: Buffer.from('#EXTM3U\n') });
    expect(late.status).toBe(410);
    await eventually(() => blobKeys(`live/${session.id}/`), (keys) => keys.length === 0);
    expect((await fetch(active!.playbackUrl!)).status).toBe(404);
  }, 40_000);

  it('refuses a wrong publish token, unknown sessions and files it does not serve', async () => {
    const owner = await user();
    const box = 'entrance-2';
    await owner.device('status', { boxId: box });
    const session = await owner.start(box);
    const [start] = ((await owner.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    const { publisherUrl, publishToken } = start!.payload as { publisherUrl: string; publishToken: string };
    const playlist = Buffer.from('#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nindex0.ts\n');

    const wrong = await http(publisherUrl, { method: 'PUT', headers: { authorization: 'Bearer not-the-token' }, body: playlist });
    expect(wrong.status).toBe(401);
    expect(wrong.json()).toEqual({ error: 'publish token is not valid for this session' });
    // A missing token was answered as a wrong one.
    const missing = await http(publisherUrl, { method: 'PUT', body: playlist });
    expect(missing.status).toBe(401);
    expect(missing.json().error).toMatch(/^missing publish token: send the START_STREAM publishToken as "X-Publish-Token"/);
    // Another session's token does not open this one.
    const other = await user();
    await other.device('status', { boxId: box });
    await other.start(box);
    const [otherStart] = ((await other.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    expect((await http(publisherUrl, { method: 'PUT', headers: { authorization: `Bearer ${String(otherStart!.payload.publishToken)}` }, body: playlist })).status).toBe(401);

    const auth = { authorization: `Bearer ${publishToken}` };
    // An unknown session was a 404 and another's session a 401: anyone without a token learnt which sessions exist.
    const unknownUrl = `${base}/api/entrance-live/publish/00000000-0000-4000-8000-000000000000/index.m3u8`;
    for (const method of ['PUT', 'DELETE']) {
      const toUnknown = await http(unknownUrl, { method, headers: auth, ...(method === 'PUT' ? { body: playlist } : {}) });
      const wrongToExisting = await http(publisherUrl, { method, headers: { authorization: 'Bearer not-the-token' }, ...(method === 'PUT' ? { body: playlist } : {}) });
      expect({ status: toUnknown.status, body: toUnknown.json() }).toEqual({ status: 401, body: { error: 'publish token is not valid for this session' } });
      expect({ status: wrongToExisting.status, body: wrongToExisting.json() }).toEqual({ status: toUnknown.status, body: toUnknown.json() });
    }
    const badName = await http(publisherUrl.replace('index.m3u8', 'evil.sh'), { method: 'PUT', headers: auth, body: Buffer.from('x') });
    expect(badName.status).toBe(400);
    expect(badName.json().error).toMatch(/file "evil.sh" is not accepted/);
    const notPlaylist = await http(publisherUrl, { method: 'PUT', headers: auth, body: Buffer.from('<html>') });
    expect(notPlaylist.json()).toEqual({ error: 'playlist index.m3u8: playlist must start with #EXTM3U' });
    const pointsElsewhere = await http(publisherUrl, { method: 'PUT', headers: auth, body: Buffer.from('#EXTM3U\n#EXTINF:1,\nhttps://elsewhere.example/x.ts\n') });
    expect(pointsElsewhere.status).toBe(400);
    const tooBig = await http(publisherUrl.replace('index.m3u8', 'big.ts'), { method: 'PUT', headers: auth, body: Buffer.alloc(t.app.ctx.config.live.maxSegmentBytes + 1) });
    expect(tooBig.status).toBe(413);

    // Nothing of that reached the store or moved the session.
    expect(await blobKeys(`live/${session.id}/`)).toEqual([]);
    expect((await t.app.ctx.live.findSession(owner.id, session.id))?.status).toBe('REQUESTED');
  });

  it('another user cannot play the session: the URL is signed per session and cannot be forged', async () => {
    const owner = await user();
    const box = 'entrance-3';
    await owner.device('status', { boxId: box });
    const session = await owner.start(box);
    const [start] = ((await owner.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    const { publisherUrl, publishToken, playbackUrl } = start!.payload as { publisherUrl: string; publishToken: string; playbackUrl: string };
    const auth = { authorization: `Bearer ${publishToken}` };
    const segment = Buffer.alloc(1000, 1);
    expect((await http(publisherUrl.replace('index.m3u8', 'index0.ts'), { method: 'PUT', headers: auth, body: segment })).status).toBe(201);
    expect((await http(publisherUrl, { method: 'PUT', headers: auth, body: Buffer.from('#EXTM3U\n#EXTINF:1,\nindex0.ts\n') })).status).toBe(201);
    expect((await t.app.ctx.live.findSession(owner.id, session.id))?.status).toBe('ACTIVE');
    expect((await fetch(playbackUrl!)).status).toBe(200);

    const intruder = await user();
    expect(await intruder.read(box)).toBeNull();
    // Without the signed grant: the bare path, a made-up grant, and another session's grant all fail.
    const path = `/live/${session.id}/index.m3u8`;
    expect((await fetch(`${base}/media${path}`)).status).toBe(404);
    expect((await fetch(`${base}/media/9999999999.AAAAAAAAAAAAAAAAAAAAAAAA${path}`)).status).toBe(403);
    await intruder.device('status', { boxId: 'x' });
    await intruder.start('x');
    const [intruderStart] = ((await intruder.device('poll', { boxId: 'x' })).json() as { commands: DeviceCommand[] }).commands;
    const grant = new URL(String(intruderStart!.payload.playbackUrl)).pathname.split('/')[2];
    expect((await fetch(`${base}/media/${grant}${path}`)).status).toBe(403);
  });

  it('prunes the window from the playlist for publishers that never DELETE', async () => {
    const owner = await user();
    const box = 'entrance-4';
    await owner.device('status', { boxId: box });
    const session = await owner.start(box);
    const [start] = ((await owner.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    const { publisherUrl, publishToken } = start!.payload as { publisherUrl: string; publishToken: string; playbackUrl: string };
    const auth = { authorization: `Bearer ${publishToken}` };
    for (let i = 0; i < 6; i += 1) {
      await http(publisherUrl.replace('index.m3u8', `s${i}.ts`), { method: 'PUT', headers: auth, body: Buffer.alloc(100, i) });
      const listed = [Math.max(0, i - 1), i].filter((v, k, a) => a.indexOf(v) === k);
      const text = `#EXTM3U\n${listed.map((n) => `#EXTINF:1,\ns${n}.ts`).join('\n')}\n`;
      expect((await http(publisherUrl, { method: 'PUT', headers: auth, body: Buffer.from(text) })).status).toBe(201);
    }
    // Listed s4, s5; one behind the window (s3) stays for slow players.
    expect((await blobKeys(`live/${session.id}/`)).sort()).toEqual(['index.m3u8', 's3.ts', 's4.ts', 's5.ts'].map((n) => `live/${session.id}/${n}`));
  });

  it('holds a playlist that overtook its newest segment until the segment is stored, and cuts it if the segment never comes', async () => {
    const owner = await user();
    const box = 'entrance-6';
    await owner.device('status', { boxId: box });
    const session = await owner.start(box);
    const [start] = ((await owner.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    const { publisherUrl, publishToken, playbackUrl } = start!.payload as { publisherUrl: string; publishToken: string; playbackUrl: string };
    const auth = { authorization: `Bearer ${publishToken}` };
    const put = (file: string, body: Buffer) => http(publisherUrl.replace('index.m3u8', file), { method: 'PUT', headers: auth, body });
    const list = (...names: string[]) => Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:1\n${names.map((n) => `#EXTINF:1,\n${n}`).join('\n')}\n`);

    // The playlist arrives 200 ms before its segment: it waits and is stored whole.
    const playlistFirst = put('index.m3u8', list('a0.ts'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await put('a0.ts', Buffer.alloc(100))).status).toBe(201);
    expect((await playlistFirst).status).toBe(201);
    expect(parseMediaPlaylist(await (await fetch(playbackUrl)).text()).segments).toEqual(['a0.ts']);
    expect((await t.app.ctx.live.findSession(owner.id, session.id))?.status).toBe('ACTIVE');

    // A segment that never arrives: after the wait the playlist is stored without it.
    const startedAt = Date.now();
    expect((await put('index.m3u8', list('a0.ts', 'a1.ts'))).status).toBe(201);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(parseMediaPlaylist(await (await fetch(playbackUrl)).text()).segments).toEqual(['a0.ts']);
    // An older playlist arriving late does not replace a newer one.
    await put('a1.ts', Buffer.alloc(100));
    expect((await put('index.m3u8', list('a0.ts', 'a1.ts'))).status).toBe(201);
    expect((await put('index.m3u8', list('a0.ts'))).status).toBe(201);
    expect(parseMediaPlaylist(await (await fetch(playbackUrl)).text()).segments).toEqual(['a0.ts', 'a1.ts']);
  });

  it('pushes the playback URL to subscribers when the first playable playlist arrives after STREAM_ACTIVE; an empty one is not playable', async () => {
    const owner = await user();
    const box = 'entrance-7';
    await owner.device('status', { boxId: box });
    const session = await owner.start(box);
    const [start] = ((await owner.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    const { publisherUrl, publishToken } = start!.payload as { publisherUrl: string; publishToken: string };
    await owner.device('command-ack', { boxId: box, commandId: start!.id, status: 'accepted' });
    // The device says ACTIVE before its publisher's first playlist: the session has no playback URL yet.
    expect((await owner.device('event', { boxId: box, sessionId: session.id, eventType: 'STREAM_ACTIVE' })).json()).toMatchObject({ sessionStatus: 'ACTIVE' });
    expect(await owner.read(box)).toMatchObject({ status: 'ACTIVE', playbackUrl: null });
    const subscription = await subscribeToSessions(base.replace(/^http/, 'ws') + '/graphql', { initPayload: { token: owner.token }, boxId: box });
    await new Promise((resolve) => setTimeout(resolve, 300));

    const auth = { authorization: `Bearer ${publishToken}` };
    const put = (file: string, body: Buffer) => http(publisherUrl.replace('index.m3u8', file), { method: 'PUT', headers: auth, body });
    const list = (...names: string[]) => Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:1\n${names.map((n) => `#EXTINF:1,\n${n}`).join('\n')}\n`);
    expect((await put('index.m3u8', list())).status).toBe(201);
    expect((await owner.read(box))?.playbackUrl).toBeNull();
    await put('a0.ts', Buffer.alloc(100));
    expect((await put('index.m3u8', list('a0.ts'))).status).toBe(201);
    const pushed = await subscription.change();
    expect(pushed).toMatchObject({ id: session.id, status: 'ACTIVE' });
    expect(pushed.playbackUrl).toMatch(new RegExp(`^${base}/media/\\d+\\.[\\w-]+/live/${session.id}/index\\.m3u8$`));
    // Later playlists change nothing a subscriber sees: nothing more is pushed.
    await put('a1.ts', Buffer.alloc(100));
    await put('index.m3u8', list('a0.ts', 'a1.ts'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(subscription.pending()).toBe(0);
    subscription.close();
  });

  // "Clip" from a client that capitalises its choices recorded nothing, with no error to say why.
  it('reads recordingMode without regard to case', async () => {
    const owner = await user();
    await owner.device('status', { boxId: 'entrance-case' });
    const session = await owner.start('entrance-case', 'Clip');
    expect(session).toMatchObject({ recordingMode: 'Clip', clipHandoffEnabled: true });
    await owner.stop(session.id);
  });

  it('recordingMode clip keeps every segment and hands one MP4 of them to stored video when the session ends', async () => {
    const owner = await user();
    const box = 'entrance-5';
    await owner.device('status', { boxId: box });
    const session = await owner.start(box, 'clip');
    expect(session).toMatchObject({ recordingMode: 'clip', clipHandoffEnabled: true });
    const [start] = ((await owner.device('poll', { boxId: box })).json() as { commands: DeviceCommand[] }).commands;
    expect(start!.payload.clipHandoffEnabled).toBe(true);
    const { publisherUrl, publishToken } = start!.payload as { publisherUrl: string; publishToken: string; playbackUrl: string };
    // ffmpeg's window of 2 slides over 4 segments, and it DELETEs what leaves it: the clip keeps them all.
    expect(await publish(publisherUrl, publishToken, { seconds: 4, realtime: true, listSize: 2 })).toEqual({ code: 0, stderr: '' });
    // ffmpeg does not wait for answers and may reset its connection on exit, which can cost the stream its last
    // segment; the gateway may also still be storing. Wait until the stored set settles.
    let previous = -1;
    let unchangedReads = 0;
    const kept = await eventually(
      async () => (await blobKeys(`live/${session.id}/`)).filter((k) => k.endsWith('.ts')).length,
      (n) => {
        unchangedReads = n === previous ? unchangedReads + 1 : 0;
        previous = n;
        return unchangedReads >= 10 && n > 0;
      },
      15_000,
    );
    expect(kept).toBeGreaterThanOrEqual(3);

    await owner.stop(session.id);
    await owner.device('event', { boxId: box, sessionId: session.id, eventType: 'STREAM_STOPPED' });
    const done = await eventually(() => t.app.ctx.live.findSession(owner.id, session.id), (s) => s?.mediaReleasedAt !== null, 15_000);
    expect(done?.handoffStreamId).toBe(`stored-${session.id.slice(0, 8)}`);
    const handed = handedOff.find((h) => h.clip.sessionId === session.id)!;
    expect(handed.clip).toMatchObject({ ownerId: owner.id, boxId: box, segmentCount: kept });
    expect(handed.bytes.subarray(4, 8).toString()).toBe('ftyp');
    // Every frame of every kept segment: 1 s segments at 15 fps.
    expect(await countFrames(handed.bytes)).toBe(15 * kept);
    expect(await blobKeys(`live/${session.id}/`)).toEqual([]);
  }, 30_000);
});
