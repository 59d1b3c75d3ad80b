import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDatabase } from '../src/db/postgres.ts';
import { loadMigrations, migrate } from '../src/db/migrate.ts';
import { buildTestApp, createTestDatabase, createUser, graphql, type TestApp } from './helper.ts';

// A hive's last reading was its newest metrics row: a weight posted two minutes before a climate sensor's reading read
// "—", and with a scale every 15 min beside a sensor every minute the apiary nearly never showed a weight.

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const LAST_READING = `lastReading { time temperatureCelsius temperatureCelsiusAt humidityPercent humidityPercentAt weightKg weightKgAt }`;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

const postMetrics = (app: TestApp['app'], auth: Record<string, string>, payload: unknown) =>
  app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: auth, payload: payload as object });

async function lastReading(token: string, hiveId: string): Promise<unknown> {
  const result = await graphql(t.app, token, `query ($id: ID!) { hive(id: $id) { ${LAST_READING} } }`, { id: hiveId });
  expect(result.errors).toBeUndefined();
  return (result.data?.hive as { lastReading: unknown } | null)?.lastReading;
}

describe("a hive's last reading", () => {
  // The newest row had no weight, so the weight read null though the scale had posted a minute before.
  it('gives the newest value of each field with its own time', async () => {
    const user = await createUser(t.app);
    const now = Math.floor(Date.now() / 1000);
    expect((await postMetrics(t.app, user.auth, { hiveId: 'H-sep', fields: { weightKg: 42.5 }, timestamp: now - 120 })).statusCode).toBe(200);
    expect((await postMetrics(t.app, user.auth, { hiveId: 'H-sep', fields: { temperatureCelsius: 34.5 }, timestamp: now - 60 })).statusCode).toBe(200);
    expect(await lastReading(user.token, 'H-sep')).toEqual({
      time: iso(now - 60),
      temperatureCelsius: 34.5,
      temperatureCelsiusAt: iso(now - 60),
      humidityPercent: null,
      humidityPercentAt: null,
      weightKg: 42.5,
      weightKgAt: iso(now - 120),
    });
    // In a list, each hive its own (one batched read for the page).
    await postMetrics(t.app, user.auth, { hiveId: 'H-two', fields: { humidityPercent: 61 }, timestamp: now - 30 });
    const list = await graphql(t.app, user.token, `{ hives { id lastReading { weightKg humidityPercent humidityPercentAt } } }`);
    expect(list.data).toEqual({
      hives: [
        { id: 'H-sep', lastReading: { weightKg: 42.5, humidityPercent: null, humidityPercentAt: null } },
        { id: 'H-two', lastReading: { weightKg: null, humidityPercent: 61, humidityPercentAt: iso(now - 30) } },
      ],
    });
  });

  // A record arriving late for an earlier time must not replace a newer value, nor a retried key a stored one.
  it('keeps the newest value by time when records arrive late, out of order, or again', async () => {
    const user = await createUser(t.app);
    const t0 = Math.floor(Date.now() / 1000) - 3600;
    await postMetrics(t.app, user.auth, [
      { hiveId: 'H', fields: { weightKg: 43, temperatureCelsius: 30 }, timestamp: t0 + 600 },
      { hiveId: 'H', fields: { weightKg: 44 }, timestamp: t0 + 900 },
      { hiveId: 'H', fields: { weightKg: 42 }, timestamp: t0 + 300 }, // older, later in the batch
    ]);
    await postMetrics(t.app, user.auth, { hiveId: 'H', fields: { weightKg: 41, temperatureCelsius: 29, humidityPercent: 55 }, timestamp: t0 }); // late
    expect(await lastReading(user.token, 'H')).toEqual({
      time: iso(t0 + 900),
      temperatureCelsius: 30,
      temperatureCelsiusAt: iso(t0 + 600),
      humidityPercent: 55,
      humidityPercentAt: iso(t0),
      weightKg: 44,
      weightKgAt: iso(t0 + 900),
    });
    // A retried measurement (same dedupe key) is not stored again, and its changed value does not show either.
    await postMetrics(t.app, user.auth, { hiveId: 'H', fields: { weightKg: 45 }, timestamp: t0 + 1200, dedupeKey: 'scale:7' });
    await postMetrics(t.app, user.auth, { hiveId: 'H', fields: { weightKg: 99 }, timestamp: t0 + 1800, dedupeKey: 'scale:7' });
    // Of two values of the same second, the first stored stays.
    await postMetrics(t.app, user.auth, { hiveId: 'H', fields: { temperatureCelsius: 31 }, timestamp: t0 + 1500 });
    await postMetrics(t.app, user.auth, { hiveId: 'H', fields: { temperatureCelsius: 32 }, timestamp: t0 + 1500 });
    expect(await lastReading(user.token, 'H')).toMatchObject({
      time: iso(t0 + 1500),
      weightKg: 45,
      weightKgAt: iso(t0 + 1200),
      temperatureCelsius: 31,
    });
  });

  it('is null for a hive that has sent no readings, and is never another user\'s', async () => {
    const user = await createUser(t.app);
    const other = await createUser(t.app);
    await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: { hiveId: 'camera-only', boxId: 'b', beesIn: 1, beesOut: 0 } });
    await postMetrics(t.app, other.auth, { hiveId: 'camera-only', fields: { weightKg: 50 } });
    expect(await lastReading(user.token, 'camera-only')).toBeNull();
  });

  // Batches of several instances committing in any order must leave each field's newest value, not the last committed.
  it('ends with the newest value of each field when two instances store batches concurrently', async () => {
    const second = await buildTestApp({}, { url: t.databaseUrl });
    try {
      const user = await createUser(t.app);
      const t0 = Math.floor(Date.now() / 1000) - 86_400;
      const hives = ['p', 'q', 'r'];
      const fieldNames = ['temperatureCelsius', 'humidityPercent', 'weightKg'] as const;
      // Each record sends one or two fields; a value tells the time it was taken, so any two of one second agree.
      const batches = Array.from({ length: 24 }, (_, batch) =>
        hives.flatMap((hiveId, h) =>
          Array.from({ length: 6 }, (_, r) => {
            const k = (batch * 11 + r * 17 + h * 7) % 200;
            const fields: Record<string, number> = { [fieldNames[k % 3]!]: k };
            if (k % 4 === 0) fields[fieldNames[(k + 1) % 3]!] = k;
            return { hiveId, fields, timestamp: t0 + k * 60 };
          }),
        ),
      );
      const expected = new Map<string, Record<string, number>>();
      for (const { hiveId, fields } of batches.flat()) {
        const newest = expected.get(hiveId) ?? expected.set(hiveId, {}).get(hiveId)!;
        for (const [field, value] of Object.entries(fields)) newest[field] = Math.max(newest[field] ?? -1, value);
      }
      batches.sort((a, b) => Math.max(...b.map((r) => r.timestamp)) - Math.max(...a.map((r) => r.timestamp)));
      const responses = await Promise.all(batches.map((batch, i) => postMetrics(i % 2 === 0 ? t.app : second.app, user.auth, batch)));
      expect(responses.map((r) => r.statusCode)).toEqual(batches.map(() => 200));
      const result = await graphql(t.app, user.token, `{ hives { id ${LAST_READING} } }`);
      expect(result.data?.hives).toEqual(
        hives.map((id) => {
          const newest = expected.get(id)!;
          const value = (field: string) => newest[field] ?? null;
          const at = (field: string) => (newest[field] === undefined ? null : iso(t0 + newest[field]! * 60));
          return {
            id,
            lastReading: {
              time: iso(t0 + Math.max(...Object.values(newest)) * 60),
              temperatureCelsius: value('temperatureCelsius'),
              temperatureCelsiusAt: at('temperatureCelsius'),
              humidityPercent: value('humidityPercent'),
              humidityPercentAt: at('humidityPercent'),
              weightKg: value('weightKg'),
              weightKgAt: at('weightKg'),
            },
          };
        }),
      );
      // Not the trivial case: the newest values of a hive were taken at different times.
      expect(new Set(Object.values(expected.get('p')!)).size).toBeGreaterThan(1);
    } finally {
      await second.close();
    }
  });
});

