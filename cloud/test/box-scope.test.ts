import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, graphql, type TestApp } from './helper.ts';

// A token made for some boxes (createApiToken(boxIds)) sees and acts for those boxes only, in reads as in writes.
// Reads ignored the list once: a token for box "a" listed every hive, box, clip and live session of its owner.

let t: TestApp;
let owner: string;
let limited: string;
let limitedAuth: Record<string, string>;
let controlOnly: string;
let clipOfBoxB: string;
const T0 = Date.UTC(2026, 4, 1) / 1000;

beforeAll(async () => {
  t = await buildTestApp();
  const user = await t.app.ctx.users.create(`scoped_${Date.now()}`);
  owner = (await t.app.ctx.tokens.issue({ userId: user.id, name: 'owner', scopes: ['*'], boxIds: null })).token;
  limited = (await t.app.ctx.tokens.issue({ userId: user.id, name: 'camera a', scopes: ['read', 'ingest', 'control'], boxIds: ['a'] })).token;
  limitedAuth = { authorization: `Bearer ${limited}` };
  controlOnly = (await t.app.ctx.tokens.issue({ userId: user.id, name: 'remote', scopes: ['control'], boxIds: null })).token;
  const ownerAuth = { authorization: `Bearer ${owner}` };
  const movement = [
    { hiveId: 'h1', boxId: 'a', beesIn: 3, beesOut: 1, timestamp: T0 + 60 },
    { hiveId: 'h2', boxId: 'b', beesIn: 7, beesOut: 2, timestamp: T0 + 60 },
  ];
  expect((await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: ownerAuth, payload: movement })).statusCode).toBe(200);
  const metrics = ['h1', 'h2'].map((hiveId) => ({ hiveId, fields: { temperatureCelsius: 34 }, timestamp: T0 + 30 }));
  expect((await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: ownerAuth, payload: metrics })).statusCode).toBe(200);
  const id = await t.app.ctx.videos.reserveId();
  clipOfBoxB = id;
  await t.app.ctx.videos.create(id, {
    ownerId: user.id, boxId: 'b', startTime: new Date(T0 * 1000), durationSeconds: 5, width: 640, height: 480, hasAudio: false,
    sizeBytes: 1000, originalKey: `videos/${id}/original.mp4`, detectionsKey: null, contentSha256: 'x'.repeat(64),
  });
});
afterAll(() => t.close());

