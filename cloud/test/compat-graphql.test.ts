import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSchema, parse, validate, type GraphQLEnumType, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSchema } from '../src/graphql/plugin.ts';
import { clientDocument } from './compat-helpers.ts';
import { buildTestApp, createUser, type TestApp } from './helper.ts';
import { eventually } from './live-helpers.ts';

/**
 * The existing clients' GraphQL documents (cloud/test/fixtures/existing-clients), each validated against the
 * schema the cloud serves and then sent, with the variables those clients send, to a cloud on a real port.
 */
const DOCUMENTS = [
  'web-app/live-session-for-box.graphql',
  'web-app/start-live-stream.graphql',
  'web-app/keep-live-stream-alive.graphql',
  'web-app/stop-live-stream.graphql',
  'web-app/entrance-heatmaps.graphql',
  'web-app/device-streams.graphql',
  'web-app/box-active-streams.graphql',
  'web-app/upload-gate-video.graphql',
  'entrance-observer/upload-video.graphql',
];

const WEB_APP_ORIGIN = 'https://app.beekeepers.example';
let t: TestApp;
let base: string;
let work: string;
let clip: Buffer;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'hivegate-compat-'));
  const clipFile = path.join(work, 'video_1714560000.mp4');
  // What the observer records: a short H.264 MP4 (the test pattern stands in for its camera).
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clipFile]);
  clip = readFileSync(clipFile);
  t = await buildTestApp({
    corsOrigins: [WEB_APP_ORIGIN],
    jobs: { workers: 1, leaseSeconds: 30, pollSeconds: 1 },
    heatmaps: { grid: { cols: 160, rows: 120 }, renderDebounceSeconds: 0.2 },
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);

afterAll(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

type Answer<T> = { data?: Record<string, T>; errors?: { message: string; extensions?: { code?: string } }[] };

/** A JSON GraphQL request as the web app makes it: its `token` header. */
async function webApp<T>(token: string, name: string, variables: Record<string, unknown>): Promise<Answer<T>> {
  const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', token }, body: JSON.stringify({ query: clientDocument(name), variables }) });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer<T>;
}

/** A GraphQL multipart request (operations, map, then the files under the map's keys), as both clients upload. */
async function multipart(headers: Record<string, string>, name: string, variables: Record<string, unknown>, files: Record<string, { variable: string; data: Buffer | string; filename: string }>) {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query: clientDocument(name), variables }));
  form.append('map', JSON.stringify(Object.fromEntries(Object.entries(files).map(([key, file]) => [key, [`variables.${file.variable}`]]))));
  for (const [key, file] of Object.entries(files)) form.append(key, new Blob([file.data]), file.filename);
  const response = await fetch(`${base}/graphql`, { method: 'POST', headers, body: form });
  return { status: response.status, body: (await response.json()) as Answer<boolean> };
}

/** Python's `datetime.utcnow().isoformat()`: no zone, microseconds. */
function pythonUtcIso(date: Date): string {
  return `${date.toISOString().slice(0, 19)}.${String(date.getUTCMilliseconds() * 1000 + 123).padStart(6, '0')}`;
}

