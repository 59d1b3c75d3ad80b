import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../src/db/postgres.ts';
import { loadMigrations, migrate } from '../src/db/migrate.ts';
import { buildTestApp, createTestDatabase, createUser, graphql, type TestApp } from './helper.ts';

// A box belongs to the hive its newest movement record names. Its first hive was kept for good: a box moved from H-A to
// H-B was listed in H-A, H-B showed no boxes, and a token made for the box could not read its new hive.

let t: TestApp;
const DAY_10 = Date.UTC(2026, 10, 10, 12) / 1000; // 2026-11-10T12:00Z
const DAY_11 = Date.UTC(2026, 10, 11, 12) / 1000;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const postMovement = (app: TestApp['app'], auth: Record<string, string>, payload: unknown) =>
  app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: auth, payload: payload as object });

async function hiveOfBox(token: string, boxId: string): Promise<unknown> {
  const result = await graphql(t.app, token, `query ($id: ID!) { box(id: $id) { hiveId } }`, { id: boxId });
  expect(result.errors).toBeUndefined();
  return (result.data?.box as { hiveId: string | null } | null)?.hiveId;
}

describe('a box moved to another hive', () => {
  // hives, boxes(hiveId), box.hiveId and the day's totals all kept the box in H-A after it counted in H-B.
  it('is listed in the hive its newest record names, and each day reports the hive it counted in that day', async () => {
    const user = await createUser(t.app);
    expect((await postMovement(t.app, user.auth, { hiveId: 'H-A', boxId: 'B-move', beesIn: 4, beesOut: 1, timestamp: DAY_10 })).statusCode).toBe(200);
    expect((await postMovement(t.app, user.auth, { hiveId: 'H-B', boxId: 'B-move', beesIn: 9, beesOut: 2, timestamp: DAY_11 })).statusCode).toBe(200);
    const result = await graphql(
      t.app,
      user.token,
      `{ hives { id boxes { id hiveId } } inB: boxes(hiveId: "H-B") { id } inA: boxes(hiveId: "H-A") { id } box(id: "B-move") { hiveId }
         day10: entranceTotals(date: "2026-11-10") { boxId hiveId beesIn } day11: entranceTotals(date: "2026-11-11") { boxId hiveId beesIn }
         day12: entranceTotals(date: "2026-11-12") { boxId hiveId beesIn } }`,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      hives: [
        { id: 'H-A', boxes: [] },
        { id: 'H-B', boxes: [{ id: 'B-move', hiveId: 'H-B' }] },
      ],
      inB: [{ id: 'B-move' }],
      inA: [],
      box: { hiveId: 'H-B' },
      day10: [{ boxId: 'B-move', hiveId: 'H-A', beesIn: 4 }],
      day11: [{ boxId: 'B-move', hiveId: 'H-B', beesIn: 9 }],
      // A day without records names the hive the box is in now.
      day12: [{ boxId: 'B-move', hiveId: 'H-B', beesIn: 0 }],
    });
  });

  // A record sent late, for a time before the move, would have moved the box back if the last one to arrive had won.
  it('stays where its newest record by time puts it when an older record arrives late', async () => {
    const user = await createUser(t.app);
    await postMovement(t.app, user.auth, { hiveId: 'H-B', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_11 });
    await postMovement(t.app, user.auth, [
      { hiveId: 'H-A', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_10 },
      { hiveId: 'H-C', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_11 - 60 },
    ]);
    expect(await hiveOfBox(user.token, 'B-late')).toBe('H-B');
    // Within one batch the newest record wins, wherever it stands in the batch.
    await postMovement(t.app, user.auth, [
      { hiveId: 'H-D', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_11 + 120 },
      { hiveId: 'H-E', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_11 + 60 },
    ]);
    expect(await hiveOfBox(user.token, 'B-late')).toBe('H-D');
    // Two records of the same second: the greater hive id, whichever came first.
    await postMovement(t.app, user.auth, { hiveId: 'H-G', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_11 + 180 });
    await postMovement(t.app, user.auth, { hiveId: 'H-F', boxId: 'B-late', beesIn: 1, beesOut: 0, timestamp: DAY_11 + 180 });
    expect(await hiveOfBox(user.token, 'B-late')).toBe('H-G');
    // A record without a device time is stamped now, later than any of these.
    await postMovement(t.app, user.auth, { hiveId: 'H-now', boxId: 'B-late', beesIn: 1, beesOut: 0 });
    expect(await hiveOfBox(user.token, 'B-late')).toBe('H-now');
  });

  // Two instances storing batches for the same boxes at once must agree on the newest record, whatever commits last.
  it('ends in the hive of its newest record when two instances store batches concurrently', async () => {
    const second = await buildTestApp({}, { url: t.databaseUrl });
    try {
      const user = await createUser(t.app);
      const boxes = ['c1', 'c2', 'c3', 'c4'];
      // 24 batches of 20 records; record k of box b names hive k mod 5 at a time spread so that batches interleave.
      const batches = Array.from({ length: 24 }, (_, batch) =>
        boxes.flatMap((boxId, b) =>
          Array.from({ length: 5 }, (_, r) => {
            const k = (batch * 7 + r * 13 + b * 5) % 120;
            return { hiveId: `hive-${k % 5}`, boxId, beesIn: 1, beesOut: 0, timestamp: DAY_10 + k * 60 };
          }),
        ),
      );
      const newest = new Map<string, { ts: number; hiveId: string }>();
      for (const record of batches.flat()) {
        const seen = newest.get(record.boxId);
        if (!seen || record.timestamp > seen.ts || (record.timestamp === seen.ts && record.hiveId > seen.hiveId)) newest.set(record.boxId, { ts: record.timestamp, hiveId: record.hiveId });
      }
      // Newest first, so that every later batch that commits carries older records that must not win.
      batches.sort((a, b) => Math.max(...b.map((r) => r.timestamp)) - Math.max(...a.map((r) => r.timestamp)));
      const responses = await Promise.all(batches.map((batch, i) => postMovement(i % 2 === 0 ? t.app : second.app, user.auth, batch)));
      expect(responses.map((r) => r.statusCode)).toEqual(batches.map(() => 200));
      const result = await graphql(t.app, user.token, `{ boxes { id hiveId } }`);
      expect(result.data?.boxes).toEqual(boxes.map((id) => ({ id, hiveId: newest.get(id)!.hiveId })));
      // The expectation is not the trivial one: the boxes do not all end in one hive.
      expect(new Set(boxes.map((id) => newest.get(id)!.hiveId)).size).toBeGreaterThan(1);
    } finally {
      await second.close();
    }
  });

  // A token made for the box kept reading (and sending readings for) the hive the box had left.
  it("takes a token made for the box along: it reads and sends readings for the box's new hive, not the old", async () => {
    const user = await createUser(t.app);
    const { token: camera } = await t.app.ctx.tokens.issue({ userId: user.user.id, name: 'camera', scopes: ['read', 'ingest'], boxIds: ['B-scoped'] });
    const cameraAuth = { authorization: `Bearer ${camera}` };
    await postMovement(t.app, user.auth, [
      { hiveId: 'H-A', boxId: 'B-scoped', beesIn: 1, beesOut: 0, timestamp: DAY_10 },
      { hiveId: 'H-B', boxId: 'B-other', beesIn: 1, beesOut: 0, timestamp: DAY_10 },
    ]);
    const sendReading = (hiveId: string) => t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: cameraAuth, payload: { hiveId, fields: { weightKg: 40 }, timestamp: DAY_11 } });
    const reads = `{ hives { id } a: hive(id: "H-A") { id } b: hive(id: "H-B") { id boxes { id } } }`;
    expect((await graphql(t.app, camera, reads)).data).toEqual({ hives: [{ id: 'H-A' }], a: { id: 'H-A' }, b: null });
    expect((await sendReading('H-B')).statusCode).toBe(403);

    await postMovement(t.app, cameraAuth, { hiveId: 'H-B', boxId: 'B-scoped', beesIn: 1, beesOut: 0, timestamp: DAY_11 });
    expect((await graphql(t.app, camera, reads)).data).toEqual({ hives: [{ id: 'H-B' }], a: null, b: { id: 'H-B', boxes: [{ id: 'B-scoped' }] } });
    expect((await sendReading('H-B')).statusCode).toBe(200);
    const metrics = await graphql(t.app, camera, `{ hiveMetrics(hiveId: "H-B", from: "2026-11-11T00:00:00Z", to: "2026-11-12T00:00:00Z", bucketSeconds: 86400) { samples } }`);
    expect(metrics.data).toEqual({ hiveMetrics: [{ samples: 1 }] });
    // H-A has no counting box left, so it is open to readings from a new device, as any hive without boxes is.
    expect((await sendReading('H-A')).statusCode).toBe(200);
  });
});

