/**
 * A saturated database pool: requests that cannot get a connection within the timeout are a busy service, not a
 * server fault. (They answered 500 when 500 devices came online in the same instant.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { buildTestApp, createUser, type TestApp } from './helper.ts';

let t: TestApp;
let sql: pg.Client;

beforeAll(async () => {
  // One pooled connection, given up on after 300 ms.
  t = await buildTestApp({ dbPoolSize: 1, healthTimeoutMs: 300 });
  sql = new pg.Client({ connectionString: t.databaseUrl });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await t?.close();
});

describe('database pool exhausted', () => {
  it('answers 503 with Retry-After and stores nothing, then takes the retry once a connection is free', async () => {
    const { user, auth } = await createUser(t.app);
    const post = (timestamp: number) =>
      t.app.inject({ method: 'POST', url: '/entrance/v1/movement', payload: { hiveId: 'h1', boxId: 'b1', beesIn: 4, beesOut: 2, timestamp }, headers: auth });
    const stored = async () => (await sql.query('SELECT count(*)::int AS n FROM movements WHERE owner_id = $1 AND ts = to_timestamp(1790000060)', [user.id])).rows[0].n as number;
    // Warm the token cache, so the request below gets as far as the insert.
    expect((await post(1_790_000_000)).statusCode).toBe(200);

    let release!: () => void;
    const held = t.app.ctx.db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    try {
      const busy = await post(1_790_000_060);
      expect(busy.statusCode).toBe(503);
      expect(busy.json()).toEqual({ error: 'the service is busy: retry shortly' });
      expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(2);
      expect(Number(busy.headers['retry-after'])).toBeLessThanOrEqual(4);
    } finally {
      release();
      await held;
    }
    expect(await stored()).toBe(0);
    expect((await post(1_790_000_060)).statusCode).toBe(200);
    expect(await stored()).toBe(1);
  });
});
