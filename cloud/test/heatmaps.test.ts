import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import pngjs from 'pngjs';
import { binTrajectories } from '../src/heatmaps/grid.ts';
import { buildTestApp, createUser, graphql, waitFor, type TestApp } from './helper.ts';

const FRAME = { width: 640, height: 480 };
const GRID = { cols: 160, rows: 120 };
/** How long a wait for a debounced render may take. */
const RENDER_WAIT_MS = 15_000;

let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await buildTestApp({ heatmaps: { grid: GRID, renderDebounceSeconds: 0.3 }, jobs: { workers: 1, leaseSeconds: 30, pollSeconds: 5 } });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await t.close();
});

function post(token: string, body: unknown, origin = base) {
  return fetch(`${origin}/api/entrance-heatmaps/trajectories`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The day's non-zero cells, straight from the database. */
async function cells(ownerId: number, boxId: string, date: string): Promise<Map<number, number>> {
  const { rows } = await t.app.ctx.db.query<{ counts: number[] }>('SELECT counts::float8[] AS counts FROM heatmap_days WHERE owner_id = $1 AND box_id = $2 AND day = $3', [
    ownerId,
    boxId,
    date,
  ]);
  const out = new Map<number, number>();
  (rows[0]?.counts ?? []).forEach((count, cell) => {
    if (count > 0) out.set(cell, count);
  });
  return out;
}

async function day(ownerId: number, boxId: string, date: string) {
  return t.app.ctx.heatmaps.get(ownerId, boxId, date);
}

/** Seeded tracks like bees walking at the entrance: deterministic, so expected counts can be recomputed. */
function randomTracks(seed: number, tracks: number, points: number, frame = FRAME): Record<string, [number, number][]> {
  let s = seed;
  const random = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const out: Record<string, [number, number][]> = {};
  for (let t = 0; t < tracks; t += 1) {
    let x = random() * frame.width;
    let y = random() * frame.height;
    const track: [number, number][] = [];
    for (let i = 0; i < points; i += 1) {
      track.push([Math.round(x * 10) / 10, Math.round(y * 10) / 10]);
      x = Math.min(frame.width, Math.max(0, x + (random() - 0.5) * 40));
      y = Math.min(frame.height, Math.max(0, y + (random() - 0.5) * 40));
    }
    out[`${seed}-${t}`] = track;
  }
  return out;
}

const HEATMAPS_QUERY = `query ($boxIds: [ID]!, $date: String, $limit: Int) {
  entranceHeatmaps(boxIds: $boxIds, date: $date, limit: $limit) { id boxId date imageURL width height trajectoryCount pointCount lastSampleAt updatedAt maxCount }
}`;

describe('trajectory upload', () => {
  it('counts known trajectories exactly: each point once in its cell, the cells between consecutive points once', async () => {
    const { user, token } = await createUser(t.app, { scopes: ['ingest', 'read'] });
    // 640 px over 160 columns: 4 px per cell. Points in cells (0,0) and (3,0), so cells 1 and 2 lie between them;
    // a second track rests in cell (10,5) for three frames.
    const body = {
      boxId: 11,
      timestamp: '2026-05-01T10:15:00',
      frameDimensions: FRAME,
      trackHistory: { '1': [[1, 1], [13, 2]], '2': [[41, 21], [42, 22], [43, 23]] },
    };
    const response = await post(token, body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: 'OK', trajectories: 2, points: 5, duplicate: false });
    expect(await cells(user.id, '11', '2026-05-01')).toEqual(new Map([[0, 1], [1, 1], [2, 1], [3, 1], [5 * 160 + 10, 3]]));

    await post(token, { ...body, timestamp: '2026-05-01T23:59:59Z' });
    expect(await cells(user.id, '11', '2026-05-01')).toEqual(new Map([[0, 2], [1, 2], [2, 2], [3, 2], [5 * 160 + 10, 6]]));
    expect(await day(user.id, '11', '2026-05-01')).toMatchObject({ trajectoryCount: 4, pointCount: 10, maxCount: 6, lastSampleAt: new Date('2026-05-01T23:59:59Z') });

    // Unix seconds work too, and the UTC date of the timestamp picks the day.
    await post(token, { ...body, timestamp: Date.parse('2026-05-02T00:00:01Z') / 1000 });
    expect((await day(user.id, '11', '2026-05-02'))?.pointCount).toBe(5);
  });

  // A backend terminated while an upload's transaction waited on a row lock ended the process (unhandled 'error').
  it('answers 503 when the database drops the connection mid-upload, and goes on serving', async () => {
    const { token } = await createUser(t.app, { scopes: ['ingest', 'read'] });
    const body = { boxId: 'probe-box', timestamp: Math.floor(Date.now() / 1000), frameDimensions: FRAME, trackHistory: { '1': [[10, 10], [20, 20], [30, 30]] } };
    expect((await post(token, { ...body, batchId: 'b1' })).status).toBe(200);
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT box_id FROM heatmap_days WHERE box_id = 'probe-box' FOR UPDATE`);
      const blocked = post(token, { ...body, batchId: 'b2' });
      const waiting = await waitFor(
        async () => (await holder.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0]?.pid,
        'the upload to wait for the row',
      );
      await holder.query('SELECT pg_terminate_backend($1)', [waiting]);
      const response = await blocked;
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    expect((await post(token, { ...body, batchId: 'b3' })).status).toBe(200);
  });

  it('never loses counts under 50 concurrent uploads to the same heatmap, through two instances', async () => {
    const { user, token } = await createUser(t.app, { scopes: ['ingest'] });
    // A second instance on the same database: uploads merged inside one instance still race the other's in SQL.
    const other = await buildTestApp({ heatmaps: { grid: GRID, renderDebounceSeconds: 0.3 }, jobs: { workers: 1, leaseSeconds: 30, pollSeconds: 5 } }, { url: t.databaseUrl });
    const otherBase = await other.app.listen({ port: 0, host: '127.0.0.1' });
    const bodies = Array.from({ length: 50 }, (_, i) => ({
      boxId: 'busy',
      timestamp: '2026-05-03T12:00:00Z',
      frameDimensions: FRAME,
      trackHistory: randomTracks(i + 1, 20, 40),
    }));
    const expected = new Map<number, number>();
    for (const body of bodies) {
      for (const [cell, count] of binTrajectories(Object.values(body.trackHistory), FRAME, GRID).cells) expected.set(cell, (expected.get(cell) ?? 0) + count);
    }
    let responses: Response[];
    try {
      responses = await Promise.all(bodies.map((body, i) => post(token, body, i % 2 === 0 ? base : otherBase)));
    } finally {
      await other.close();
    }
    expect(responses.map((r) => r.status)).toEqual(bodies.map(() => 200));
    const stored = await cells(user.id, 'busy', '2026-05-03');
    expect(stored.size).toBe(expected.size);
    for (const [cell, count] of expected) expect(stored.get(cell), `cell ${cell}`).toBe(count);
    expect(await day(user.id, 'busy', '2026-05-03')).toMatchObject({ trajectoryCount: 50 * 20, pointCount: 50 * 20 * 40, maxCount: Math.max(...expected.values()) });
  });

  it('counts a retried batch once', async () => {
    const { user, token } = await createUser(t.app, { scopes: ['ingest'] });
    const body = { boxId: 'b', timestamp: '2026-05-04T08:00:00', frameDimensions: FRAME, trackHistory: randomTracks(99, 3, 10), batchId: 'batch-1' };
    const first = await (await post(token, body)).json();
    const again = await Promise.all([post(token, body), post(token, body)]);
    expect(first).toEqual({ message: 'OK', trajectories: 3, points: 30, duplicate: false });
    for (const response of again) expect(await response.json()).toEqual({ message: 'OK', trajectories: 0, points: 0, duplicate: true });
    expect(await day(user.id, 'b', '2026-05-04')).toMatchObject({ trajectoryCount: 3, pointCount: 30 });
    // The same batch id for another box is another batch.
    await post(token, { ...body, boxId: 'c' });
    expect((await day(user.id, 'c', '2026-05-04'))?.pointCount).toBe(30);
  });

  it.each([
    [{ trackHistory: { '17': [[1, 1], [2, 2], [3, 3], [4, 4], [700, 10]] } }, 'trackHistory.17[4] is outside the 640×480 frame'],
    [{ trackHistory: { a: [[1, 2, 3]] } }, 'trackHistory.a[0] must contain at most 2 items'],
    [{ timestamp: 'last tuesday' }, 'timestamp'],
    [{ timestamp: '2026-02-30T10:00:00' }, 'timestamp "2026-02-30T10:00:00" is not a valid date and time'],
    [{ timestamp: 0 }, "timestamp 0 is before 2000: is the device's clock set?"],
    [{ frameDimensions: { width: 640, height: 0 } }, 'frameDimensions.height must be >= 1'],
    [{ frameDimensions: { width: 9000, height: 480 } }, 'frameDimensions.width must be <= 8192'],
    [{ colour: 'yellow' }, 'colour is not an allowed property'],
    [{ boxId: null }, 'boxId must be'],
  ])('refuses %j with a 400 naming the field', async (overrides, error) => {
    const { token } = await createUser(t.app, { scopes: ['ingest'] });
    const response = await post(token, { boxId: 1, timestamp: '2026-05-01T10:00:00', frameDimensions: FRAME, trackHistory: {}, ...overrides });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain(error);
  });

  // A 16:9 upload after 4:3 ones set the day's frame to 16:9, and the 4:3 entrance was drawn stretched.
  it('keeps the frame size of the day\'s first upload when a later one names another', async () => {
    const { user, token } = await createUser(t.app, { scopes: ['ingest'] });
    const at = (batchId: string, frame: { width: number; height: number }) => ({ boxId: 'resized', timestamp: '2026-05-06T08:00:00', frameDimensions: frame, trackHistory: randomTracks(7, 2, 5, frame), batchId });
    expect((await post(token, at('4:3', { width: 640, height: 480 }))).status).toBe(200);
    expect((await post(token, at('16:9', { width: 1920, height: 1080 }))).status).toBe(200);
    expect(await day(user.id, 'resized', '2026-05-06')).toMatchObject({ frameWidth: 640, frameHeight: 480, trajectoryCount: 4 });
  });

  it('refuses a body with more points than one upload may carry', async () => {
    const { token } = await createUser(t.app, { scopes: ['ingest'] });
    const track = Array.from({ length: 2000 }, (_, i) => [i % 640, 1]);
    const trackHistory = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [String(i), track]));
    const response = await post(token, { boxId: 1, timestamp: '2026-05-01T10:00:00', frameDimensions: FRAME, trackHistory });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain('more than 200000 points');
  });

  it('needs an ingest or device token, and a box-scoped token only for its own boxes', async () => {
    const body = { boxId: 5, timestamp: '2026-05-01T10:00:00', frameDimensions: FRAME, trackHistory: {} };
    const unauthenticated = await fetch(`${base}/api/entrance-heatmaps/trajectories`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(unauthenticated.status).toBe(401);
    const reader = await createUser(t.app, { scopes: ['read'] });
    const unscoped = await post(reader.token, body);
    expect(unscoped.status).toBe(403);
    expect(await unscoped.json()).toEqual({ error: 'this token lacks the "ingest" or "device" scope' });
    // Broke: the spec lists this upload among the device endpoints, yet a device-scoped token got 403.
    const camera = await createUser(t.app, { scopes: ['device'] });
    expect((await post(camera.token, body)).status).toBe(200);
    const device = await createUser(t.app, { scopes: ['ingest'], boxIds: ['6'] });
    const refused = await post(device.token, body);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'this token may not act for box "5"' });
    expect((await post(device.token, { ...body, boxId: 6 })).status).toBe(200);
  });

  // An upload without a single point made a blank heatmap day.
  it('takes an upload without points and makes no day of it', async () => {
    const { user, token } = await createUser(t.app, { scopes: ['ingest'] });
    const response = await post(token, { boxId: 'quiet', timestamp: '2026-05-05T08:00:00', frameDimensions: FRAME, trackHistory: {} });
    expect(await response.json()).toEqual({ message: 'OK', trajectories: 0, points: 0, duplicate: false });
    expect(await day(user.id, 'quiet', '2026-05-05')).toBeNull();
  });
});

describe('rendered heatmaps', () => {
  it('renders a PNG of the frame size, served through a signed URL, and lists it the way the web app asks', async () => {
    const { token } = await createUser(t.app);
    const small = { width: 320, height: 240 };
    const uploads = [
      { boxId: 21, timestamp: '2026-05-05T09:00:00', frameDimensions: FRAME, trackHistory: randomTracks(5, 30, 50) },
      { boxId: 21, timestamp: '2026-05-06T09:00:00', frameDimensions: FRAME, trackHistory: randomTracks(6, 10, 50) },
      { boxId: 22, timestamp: '2026-05-06T10:00:00', frameDimensions: small, trackHistory: randomTracks(7, 10, 20, small) },
    ];
    for (const body of uploads) expect((await post(token, body)).status).toBe(200);

    const listed = await waitFor(async () => {
      const result = await graphql(t.app, token, HEATMAPS_QUERY, { boxIds: [21, 22], date: null });
      const heatmaps = result.data?.entranceHeatmaps as Record<string, unknown>[] | undefined;
      return heatmaps && heatmaps.length === 3 && heatmaps.every((h) => h.imageURL) ? heatmaps : null;
    }, 'three rendered heatmaps', RENDER_WAIT_MS);
    expect(listed.map((h) => [h.boxId, h.date])).toEqual([
      ['22', '2026-05-06'],
      ['21', '2026-05-06'],
      ['21', '2026-05-05'],
    ]);
    const may5 = listed[2]!;
    expect(may5).toMatchObject({ boxId: '21', date: '2026-05-05', width: 640, height: 480, trajectoryCount: 30, pointCount: 1500, lastSampleAt: '2026-05-05T09:00:00.000Z' });
    expect(may5.maxCount).toBeGreaterThan(1);
    // Through inject the request's origin is localhost:80; the path is what matters here.
    const imagePath = new URL(may5.imageURL as string).pathname;
    expect(imagePath).toMatch(/^\/media\/\d+\.[\w-]+\/heatmaps\/\d+-21\/2026-05-05\.png$/);

    const image = await fetch(base + imagePath);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('x-content-type-options')).toBe('nosniff'); // only the web app's pages said it
    const png = pngjs.PNG.sync.read(Buffer.from(await image.arrayBuffer()));
    expect([png.width, png.height]).toEqual([640, 480]);
    // Without an entrance still, cells without bees stay transparent and visited ones are drawn.
    let drawn = 0;
    for (let i = 3; i < png.data.length; i += 4) if (png.data[i]! > 0) drawn += 1;
    expect(drawn).toBeGreaterThan(1000);
    expect(drawn).toBeLessThan(640 * 480);

    const newest = listed[0]!;
    expect([newest.width, newest.height]).toEqual([320, 240]);
    const oneDay = await graphql(t.app, token, HEATMAPS_QUERY, { boxIds: ['21'], date: '2026-05-05' });
    expect((oneDay.data?.entranceHeatmaps as unknown[]).length).toBe(1);
    const limited = await graphql(t.app, token, HEATMAPS_QUERY, { boxIds: [21, 22], date: null, limit: 1 });
    expect((limited.data?.entranceHeatmaps as { boxId: string }[]).map((h) => h.boxId)).toEqual(['22']);
  });

  it('debounces renders: a burst of uploads makes few renders, and the last one covers all the data', async () => {
    const { user, token } = await createUser(t.app, { scopes: ['ingest'] });
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(token, { boxId: 'burst', timestamp: '2026-05-07T10:00:00', frameDimensions: FRAME, trackHistory: randomTracks(100 + i, 2, 10) })),
    );
    const uploadSeconds = (Date.now() - started) / 1000;
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    const rendered = await waitFor(async () => {
      const d = await day(user.id, 'burst', '2026-05-07');
      const pending = await t.app.ctx.db.query(`SELECT 1 FROM jobs WHERE kind = 'heatmap.render' AND dedupe_key = $1 AND state IN ('queued', 'running')`, [`${user.id}/burst/2026-05-07`]);
      return d?.renderedAt && pending.rowCount === 0 ? d : null;
    }, 'the renders to settle', RENDER_WAIT_MS);
    // At most one render per debounce period (0.3 s here) while uploads arrive, plus the one after the last.
    expect(rendered.renderCount).toBeGreaterThanOrEqual(1);
    expect(rendered.renderCount).toBeLessThanOrEqual(Math.min(5, Math.floor(uploadSeconds / 0.3) + 2));
    expect(rendered.renderedAt!.getTime()).toBeGreaterThanOrEqual(rendered.updatedAt.getTime());
    expect(rendered.pointCount).toBe(20 * 2 * 10);
  });

  it.each([
    [{ boxIds: [1], limit: 0 }, 'limit must be from 1 to 120'],
    [{ boxIds: [1], limit: 121 }, 'limit must be from 1 to 120'],
    [{ boxIds: [1], date: '2026-13-01' }, 'date must be a calendar date YYYY-MM-DD'],
    [{ boxIds: [1], date: 'today' }, 'date must be a calendar date YYYY-MM-DD'],
  ])('refuses %j with a clear GraphQL error', async (variables, message) => {
    const { token } = await createUser(t.app);
    const result = await graphql(t.app, token, HEATMAPS_QUERY, variables);
    expect(result.errors?.[0]?.message).toContain(message);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it("never shows one user's heatmaps to another, even for the same box id", async () => {
    const alice = await createUser(t.app);
    const bob = await createUser(t.app);
    await post(alice.token, { boxId: 31, timestamp: '2026-05-08T10:00:00', frameDimensions: FRAME, trackHistory: randomTracks(31, 5, 20) });
    await waitFor(async () => (await day(alice.user.id, '31', '2026-05-08'))?.renderedAt, "alice's render", RENDER_WAIT_MS);
    const seenByBob = await graphql(t.app, bob.token, HEATMAPS_QUERY, { boxIds: [31], date: null });
    expect(seenByBob.data?.entranceHeatmaps).toEqual([]);

    await post(bob.token, { boxId: 31, timestamp: '2026-05-08T11:00:00', frameDimensions: FRAME, trackHistory: randomTracks(32, 1, 2) });
    const bobs = await waitFor(async () => {
      const result = await graphql(t.app, bob.token, HEATMAPS_QUERY, { boxIds: [31], date: '2026-05-08' });
      const list = result.data?.entranceHeatmaps as { imageURL: string | null; pointCount: number }[];
      return list[0]?.imageURL ? list : null;
    }, "bob's render", RENDER_WAIT_MS);
    expect(bobs).toHaveLength(1);
    expect(bobs[0]!.pointCount).toBe(2);
    const alices = (await graphql(t.app, alice.token, HEATMAPS_QUERY, { boxIds: [31], date: '2026-05-08' })).data?.entranceHeatmaps as { imageURL: string; pointCount: number }[];
    expect(alices[0]!.pointCount).toBe(100);
    expect(new URL(alices[0]!.imageURL).pathname.split('/').slice(3, 5)).not.toEqual(new URL(bobs[0]!.imageURL!).pathname.split('/').slice(3, 5));

    const anonymous = await graphql(t.app, undefined, HEATMAPS_QUERY, { boxIds: [31] });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