describe('migration 010', () => {
  // Boxes moved before the fix must be found in their new hive after the upgrade, not only those that count again.
  it('puts each existing box in the hive of its newest stored record', async () => {
    const database = await createTestDatabase();
    const db = new PostgresDatabase({ url: database.url, poolSize: 2 });
    try {
      await migrate(db, loadMigrations().filter((m) => m.version < 10));
      await db.query(`INSERT INTO users (login) VALUES ('old')`);
      const owner = (await db.query<{ id: string }>(`SELECT id FROM users`)).rows[0]!.id;
      await db.query(
        `INSERT INTO boxes (owner_id, box_id, hive_id) VALUES ($1, 'moved', 'H-A'), ($1, 'stayed', 'H-A'), ($1, 'tie', 'H-A'), ($1, 'no-records', 'H-Z')`,
        [owner],
      );
      await db.query(
        `INSERT INTO movements (owner_id, hive_id, box_id, ts, bees_in, bees_out) VALUES
           ($1, 'H-A', 'moved', '2026-11-10T12:00Z', 1, 0), ($1, 'H-B', 'moved', '2026-11-11T12:00Z', 1, 0),
           ($1, 'H-A', 'stayed', '2026-11-11T12:00Z', 1, 0), ($1, 'H-C', 'stayed', '2026-11-09T12:00Z', 1, 0),
           ($1, 'H-A', 'tie', '2026-11-11T12:00Z', 1, 0), ($1, 'H-D', 'tie', '2026-11-11T12:00Z', 1, 0)`,
        [owner],
      );
      expect(await migrate(db)).toEqual(loadMigrations().filter((m) => m.version >= 10).map((m) => m.version));
      const { rows } = await db.query(`SELECT box_id, hive_id, hive_named_at FROM boxes ORDER BY box_id`);
      expect(rows).toEqual([
        { box_id: 'moved', hive_id: 'H-B', hive_named_at: new Date('2026-11-11T12:00Z') },
        { box_id: 'no-records', hive_id: 'H-Z', hive_named_at: null },
        { box_id: 'stayed', hive_id: 'H-A', hive_named_at: new Date('2026-11-11T12:00Z') },
        { box_id: 'tie', hive_id: 'H-D', hive_named_at: new Date('2026-11-11T12:00Z') },
      ]);
    } finally {
      await db.close();
      await database.drop();
    }
  });
});
