import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientDocument, ExistingEntranceObserver, ffmpegJpegs, MjpegViewer } from './compat-helpers.ts';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { eventually, fastLiveConfig, SESSION_FIELDS, type DeviceCommand, type SessionView } from './live-helpers.ts';

/**
 * The http-jpeg-push relay with the existing clients: the entrance observer's REST calls and frame POSTs (scripted
 * here call for call; its camera is ffmpeg's test pattern), the web app's GraphQL documents and MJPEG reader, over
 * real HTTP on two app instances sharing one database and one blob directory.
 */
const WEB_APP_ORIGIN = 'https://app.beekeepers.example';
let one: TestApp;
let two: TestApp;
let baseOne: string;
let baseTwo: string;
let frames: Buffer[];

beforeAll(async () => {
  const live = fastLiveConfig({ keepaliveTimeoutSeconds: 30, stopGraceSeconds: 5 });
  one = await buildTestApp({ live, corsOrigins: [WEB_APP_ORIGIN] });
  two = await buildTestApp({ live, corsOrigins: [WEB_APP_ORIGIN], storage: one.config.storage }, { url: one.databaseUrl });
  await one.app.listen({ port: 0, host: '127.0.0.1' });
  await two.app.listen({ port: 0, host: '127.0.0.1' });
  baseOne = `http://127.0.0.1:${(one.app.server.address() as { port: number }).port}`;
  baseTwo = `http://127.0.0.1:${(two.app.server.address() as { port: number }).port}`;
  // Three seconds of the device's 4 fps.
  frames = await ffmpegJpegs(12);
});
afterAll(async () => {
  await two?.close();
  await one?.close();
});

let boxCounter = 400;
const newBox = () => String(++boxCounter);

/** The web app: its GraphQL documents, its `token` header, from its own origin. */
function webApp(base: string, token: string) {
  const run = async <T>(query: string, variables: Record<string, unknown>, field: string): Promise<T> => {
    const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', token, origin: WEB_APP_ORIGIN }, body: JSON.stringify({ query, variables }) });
    const body = (await response.json()) as { data?: Record<string, T>; errors?: { message: string; extensions?: { code?: string } }[] };
    if (body.errors) throw Object.assign(new Error(body.errors[0]!.message), { code: body.errors[0]!.extensions?.code });
    return body.data![field]!;
  };
  return {
    run,
    start: (boxId: string) =>
      run<SessionView>(clientDocument('web-app/start-live-stream.graphql'), { boxId, qualityProfile: 'inspect', recordingMode: 'off' }, 'startEntranceLiveStream'),
    read: (boxId: string) => run<SessionView | null>(clientDocument('web-app/live-session-for-box.graphql'), { boxId }, 'entranceLiveStreamSession'),
    keepAlive: (sessionId: string) => run<SessionView>(clientDocument('web-app/keep-live-stream-alive.graphql'), { sessionId }, 'keepEntranceLiveStreamAlive'),
    stop: (sessionId: string) => run<boolean>(clientDocument('web-app/stop-live-stream.graphql'), { sessionId }, 'stopEntranceLiveStream'),
    /** Not in the web app: the optional relayProtocol argument, for clients that want to choose. */
    startWithRelay: (boxId: string, relayProtocol: string | null, recordingMode?: string) =>
      run<SessionView>(
        `mutation ($boxId: ID!, $relayProtocol: String, $recordingMode: String) { startEntranceLiveStream(boxId: $boxId, relayProtocol: $relayProtocol, recordingMode: $recordingMode) { ${SESSION_FIELDS} } }`,
        { boxId, relayProtocol, recordingMode },
        'startEntranceLiveStream',
      ),
  };
}