describe('migration 011', () => {
  // Without a backfill every hive would read "no readings" after the upgrade until each of its sensors posted again.
  it("fills each hive's newest values from the stored metrics", async () => {
    const database = await createTestDatabase();
    const db = new PostgresDatabase({ url: database.url, poolSize: 2 });
    try {
      await migrate(db, loadMigrations().filter((m) => m.version < 11));
      await db.query(`INSERT INTO users (login) VALUES ('old')`);
      const owner = (await db.query<{ id: string }>(`SELECT id FROM users`)).rows[0]!.id;
      await db.query(`INSERT INTO hives (owner_id, hive_id) VALUES ($1, 'scale-and-sensor'), ($1, 'camera-only')`, [owner]);
      await db.query(
        `INSERT INTO metrics (owner_id, hive_id, ts, temperature_celsius, humidity_percent, weight_kg) VALUES
           ($1, 'scale-and-sensor', '2026-05-01T10:00Z', NULL, NULL, 42.5),
           ($1, 'scale-and-sensor', '2026-05-01T10:01Z', 34.5, 60, NULL),
           ($1, 'scale-and-sensor', '2026-05-01T10:02Z', 34.6, NULL, NULL),
           ($1, 'scale-and-sensor', '2026-04-30T10:00Z', 30, 50, 41)`,
        [owner],
      );
      await migrate(db);
      const { rows } = await db.query(`SELECT * FROM hive_latest_readings`);
      expect(rows).toEqual([
        {
          owner_id: owner,
          hive_id: 'scale-and-sensor',
          reading_at: new Date('2026-05-01T10:02Z'),
          temperature_celsius: 34.6,
          temperature_celsius_at: new Date('2026-05-01T10:02Z'),
          humidity_percent: 60,
          humidity_percent_at: new Date('2026-05-01T10:01Z'),
          weight_kg: 42.5,
          weight_kg_at: new Date('2026-05-01T10:00Z'),
        },
      ]);
    } finally {
      await db.close();
      await database.drop();
    }
  });
});