describe('a token made for some boxes', () => {
  it('lists only its boxes and the hives they count in', async () => {
    const result = await graphql(t.app, limited, `{ hives { id boxes { id } } boxes { id } hive2: hive(id: "h2") { id } boxB: box(id: "b") { id } boxA: box(id: "a") { id } }`);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ hives: [{ id: 'h1', boxes: [{ id: 'a' }] }], boxes: [{ id: 'a' }], hive2: null, boxB: null, boxA: { id: 'a' } });
    const all = await graphql(t.app, owner, `{ hives { id } boxes { id } }`);
    expect(all.data).toEqual({ hives: [{ id: 'h1' }, { id: 'h2' }], boxes: [{ id: 'a' }, { id: 'b' }] });
  });

  it('gets totals, clips and heatmaps of its boxes only, even when it names others', async () => {
    const result = await graphql(t.app, limited, `{
      every: entranceTotals(date: "2026-05-01") { boxId beesIn }
      named: entranceTotals(boxIds: ["a", "b"], date: "2026-05-01") { boxId beesIn }
      videoStreams { id }
      named2: videoStreams(boxIds: ["b"]) { id }
      entranceHeatmaps(boxIds: ["b"]) { boxId }
    }`);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({ every: [{ boxId: 'a', beesIn: 3 }], named: [{ boxId: 'a', beesIn: 3 }], videoStreams: [], named2: [], entranceHeatmaps: [] });
    const clips = (await graphql(t.app, owner, `{ videoStreams { id } }`)).data!.videoStreams as { id: string }[];
    expect(clips).toHaveLength(1);
    const [clip] = clips;
    expect((await graphql(t.app, limited, `query ($id: ID!) { gateVideo(id: $id) { id } }`, { id: clip!.id })).data).toEqual({ gateVideo: null });
  });

  it('is refused, by name, a series or the clips of another box or hive', async () => {
    const cases = [
      [`{ entranceMovement(boxId: "b", from: "2026-05-01T00:00:00Z", to: "2026-05-02T00:00:00Z") { beesIn } }`, 'this token may not act for box "b"'],
      [`{ gateVideos(boxId: "b") { id } }`, 'this token may not act for box "b"'],
      [`{ hiveMetrics(hiveId: "h2", from: "2026-05-01T00:00:00Z", to: "2026-05-02T00:00:00Z") { samples } }`, 'this token may not read hive "h2": none of its boxes counts there'],
    ];
    for (const [query, message] of cases) {
      const result = await graphql(t.app, limited, query!);
      expect(result.errors?.[0]).toMatchObject({ message, extensions: { code: 'FORBIDDEN' } });
    }
    const own = await graphql(t.app, limited, `{ hiveMetrics(hiveId: "h1", from: "2026-05-01T00:00:00Z", to: "2026-05-02T00:00:00Z", bucketSeconds: 3600) { samples } }`);
    expect(own.data).toEqual({ hiveMetrics: [{ samples: 1 }] });
  });

  it('sends readings for its own hive or a hive no box counts in yet, not for the hive of another box', async () => {
    const post = (hiveId: string) => t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: limitedAuth, payload: [{ hiveId, fields: { weightKg: 40 }, timestamp: T0 + 90 }] });
    expect((await post('h1')).statusCode).toBe(200);
    expect((await post('new-hive')).statusCode).toBe(200);
    const refused = await post('h2');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'this token may not send readings for hive "h2": its boxes count in other hives' });
    const h2 = await graphql(t.app, owner, `{ hiveMetrics(hiveId: "h2", from: "2026-05-01T00:00:00Z", to: "2026-05-02T00:00:00Z", bucketSeconds: 86400) { samples } }`);
    expect(h2.data).toEqual({ hiveMetrics: [{ samples: 1 }] });
  });

  // Keep-alive and stop of another box's session said FORBIDDEN naming the box, a missing id NOT_FOUND: the owner's other boxes showed.
  it('can neither keep alive nor stop the live session of another box, told as of a session that does not exist', async () => {
    const started = await graphql(t.app, owner, `mutation { startEntranceLiveStream(boxId: "b") { id } }`);
    const sessionId = (started.data!.startEntranceLiveStream as { id: string }).id;
    for (const mutation of ['keepEntranceLiveStreamAlive(sessionId: $id) { id }', 'stopEntranceLiveStream(sessionId: $id)']) {
      const result = await graphql(t.app, limited, `mutation ($id: ID!) { ${mutation} }`, { id: sessionId });
      const missing = await graphql(t.app, limited, `mutation ($id: ID!) { ${mutation} }`, { id: '00000000-0000-4000-8000-000000000000' });
      expect(missing.errors?.[0]).toMatchObject({ message: 'live session not found', extensions: { code: 'NOT_FOUND' } });
      expect(result.errors).toEqual(missing.errors);
    }
    const still = await graphql(t.app, owner, `{ entranceLiveStreamSession(boxId: "b") { status } }`);
    expect(still.data?.entranceLiveStreamSession).not.toBeNull();
  });

  // Deleting a clip of another box said FORBIDDEN naming the box, a missing or stranger's clip "no video with id".
  it('cannot delete a clip of another box, told as of a clip that does not exist', async () => {
    const DELETE = `mutation ($id: ID!) { deleteGateVideo(id: $id) }`;
    const result = await graphql(t.app, limited, DELETE, { id: clipOfBoxB });
    expect(result.errors?.[0]).toMatchObject({ message: `no video with id "${clipOfBoxB}"`, extensions: { code: 'BAD_USER_INPUT' } });
    const missingId = String(Number(clipOfBoxB) + 1_000_000);
    const missing = await graphql(t.app, limited, DELETE, { id: missingId });
    expect(missing.errors?.[0]).toMatchObject({ message: `no video with id "${missingId}"`, extensions: { code: 'BAD_USER_INPUT' } });
    expect(await t.app.ctx.videos.getAnyOwner(clipOfBoxB)).not.toBeNull();
  });
});