describe('the existing clients\u2019 documents', () => {
  it('are all kept as fixtures, and every one validates against the schema the cloud serves', () => {
    const onDisk = (dir: string) => readdirSync(new URL(`./fixtures/existing-clients/${dir}/`, import.meta.url)).filter((f) => f.endsWith('.graphql')).map((f) => `${dir}/${f}`);
    expect([...onDisk('web-app'), ...onDisk('entrance-observer')].sort()).toEqual([...DOCUMENTS].sort());
    const schema = buildSchema(loadSchema());
    for (const name of DOCUMENTS) expect({ name, errors: validate(schema, parse(clientDocument(name))).map((e) => e.message) }).toEqual({ name, errors: [] });
    // The check has teeth: a field the schema lacks is reported.
    const misspelt = clientDocument('web-app/entrance-heatmaps.graphql').replace('imageURL', 'imageUrl');
    expect(validate(schema, parse(misspelt)).map((e) => e.message)).toEqual(['Cannot query field "imageUrl" on type "EntranceHeatmap". Did you mean "imageURL"?']);
  });

  it('meet a schema with every type, field and argument of the existing service that its clients use', () => {
    const schema = buildSchema(loadSchema());
    const fields = (type: string) => Object.keys((schema.getType(type) as GraphQLObjectType).getFields());
    const operation = (root: GraphQLObjectType | null | undefined, name: string) => {
      const field = root!.getFields()[name]!;
      return { args: Object.fromEntries(field.args.map((a) => [a.name, String(a.type)])), type: String(field.type) };
    };
    const query = (name: string) => operation(schema.getQueryType(), name);
    const mutation = (name: string) => operation(schema.getMutationType(), name);
    expect(fields('EntranceLiveStreamSession')).toEqual(
      expect.arrayContaining(['id', 'boxId', 'status', 'playbackUrl', 'signalingToken', 'expiresAt', 'qualityProfile', 'recordingMode', 'relayProtocol', 'publisherUrl', 'publishToken', 'clipHandoffEnabled', 'handoffStreamId', 'lastKeepaliveAt', 'lastDeviceSeenAt', 'lastErrorCode', 'lastErrorMessage', 'relayDetails']),
    );
    expect(fields('EntranceLiveRelayDetails')).toEqual(expect.arrayContaining(['relayProtocol', 'placeholder', 'publisherUrl', 'publishToken', 'signalingToken', 'playbackUrl', 'frameContentType', 'playbackContentType']));
    expect((schema.getType('EntranceLiveStreamStatus') as GraphQLEnumType).getValues().map((v) => v.name)).toEqual(
      expect.arrayContaining(['REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE', 'STOPPING', 'STOPPED', 'FAILED']),
    );
    expect(fields('EntranceHeatmap')).toEqual(expect.arrayContaining(['id', 'boxId', 'date', 'imageURL', 'width', 'height', 'trajectoryCount', 'pointCount', 'lastSampleAt', 'updatedAt']));
    expect(fields('VideoStream')).toEqual(expect.arrayContaining(['id', 'maxSegment', 'playlistURL', 'active', 'startTime', 'endTime']));
    expect(query('entranceLiveStreamSession').args).toEqual({ boxId: 'ID!' });
    expect(query('entranceHeatmaps')).toEqual({ args: { boxIds: '[ID]!', date: 'String', limit: 'Int' }, type: '[EntranceHeatmap]' });
    expect(query('videoStreams')).toEqual({ args: { boxIds: '[ID]', active: 'Boolean' }, type: '[VideoStream]' });
    expect(mutation('startEntranceLiveStream').args).toEqual({ boxId: 'ID!', qualityProfile: 'String', recordingMode: 'String', relayProtocol: 'String' });
    expect(mutation('keepEntranceLiveStreamAlive').args).toEqual({ sessionId: 'ID!' });
    expect(mutation('stopEntranceLiveStream')).toEqual({ args: { sessionId: 'ID!' }, type: 'Boolean!' });
    expect(mutation('uploadGateVideo')).toEqual({ args: { file: 'Upload!', boxId: 'ID!', startTime: 'DateTime', detectionsFile: 'Upload' }, type: 'Boolean' });
  });

  it('live card: start, read, keep alive and stop with the card\u2019s variables; the read is null once the session is over', async () => {
    // A camera set up (its box-scoped token made) but never heard from: the box is known, its device offline.
    const { token } = await createUser(t.app, { boxIds: ['394'] });
    const boxId = '394';
    const started = await webApp<Record<string, unknown>>(token, 'web-app/start-live-stream.graphql', { boxId, qualityProfile: 'inspect', recordingMode: 'off' });
    expect(started.errors).toBeUndefined();
    const session = started.data!.startEntranceLiveStream!;
    // The device was never seen: the session waits for it.
    expect(session).toMatchObject({ boxId, status: 'DEVICE_OFFLINE', qualityProfile: 'inspect', recordingMode: 'off', relayProtocol: 'hls', clipHandoffEnabled: false, handoffStreamId: null });
    expect(Object.keys(session.relayDetails as object).sort()).toEqual(['frameContentType', 'placeholder', 'playbackContentType', 'playbackUrl', 'publishToken', 'publisherUrl', 'relayProtocol', 'signalingToken']);

    const read = await webApp<Record<string, unknown>>(token, 'web-app/live-session-for-box.graphql', { boxId });
    expect(read.data!.entranceLiveStreamSession).toMatchObject({ id: session.id, status: 'DEVICE_OFFLINE' });
    const kept = await webApp<Record<string, unknown>>(token, 'web-app/keep-live-stream-alive.graphql', { sessionId: session.id });
    expect(new Date(kept.data!.keepEntranceLiveStreamAlive!.expiresAt as string).getTime()).toBeGreaterThanOrEqual(new Date(session.expiresAt as string).getTime());
    expect(await webApp(token, 'web-app/stop-live-stream.graphql', { sessionId: session.id })).toEqual({ data: { stopEntranceLiveStream: true } });
    expect(await webApp(token, 'web-app/live-session-for-box.graphql', { boxId })).toEqual({ data: { entranceLiveStreamSession: null } });
  });

  it('heatmaps: trajectories from the observer, then the viewer\u2019s query with numeric boxIds and date null, then by date', async () => {
    const { token } = await createUser(t.app);
    const now = new Date();
    const upload = await fetch(`${base}/api/entrance-heatmaps/trajectories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ boxId: '394', timestamp: pythonUtcIso(now), frameDimensions: { height: 480, width: 640 }, trackHistory: { '1': [[100, 200], [110, 210], [120, 222]], '7': [[300, 40], [305, 52]] } }),
    });
    expect(upload.status).toBe(200);

    const latest = await eventually(
      () => webApp<Record<string, unknown>[]>(token, 'web-app/entrance-heatmaps.graphql', { boxIds: [394], date: null, limit: 1 }),
      (answer) => typeof answer.data?.entranceHeatmaps?.[0]?.imageURL === 'string',
      15_000,
    );
    const [heatmap] = latest.data!.entranceHeatmaps!;
    expect(heatmap).toEqual({
      id: expect.any(String),
      boxId: '394',
      date: now.toISOString().slice(0, 10),
      imageURL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/media\//),
      width: expect.any(Number),
      height: expect.any(Number),
      trajectoryCount: 2,
      pointCount: 5,
      lastSampleAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // The viewer shows it with a plain <img>: no headers (from its own origin, which CORS lets read it too).
    const image = await fetch(heatmap!.imageURL as string, { headers: { origin: WEB_APP_ORIGIN } });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('access-control-allow-origin')).toBe(WEB_APP_ORIGIN);

    const byDate = await webApp<Record<string, unknown>[]>(token, 'web-app/entrance-heatmaps.graphql', { boxIds: [394], date: heatmap!.date, limit: 1 });
    expect(byDate.data!.entranceHeatmaps!.map((h) => h.id)).toEqual([heatmap!.id]);
    const dayBefore = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
    expect(await webApp(token, 'web-app/entrance-heatmaps.graphql', { boxIds: [394], date: dayBefore, limit: 1 })).toEqual({ data: { entranceHeatmaps: [] } });
  });

  it('stored video: the observer\u2019s two-file upload with a zone-less startTime, then the web app\u2019s stream lists', async () => {
    const { token } = await createUser(t.app);
    const startTime = pythonUtcIso(new Date('2026-05-01T09:30:00.250Z'));
    const uploaded = await multipart({ authorization: `Bearer ${token}` }, 'entrance-observer/upload-video.graphql', { file: null, detectionsFile: null, boxId: '394', startTime }, {
      '0': { variable: 'file', data: clip, filename: 'video_1714560000.mp4' },
      '1': { variable: 'detectionsFile', data: '[{"frame": 0, "detections": []}]', filename: 'detections_1714560000.json' },
    });
    expect(uploaded).toEqual({ status: 200, body: { data: { uploadGateVideo: true } } });

    const ready = await eventually(
      () => webApp<Record<string, unknown>[]>(token, 'web-app/device-streams.graphql', { boxIds: [394] }),
      (answer) => answer.data?.videoStreams?.[0]?.playlistURL != null,
      30_000,
    );
    const [stream] = ready.data!.videoStreams!;
    expect(stream).toEqual({
      id: expect.any(String),
      maxSegment: expect.any(Number),
      playlistURL: expect.stringMatching(/\.m3u8$/),
      startTime: '2026-05-01T09:30:00.250Z',
      endTime: expect.any(String),
      active: false,
    });
    // hls.js fetches it without custom headers, from the web app's origin.
    const playlist = await fetch(stream!.playlistURL as string, { headers: { origin: WEB_APP_ORIGIN } });
    expect(playlist.status).toBe(200);
    expect(playlist.headers.get('access-control-allow-origin')).toBe(WEB_APP_ORIGIN);
    expect(await playlist.text()).toMatch(/^#EXTM3U/);
    // The older view asks for active streams only: none once the video is processed.
    expect(await webApp(token, 'web-app/box-active-streams.graphql', { boxIds: [394] })).toEqual({ data: { videoStreams: [] } });
  });

  it('stored video: the web app\u2019s one-file camera upload', async () => {
    const { token } = await createUser(t.app);
    const uploaded = await multipart({ token }, 'web-app/upload-gate-video.graphql', { file: null, boxId: '395' }, { '0': { variable: 'file', data: clip, filename: 'capture.mp4' } });
    expect(uploaded).toEqual({ status: 200, body: { data: { uploadGateVideo: true } } });
    const listed = await webApp<Record<string, unknown>[]>(token, 'web-app/device-streams.graphql', { boxIds: [395] });
    expect(listed.data!.videoStreams).toHaveLength(1);
  });
});