async function json(response: Response) {
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A session started for `box` with the device's START_STREAM taken and accepted, without a device loop. */
async function jpegSession(base: string, token: string, box: string, relay = 'http-jpeg-push') {
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(`${base}/api/entrance-live/device/${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  await post('status', { boxId: box, cameraStatus: 'ok', publisherState: 'idle' });
  const session = await webApp(base, token).startWithRelay(box, relay);
  const { commands } = (await (await post('poll', { boxId: box, limit: 10 })).json()) as { commands: DeviceCommand[] };
  const start = commands.find((c) => c.commandType === 'START_STREAM')!;
  await post('command-ack', { boxId: box, commandId: start.id, status: 'accepted', payload: { sessionId: session.id, relayProtocol: relay } });
  const payload = start.payload as { publisherUrl: string; publishToken: string; playbackUrl: string };
  const push = (bytes: Buffer, headers: Record<string, string> = {}) =>
    fetch(payload.publisherUrl, { method: 'POST', headers: { 'content-type': 'image/jpeg', 'x-publish-token': payload.publishToken, ...headers }, body: bytes });
  return { session, ...payload, push, event: (eventType: string, extra: Record<string, unknown> = {}) => post('event', { boxId: box, sessionId: session.id, eventType, ...extra }) };
}

describe('the existing entrance observer and web app, unchanged', () => {
  it('HLS is refused, JPEG push is offered in the same session, the frames are watched as MJPEG, and stop ends it all', async () => {
    const { token } = await createUser(one.app);
    const box = newBox();
    const device = new ExistingEntranceObserver({ baseUrl: baseOne, apiToken: token, boxId: box, pollIntervalMs: 500, frames });
    await device.start();
    const app = webApp(baseOne, token);
    try {
      const started = await app.start(box);
      // Nothing is known about this device yet: the deployment's default comes first.
      expect(started).toMatchObject({ boxId: box, status: 'REQUESTED', qualityProfile: 'inspect', recordingMode: 'off', relayProtocol: 'hls', clipHandoffEnabled: false });

      const active = (await eventually(
        () => app.read(box),
        (s) => s?.status === 'ACTIVE' && s.relayProtocol === 'http-jpeg-push' && device.frameResults.some((r) => r.status === 200),
        10_000,
      ))!;
      const sessionId = started.id;
      expect(active).toMatchObject({ id: sessionId, lastErrorCode: null, lastErrorMessage: null });
      expect(active.relayDetails).toEqual({
        relayProtocol: 'http-jpeg-push',
        placeholder: false,
        publisherUrl: `${baseOne}/api/entrance-live/publish/${sessionId}/frame`,
        publishToken: null,
        signalingToken: null,
        playbackUrl: active.playbackUrl,
        frameContentType: 'image/jpeg',
        playbackContentType: 'multipart/x-mixed-replace',
      });
      expect(active.playbackUrl).toMatch(new RegExp(`^${baseOne}/media/\\d+\\.[\\w-]+/live/${sessionId}/stream\\.mjpeg$`));

      // What the device was told: HLS first, then JPEG push with everything it needs.
      const starts = device.calls
        .filter((c) => c.path.endsWith('/poll'))
        .flatMap((c) => (c.answer as { commands: DeviceCommand[] }).commands)
        .filter((c) => c.commandType === 'START_STREAM');
      expect(starts.map((c) => c.payload.relayProtocol)).toEqual(['hls', 'http-jpeg-push']);
      expect(starts[1]!.payload).toEqual({
        sessionId,
        relayProtocol: 'http-jpeg-push',
        publisherUrl: `${baseOne}/api/entrance-live/publish/${sessionId}/frame`,
        publishToken: expect.stringMatching(/^[\w-]{20,}$/),
        playbackUrl: expect.stringMatching(/\/stream\.mjpeg$/),
        qualityProfile: 'inspect',
        recordingMode: 'off',
        clipHandoffEnabled: false,
      });
      const accepted = device.frameResults.find((r) => r.status === 200)!;
      expect(accepted.body).toEqual({ ok: true, sessionId, frameSequence: 1, frameTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), bytes: accepted.bytes.length });

      // The web app's reader: fetch with its token header from its origin, JPEGs cut out of the multipart body.
      const viewer = await MjpegViewer.open(active.relayDetails.playbackUrl as string, { token, origin: WEB_APP_ORIGIN });
      expect(viewer.headers['content-type']).toMatch(/^multipart\/x-mixed-replace; boundary=/);
      expect(viewer.headers['access-control-allow-origin']).toBe(WEB_APP_ORIGIN);
      expect(viewer.headers['cache-control']).toContain('no-store');
      await viewer.until((v) => v.parts.length >= 6, 5000, 'six frames');
      // The device may not have read the answer to the newest frame yet.
      await eventually(async () => device.frameResults.map((r) => r.body.frameSequence), (seqs) => seqs.includes(viewer.parts.at(-1)!.sequence));
      const sentBySequence = new Map(device.frameResults.filter((r) => r.status === 200).map((r) => [r.body.frameSequence as number, r.bytes]));
      let previous = 0;
      for (const part of viewer.parts) {
        expect(part.headers['content-type']).toBe('image/jpeg');
        expect(part.sequence).toBeGreaterThan(previous);
        previous = part.sequence;
        expect(part.bytes.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
        expect(part.bytes.equals(sentBySequence.get(part.sequence)!)).toBe(true);
      }
      // A keep-alive from the card keeps the same kind of session.
      expect((await app.keepAlive(sessionId)).relayDetails).toMatchObject({ relayProtocol: 'http-jpeg-push', playbackContentType: 'multipart/x-mixed-replace' });

      expect(await app.stop(sessionId)).toBe(true);
      // The device takes STOP_STREAM on its next poll, stops its frames, acks and reports STREAM_STOPPED.
      await viewer.until((v) => v.parser.complete && v.closed, 5000, 'the stream to end');
      expect(await app.read(box)).toBeNull();
      expect(device.publishing).toEqual([]);
      const late = await device.postFrame(sessionId, `${baseOne}/api/entrance-live/publish/${sessionId}/frame`, starts[1]!.payload.publishToken as string, frames[0]!);
      expect(late.status).toBe(410);
      expect(late.body.error).toMatch(/over/);
      await expect(MjpegViewer.open(active.playbackUrl!)).rejects.toMatchObject({ status: 410 });
      await eventually(
        async () => {
          const keys: string[] = [];
          for await (const entry of one.app.ctx.blobs.list(`live/${sessionId}/`)) keys.push(entry.key);
          return keys;
        },
        (keys) => keys.length === 0,
      );

      // The device's refusal was remembered: its next session starts with JPEG push at once.
      const again = await app.start(box);
      expect(again.relayProtocol).toBe('http-jpeg-push');
      expect(again.playbackUrl).toMatch(/\/stream\.mjpeg$/);
      await eventually(() => app.read(box), (s) => s?.status === 'ACTIVE', 5000);
      const startsAgain = device.calls
        .filter((c) => c.path.endsWith('/poll'))
        .flatMap((c) => (c.answer as { commands: DeviceCommand[] }).commands)
        .filter((c) => c.commandType === 'START_STREAM' && c.sessionId === again.id);
      expect(startsAgain.map((c) => c.payload.relayProtocol)).toEqual(['http-jpeg-push']);
      await app.stop(again.id);
      await eventually(() => app.read(box), (s) => s === null, 5000);
    } finally {
      await device.stop();
    }
    // The device never had to report a publish error or failed a REST call.
    expect(device.errors).toEqual([]);
    expect(device.calls.filter((c) => c.path.endsWith('/status') && (c.body as { lastErrorCode?: unknown }).lastErrorCode)).toEqual([]);
  });

  it('a device that lists its relays in its status gets JPEG push from the start', async () => {
    const { token } = await createUser(one.app);
    const box = newBox();
    const device = new ExistingEntranceObserver({ baseUrl: baseOne, apiToken: token, boxId: box, pollIntervalMs: 300, frames, diagnostics: { relayProtocols: ['http-jpeg-push'] } });
    await device.start();
    try {
      await eventually(async () => device.calls.filter((c) => c.path.endsWith('/status')).length, (n) => n > 0);
      const app = webApp(baseOne, token);
      const session = await app.start(box);
      expect(session.relayProtocol).toBe('http-jpeg-push');
      await eventually(() => app.read(box), (s) => s?.status === 'ACTIVE', 5000);
      const events = device.calls.filter((c) => c.path.endsWith('/event')).map((c) => (c.body as { eventType: string }).eventType);
      expect(events).not.toContain('STREAM_FAILED');
      await app.stop(session.id);
      await eventually(() => app.read(box), (s) => s === null, 5000);
    } finally {
      await device.stop();
    }
  });

  it('a relay the browser asked for is not swapped: the device refusing it fails the session with its message', async () => {
    const { token } = await createUser(one.app);
    const box = newBox();
    const device = new ExistingEntranceObserver({ baseUrl: baseOne, apiToken: token, boxId: box, pollIntervalMs: 300, frames });
    await device.start();
    try {
      const app = webApp(baseOne, token);
      const session = await app.startWithRelay(box, 'hls');
      await eventually(() => app.read(box), (s) => s === null, 5000);
      // Flaked: the device records a call once it has read the answer, which can be after the web app sees the session end.
      const failed = await eventually(
        async () => device.calls.find((c) => c.path.endsWith('/event') && (c.body as { eventType: string }).eventType === 'STREAM_FAILED'),
        (call) => call !== undefined,
        5000,
      );
      expect(failed?.answer).toMatchObject({ sessionId: session.id, sessionStatus: 'FAILED' });
      const stored = await one.app.ctx.live.sessions.findById(session.id);
      expect(stored).toMatchObject({ status: 'FAILED', lastErrorCode: 'UNSUPPORTED_RELAY_PROTOCOL', lastErrorMessage: 'Unsupported or incomplete relay config: hls' });
      await expect(app.startWithRelay(box, 'webrtc')).rejects.toMatchObject({ message: 'relayProtocol must be one of "hls", "http-jpeg-push"', code: 'BAD_USER_INPUT' });
    } finally {
      await device.stop();
    }
  });
});

describe('clip hand-off', () => {
  it('is off for JPEG push, which keeps no more than the latest frame, also when a refused HLS session switches to it', async () => {
    const { token } = await createUser(one.app);
    const app = webApp(baseOne, token);
    const explicitBox = newBox();
    await fetch(`${baseOne}/api/entrance-live/device/status`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ boxId: explicitBox }) });
    expect(await app.startWithRelay(explicitBox, 'http-jpeg-push', 'clip')).toMatchObject({ relayProtocol: 'http-jpeg-push', recordingMode: 'clip', clipHandoffEnabled: false });

    const box = newBox();
    const device = new ExistingEntranceObserver({ baseUrl: baseOne, apiToken: token, boxId: box, pollIntervalMs: 300, frames });
    await device.start();
    try {
      const session = await app.startWithRelay(box, null, 'clip');
      expect(session).toMatchObject({ relayProtocol: 'hls', clipHandoffEnabled: true });
      const switched = await eventually(() => app.read(box), (s) => s?.status === 'ACTIVE', 5000);
      expect(switched).toMatchObject({ relayProtocol: 'http-jpeg-push', clipHandoffEnabled: false });
      const starts = device.calls
        .filter((c) => c.path.endsWith('/poll'))
        .flatMap((c) => (c.answer as { commands: DeviceCommand[] }).commands)
        .filter((c) => c.commandType === 'START_STREAM');
      expect(starts.map((c) => [c.payload.relayProtocol, c.payload.clipHandoffEnabled])).toEqual([
        ['hls', true],
        ['http-jpeg-push', false],
      ]);
      await app.stop(session.id);
      await eventually(() => app.read(box), (s) => s === null, 5000);
    } finally {
      await device.stop();
    }
  });
});

describe('MJPEG viewers', () => {
  it('a viewer that does not read holds at most one frame; frames are dropped for it alone', async () => {
    const { token } = await createUser(one.app);
    const box = newBox();
    const live = await jpegSession(baseOne, token, box);
    // Pictures of noise compress badly: ~0.6 MB each, so the loopback socket buffers fill after a few.
    const [big] = await ffmpegJpegs(1, 'nullsrc=s=1280x720,geq=random(1)*255:128:128', 3);
    expect(big!.length).toBeGreaterThan(300_000);

    const url = new URL(live.playbackUrl);
    const stalled: Socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.pause();
    stalled.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    const reader = await MjpegViewer.open(live.playbackUrl);
    const relay = one.app.ctx.live.frames;
    await eventually(async () => relay.viewerStats().length, (n) => n === 2);

    const count = 40;
    for (let i = 0; i < count; i++) {
      const answer = await json(await live.push(big!));
      expect(answer).toMatchObject({ status: 200, body: { frameSequence: i + 1 } });
    }
    await reader.until((v) => v.parts.at(-1)?.sequence === count, 5000, 'the last frame');
    expect(reader.parts.at(-1)!.bytes.equals(big!)).toBe(true);

    const [slow] = relay.viewerStats().sort((a, b) => b.framesDropped - a.framesDropped);
    expect(slow!.framesDropped).toBeGreaterThan(0);
    // Every frame was either written once, dropped, or is the one waiting for the socket.
    expect(slow!.framesWritten + slow!.framesDropped).toBeGreaterThanOrEqual(count - 1);
    // Bounded: the socket's high-water mark plus one frame, however many frames came.
    expect(slow!.bufferedBytes).toBeLessThanOrEqual(big!.length + 64 * 1024);
    expect(relay.heldFrameBytes).toBe(big!.length);
    // The reading viewer was not held back by the stalled one.
    expect(reader.parts.length).toBeGreaterThan(slow!.framesWritten);

    // The session ends: the reader sees the closing boundary, the stalled viewer is cut off, nothing is kept.
    await live.event('STREAM_STOPPED');
    await reader.until((v) => v.parser.complete && v.closed, 5000, 'the end of the stream');
    await eventually(async () => relay.viewerStats().length, (n) => n === 0);
    expect(relay.heldFrameBytes).toBe(0);
    // Reading again, the stalled viewer finds its connection closed by the server.
    const closed = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
    stalled.resume();
    await closed;
  });

  it('frames pushed to one instance reach a viewer on the other, and its stream ends when the session ends there', async () => {
    const { token } = await createUser(one.app);
    const box = newBox();
    const live = await jpegSession(baseOne, token, box);
    const path = new URL(live.playbackUrl).pathname;
    const viewer = await MjpegViewer.open(`${baseTwo}${path}`, { token, origin: WEB_APP_ORIGIN });
    await eventually(async () => two.app.ctx.live.frames.viewerStats().length, (n) => n === 1);

    const sent = new Map<number, Buffer>();
    for (const frame of frames.slice(0, 8)) {
      const answer = await json(await live.push(frame));
      expect(answer.status).toBe(200);
      sent.set(answer.body.frameSequence as number, frame);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await viewer.until((v) => v.parts.at(-1)?.sequence === 8, 5000, 'frame 8 on the other instance');
    expect(viewer.parts.length).toBeGreaterThanOrEqual(6);
    for (const part of viewer.parts) expect(part.bytes.equals(sent.get(part.sequence)!)).toBe(true);
    // Nobody watches on instance one: it keeps no frame.
    expect(one.app.ctx.live.frames.heldFrameBytes).toBe(0);

    // A viewer joining late on instance two gets the latest picture at once.
    const late = await MjpegViewer.open(`${baseTwo}${path}`);
    await late.until((v) => v.parts.length === 1, 2000, 'the latest frame');
    expect(late.parts[0]!.sequence).toBe(8);

    await live.event('STREAM_STOPPED');
    await viewer.until((v) => v.parser.complete && v.closed, 5000, 'the end of the stream');
    await late.until((v) => v.parser.complete && v.closed, 5000, 'the end of the late stream');
  });
});

describe('publishing refusals', () => {
  it('answers 401, 409, 413, 415 and 400 with an error naming the problem', async () => {
    const { token } = await createUser(one.app);
    const live = await jpegSession(baseOne, token, newBox());
    const [frame] = frames;

    expect(await json(await live.push(frame!, { 'x-publish-token': 'not-the-token' }))).toEqual({ status: 401, body: { error: 'publish token is not valid for this session' } });
    const withoutToken = await fetch(live.publisherUrl, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: frame });
    expect((await json(withoutToken)).status).toBe(401);
    // The API token as bearer is not a publish token; the publish token as bearer is.
    expect((await json(await fetch(live.publisherUrl, { method: 'POST', headers: { 'content-type': 'image/jpeg', authorization: `Bearer ${token}` }, body: frame }))).status).toBe(401);
    expect((await json(await fetch(live.publisherUrl, { method: 'POST', headers: { 'content-type': 'image/jpeg', authorization: `Bearer ${live.publishToken}` }, body: frame }))).status).toBe(200);

    expect(await json(await live.push(frame!, { 'content-type': 'image/png' }))).toEqual({ status: 415, body: { error: 'Content-Type must be image/jpeg, got image/png' } });
    const png = await json(await live.push(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')));
    expect(png).toEqual({ status: 415, body: { error: 'body is not a JPEG image: it does not start with the JPEG start-of-image marker (FF D8)' } });
    const truncated = await json(await live.push(frame!.subarray(0, frame!.length - 10)));
    expect(truncated.status).toBe(415);
    expect(truncated.body.error).toMatch(/end-of-image/);
    expect(await json(await live.push(Buffer.alloc(0)))).toEqual({ status: 400, body: { error: 'frame body is empty: send one JPEG image' } });
    const huge = Buffer.concat([frame!.subarray(0, frame!.length - 2), Buffer.alloc(2 * 1024 * 1024), Buffer.from([0xff, 0xd9])]);
    expect(await json(await live.push(huge))).toEqual({ status: 413, body: { error: `frame of ${huge.length} bytes is larger than the 2097152 bytes allowed` } });

    // An unknown session answered 404 where an existing one said 401: anyone without a token learnt which sessions exist.
    const unknown = live.publisherUrl.replace(live.session.id, '00000000-0000-4000-8000-000000000000');
    expect(await json(await fetch(unknown, { method: 'POST', headers: { 'content-type': 'image/jpeg', 'x-publish-token': 'not-the-token' }, body: frame }))).toEqual({
      status: 401,
      body: { error: 'publish token is not valid for this session' },
    });
    expect(await json(await fetch(unknown, { method: 'POST', headers: { 'content-type': 'image/jpeg', 'x-publish-token': live.publishToken }, body: frame }))).toEqual({
      status: 401,
      body: { error: 'publish token is not valid for this session' },
    });
    // An HLS publisher may not write to a JPEG session (and the other way round).
    const put = await fetch(live.publisherUrl.replace(/\/frame$/, '/index.m3u8'), { method: 'PUT', headers: { 'x-publish-token': live.publishToken }, body: '#EXTM3U\n' });
    expect(await json(put)).toEqual({ status: 409, body: { error: 'live session uses the http-jpeg-push relay: POST JPEG frames to its publisherUrl' } });
    const hls = await jpegSession(baseOne, token, newBox(), 'hls');
    expect(hls.publisherUrl).toMatch(/\/index\.m3u8$/);
    const hlsFrame = await fetch(hls.publisherUrl.replace(/index\.m3u8$/, 'frame'), { method: 'POST', headers: { 'content-type': 'image/jpeg', 'x-publish-token': hls.publishToken }, body: frame });
    expect(await json(hlsFrame)).toEqual({ status: 409, body: { error: "live session uses the hls relay: publish with ffmpeg's HLS muxer to its publisherUrl" } });
    // Another session's token is not valid here: the token is checked first.
    expect((await json(await live.push(frame!, { 'x-publish-token': hls.publishToken }))).status).toBe(401);

    // Playback: a tampered link is refused.
    await expect(MjpegViewer.open(live.playbackUrl.replace(/\/media\/(\d+)\.[\w-]+\//, '/media/$1.AAAAAAAAAAAAAAAAAAAAAAAA/'))).rejects.toMatchObject({ status: 403 });
  });

  it('lets the web app on a configured origin preflight the MJPEG link with its token header', async () => {
    const { token } = await createUser(one.app);
    const live = await jpegSession(baseOne, token, newBox());
    const preflight = await fetch(live.playbackUrl, {
      method: 'OPTIONS',
      headers: { origin: WEB_APP_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'token' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(WEB_APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('token');
    const elsewhere = await fetch(live.playbackUrl, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'token' } });
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });
});