describe('a token that may control but not read', () => {
  // Live starts are taken only for boxes the account knows: these cameras have reported.
  beforeAll(async () => {
    for (const boxId of ['c2', 'flood0', 'flood1', 'flood2', 'flood3']) {
      const status = await t.app.inject({ method: 'POST', url: '/api/entrance-live/device/status', headers: { authorization: `Bearer ${owner}` }, payload: { boxId, cameraStatus: {}, publisherState: {} } });
      expect(status.statusCode).toBe(200);
    }
  });

  // startEntranceLiveStream and keepEntranceLiveStreamAlive gave a control-only token a playable URL, a read it lacks.
  it('starts, keeps alive and stops a session without seeing its playback URL or what the device reported', async () => {
    const fields = 'id boxId status playbackUrl publisherUrl lastDeviceSeenAt lastErrorCode relayDetails { playbackUrl publisherUrl }';
    const started = await graphql(t.app, controlOnly, `mutation { startEntranceLiveStream(boxId: "c2", relayProtocol: "http-jpeg-push") { ${fields} } }`);
    expect(started.errors).toBeUndefined();
    const session = started.data!.startEntranceLiveStream as Record<string, unknown>;
    expect(session).toMatchObject({ boxId: 'c2', playbackUrl: null, publisherUrl: null, relayDetails: { playbackUrl: null, publisherUrl: null } });
    // The owner's view of the same session has a playback URL at once (an MJPEG stream waits for its first frame).
    const owned = await graphql(t.app, owner, `{ entranceLiveStreamSession(boxId: "c2") { playbackUrl } }`);
    expect(owned.data?.entranceLiveStreamSession).toEqual({ playbackUrl: expect.stringContaining('/media/') });
    const kept = await graphql(t.app, controlOnly, `mutation ($id: ID!) { keepEntranceLiveStreamAlive(sessionId: $id) { ${fields} } }`, { id: session.id });
    expect(kept.data?.keepEntranceLiveStreamAlive).toMatchObject({ id: session.id, playbackUrl: null, relayDetails: { playbackUrl: null } });
    const read = await graphql(t.app, controlOnly, `{ entranceLiveStreamSession(boxId: "c2") { id } }`);
    expect(read.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await graphql(t.app, controlOnly, `mutation ($id: ID!) { stopEntranceLiveStream(sessionId: $id) }`, { id: session.id })).toEqual({ data: { stopEntranceLiveStream: true } });
  });

  // One request with 100 aliased startEntranceLiveStream made 100 sessions and 100 START_STREAM commands.
  it('cannot start more than a few live streams in one operation, and nothing starts when it asks for more', async () => {
    const starts = (n: number) => Array.from({ length: n }, (_, i) => `s${i}: startEntranceLiveStream(boxId: "flood${i}") { id }`).join(' ');
    const flood = await graphql(t.app, controlOnly, `mutation { ${starts(100)} }`);
    expect(flood.data ?? null).toBeNull();
    expect(flood.errors?.[0]).toMatchObject({
      message: 'an operation may start a live stream at most 4 times; this one does so 100 times (aliases counted): send the rest in further requests',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    const after = await graphql(t.app, owner, `{ s0: entranceLiveStreamSession(boxId: "flood0") { id } s99: entranceLiveStreamSession(boxId: "flood99") { id } }`);
    expect(after.data).toEqual({ s0: null, s99: null });
    const few = await graphql(t.app, controlOnly, `mutation { ${starts(4)} }`);
    expect(few.errors).toBeUndefined();
  });
});
