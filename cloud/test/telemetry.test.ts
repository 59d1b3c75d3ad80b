import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { buildTestApp, createUser, type TestApp } from './helper.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../shared/fixtures/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

let t: TestApp;
let sql: pg.Client;

beforeAll(async () => {
  t = await buildTestApp();
  sql = new pg.Client({ connectionString: t.databaseUrl });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await t.close();
});

const post = (url: string, payload: unknown, headers: Record<string, string>) =>
  t.app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { ...headers, 'content-type': 'application/json' } });

async function count(table: string, ownerId: number, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE owner_id = $1 AND ${where}`, [ownerId, ...params]);
  return rows[0].n as number;
}

describe('POST /iot/v1/metrics', () => {
  it.each(Object.entries(fixture('metrics/valid.json')))('stores the %s fixture', async (_name, body) => {
    const { user, auth } = await createUser(t.app);
    const response = await post('/iot/v1/metrics', body, auth);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ message: 'OK' });
    expect(await count('metrics', user.id)).toBe(Array.isArray(body) ? body.length : 1);
  });

  it.each(Object.entries(fixture('metrics/invalid.json') as Record<string, { body: unknown; error: string }>))(
    'refuses the %s fixture with a 400 naming the field',
    async (_name, { body, error }) => {
      const { user, auth } = await createUser(t.app);
      const response = await post('/iot/v1/metrics', body, auth);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toContain(error);
      expect(await count('metrics', user.id)).toBe(0);
    },
  );

  it('stores a batch of exactly 1000 and refuses 1001 without storing any', async () => {
    const { user, auth } = await createUser(t.app);
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ hiveId: 'h1', fields: { weightKg: i }, timestamp: 1_767_225_600 + i }));
    expect((await post('/iot/v1/metrics', items(1000), auth)).statusCode).toBe(200);
    expect(await count('metrics', user.id)).toBe(1000);
    const tooMany = await post('/iot/v1/metrics', items(1001), auth);
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toEqual({ error: 'body must contain at most 1000 items' });
    expect(await count('metrics', user.id)).toBe(1000);
  });

  // A reading in the year 9999 was stored and stood as the hive's latest reading for good; one from 1970 was stored too.
  it('refuses, by item, a time before 2000 or more than a day ahead, and stores nothing of the batch', async () => {
    const { user, auth } = await createUser(t.app);
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, object, string][] = [
      ['/iot/v1/metrics', [{ hiveId: 'h', fields: { weightKg: 1 }, timestamp: now }, { hiveId: 'h', fields: { weightKg: 1 }, timestamp: 253_402_300_799 }], "[1].timestamp 253402300799 is more than a day ahead of the server's clock: is the device's clock set?"],
      ['/iot/v1/metrics', { hiveId: 'h', fields: { weightKg: 1 }, timestamp: 0 }, "timestamp 0 is before 2000: is the device's clock set?"],
      ['/entrance/v1/movement', [{ hiveId: 'h', boxId: 'b', beesIn: 1, beesOut: 0, timestamp: 86_400 }], "[0].timestamp 86400 is before 2000: is the device's clock set?"],
    ];
    for (const [url, body, error] of cases) {
      const response = await post(url, body, auth);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error });
    }
    expect(await count('metrics', user.id)).toBe(0);
    expect(await count('movements', user.id)).toBe(0);
    // Within a day ahead (a clock a little fast, a time zone mistaken) is still taken.
    expect((await post('/iot/v1/metrics', { hiveId: 'h', fields: { weightKg: 1 }, timestamp: now + 3600 }, auth)).statusCode).toBe(200);
  });

  // Records older than RETENTION_DAYS were answered 200 and deleted unseen at the next partition maintenance.
  it('refuses, by item, a time older than the retention, unless the service deletes no telemetry', async () => {
    const { user, auth } = await createUser(t.app);
    const now = Math.floor(Date.now() / 1000);
    const tooOld = now - 731 * 86_400;
    const kept = now - 729 * 86_400;
    const metrics = await post('/iot/v1/metrics', [{ hiveId: 'h', fields: { weightKg: 1 }, timestamp: kept }, { hiveId: 'h', fields: { weightKg: 1 }, timestamp: tooOld }], auth);
    expect(metrics.statusCode).toBe(400);
    expect(metrics.json()).toEqual({ error: `[1].timestamp ${tooOld} is older than the 730 days of telemetry this server keeps (RETENTION_DAYS): it would be deleted at the next maintenance` });
    const movement = await post('/entrance/v1/movement', { hiveId: 'h', boxId: 'b', beesIn: 1, beesOut: 0, timestamp: tooOld }, auth);
    expect(movement.json()).toEqual({ error: `timestamp ${tooOld} is older than the 730 days of telemetry this server keeps (RETENTION_DAYS): it would be deleted at the next maintenance` });
    expect(await count('metrics', user.id)).toBe(0);
    expect((await post('/entrance/v1/movement', { hiveId: 'h', boxId: 'b', beesIn: 1, beesOut: 0, timestamp: kept }, auth)).statusCode).toBe(200);

    // With PARTITION_MAINTENANCE=false the service deletes no telemetry, and refuses none for its age.
    const external = await buildTestApp({ partitionMaintenance: false });
    try {
      const owner = await createUser(external.app);
      const old = await external.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: owner.auth, payload: { hiveId: 'h', boxId: 'b', beesIn: 1, beesOut: 0, timestamp: tooOld } });
      expect(old.statusCode).toBe(200);
    } finally {
      await external.close();
    }
  });

  // A gzip body was answered "body is not valid JSON", and a body in an encoding the server cannot read was accepted.
  it('reads gzip and deflate bodies, refuses other encodings with 415 and a broken gzip body with 400', async () => {
    const { user, auth } = await createUser(t.app);
    const body = JSON.stringify([{ hiveId: 'gz', fields: { weightKg: 1 } }, { hiveId: 'gz', fields: { weightKg: 2 } }]);
    const send = (payload: Buffer | string, encoding: string) =>
      t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: { ...auth, 'content-type': 'application/json', 'content-encoding': encoding }, payload });
    expect((await send(gzipSync(body), 'gzip')).statusCode).toBe(200);
    expect((await send(deflateSync(body), 'deflate')).statusCode).toBe(200);
    expect(await count('metrics', user.id)).toBe(4);
    const brotli = await send(body, 'br');
    expect(brotli.statusCode).toBe(415);
    expect(brotli.json()).toEqual({ error: 'content encoding br is not supported; send gzip, deflate or none' });
    const broken = await send(Buffer.from('not gzip at all'), 'gzip');
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error).toMatch(/^body is not valid gzip data/);
    // The limit counts the bytes unpacked: a small body that unpacks past it is refused.
    const bomb = await send(gzipSync(JSON.stringify({ hiveId: 'gz', fields: { weightKg: 1 }, pad: 'x'.repeat(8 * 1024 * 1024) })), 'gzip');
    expect(bomb.statusCode).toBe(413);
    expect(await count('metrics', user.id)).toBe(4);
  });

  it('stores nothing of a batch with one bad item', async () => {
    const { user, auth } = await createUser(t.app);
    const batch = [{ hiveId: 1, fields: { weightKg: 1 } }, { hiveId: 1, fields: { weightKg: 2 }, extra: true }];
    const response = await post('/iot/v1/metrics', batch, auth);
    expect(response.json()).toEqual({ error: '[1].extra is not an allowed property' });
    expect(await count('metrics', user.id)).toBe(0);
  });

  it('treats numeric and string hive ids as the same hive', async () => {
    const { user, auth } = await createUser(t.app);
    await post('/iot/v1/metrics', [{ hiveId: 42, fields: { weightKg: 1 } }, { hiveId: '42', fields: { weightKg: 2 } }], auth);
    expect(await count('metrics', user.id, `hive_id = '42'`)).toBe(2);
    expect(await count('hives', user.id)).toBe(1);
  });

  it('uses the server time, in whole seconds, when the timestamp is missing', async () => {
    const { user, auth } = await createUser(t.app);
    const before = Math.floor(Date.now() / 1000);
    await post('/iot/v1/metrics', { hiveId: 'h', fields: { temperatureCelsius: 35 } }, auth);
    const { rows } = await sql.query('SELECT extract(epoch FROM ts)::float8 AS ts FROM metrics WHERE owner_id = $1', [user.id]);
    expect(Number.isInteger(rows[0].ts)).toBe(true);
    expect(rows[0].ts).toBeGreaterThanOrEqual(before);
    expect(rows[0].ts).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });

  it('stores a dedupe key once, also when repeated inside one batch', async () => {
    const { user, auth } = await createUser(t.app);
    const reading = { hiveId: 'h', fields: { weightKg: 40.1 }, timestamp: 1_767_225_600, dedupeKey: 'scale:1' };
    await post('/iot/v1/metrics', [reading, { ...reading, fields: { weightKg: 99 } }, { ...reading, dedupeKey: 'scale:2' }], auth);
    await post('/iot/v1/metrics', reading, auth);
    expect(await count('metrics', user.id)).toBe(2);
    const { rows } = await sql.query(`SELECT weight_kg FROM metrics WHERE owner_id = $1 ORDER BY weight_kg`, [user.id]);
    expect(rows.map((r) => r.weight_kg)).toEqual([40.1, 40.1]); // the first occurrence wins
  });

  it('stores a dedupe key once across concurrent requests', async () => {
    const { user, auth } = await createUser(t.app);
    const batch = Array.from({ length: 50 }, (_, i) => ({ hiveId: 'h', fields: { weightKg: i }, dedupeKey: `k${i}` }));
    const responses = await Promise.all(Array.from({ length: 8 }, () => post('/iot/v1/metrics', batch, auth)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(await count('metrics', user.id)).toBe(50);
  });

  it('keeps dedupe keys per owner and per hive', async () => {
    const a = await createUser(t.app);
    const b = await createUser(t.app);
    const reading = { hiveId: 'h', fields: { weightKg: 1 }, dedupeKey: 'same' };
    await post('/iot/v1/metrics', [reading, { ...reading, hiveId: 'other' }], a.auth);
    await post('/iot/v1/metrics', reading, b.auth);
    expect(await count('metrics', a.user.id)).toBe(2);
    expect(await count('metrics', b.user.id)).toBe(1);
  });

  // Every malformed body was answered "body is not valid JSON", the parser's reason and a forbidden key's name dropped.
  it('answers invalid JSON with a 400 saying where, and names a key that could reach a prototype', async () => {
    const { user, auth } = await createUser(t.app);
    const send = (payload: string) => t.app.inject({ method: 'POST', url: '/iot/v1/metrics', payload, headers: { ...auth, 'content-type': 'application/json' } });
    const cut = await send('{"hiveId": 1,');
    expect(cut.statusCode).toBe(400);
    expect(cut.json().error).toMatch(/^body is not valid JSON: .*position 13/);
    expect(cut.headers['x-content-type-options']).toBe('nosniff'); // API answers were left to be sniffed
    expect((await send('  ')).json()).toEqual({ error: 'body is required' });
    // A UTF-8 byte-order mark before the JSON is taken, as the default parser took it.
    expect((await send('\uFEFF{"hiveId": 1, "fields": {"weightKg": 1}, "dedupeKey": "bom"}')).statusCode).toBe(200);
    const proto = await send('[{"hiveId": 1, "fields": {"weightKg": 1}}, {"hiveId": 1, "fields": {"weightKg": 1}, "__proto__": {"admin": true}}]');
    expect(proto.statusCode).toBe(400);
    expect(proto.json()).toEqual({ error: "[1].__proto__ must not be used as a property name: it could reach an object's prototype" });
    const ctor = await send('{"hiveId": 1, "fields": {"weightKg": 1}, "constructor": {"prototype": {}}}');
    expect(ctor.json().error).toBe("constructor must not be used as a property name: it could reach an object's prototype");
    expect(await count('metrics', user.id)).toBe(1); // the one with the byte-order mark
  });

  it('answers a body over the limit with a 413', async () => {
    const { auth } = await createUser(t.app);
    const huge = JSON.stringify({ hiveId: 'x'.repeat(t.config.bodyLimitBytes), fields: { weightKg: 1 } });
    const response = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', payload: huge, headers: { ...auth, 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(413);
    // The limit was not said, and a client could not tell how far to split its batch.
    expect(response.json()).toEqual({ error: `request body is larger than the ${t.config.bodyLimitBytes / 1024 / 1024} MiB limit of POST /iot/v1/metrics` });
  });

  it('refuses a body that is not JSON with a clear error', async () => {
    const { auth } = await createUser(t.app);
    const response = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', payload: 'weight=1', headers: { ...auth, 'content-type': 'text/plain' } });
    expect(response.statusCode).toBe(415);
    // Before, the message read "content type Unsupported Media Type is not supported".
    expect(response.json()).toEqual({ error: 'content type text/plain is not supported; send application/json' });
  });
});

describe('POST /entrance/v1/movement', () => {
  it.each(Object.entries(fixture('movement/valid.json')))('stores the %s fixture', async (_name, body) => {
    const { user, auth } = await createUser(t.app);
    const response = await post('/entrance/v1/movement', body, auth);
    expect(response.json()).toEqual({ message: 'OK' });
    expect(await count('movements', user.id)).toBe(Array.isArray(body) ? body.length : 1);
  });

  it.each(Object.entries(fixture('movement/invalid.json') as Record<string, { body: unknown; error: string }>))(
    'refuses the %s fixture naming the field',
    async (_name, { body, error }) => {
      const { user, auth } = await createUser(t.app);
      const response = await post('/entrance/v1/movement', body, auth);
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toContain(error);
      expect(await count('movements', user.id)).toBe(0);
    },
  );

  it('stores a device-timestamped record once however often it is retried', async () => {
    const { user, auth } = await createUser(t.app);
    const record = { hiveId: 'h', boxId: 'b', beesIn: 3, beesOut: 2, timestamp: 1_767_225_660 };
    for (let i = 0; i < 3; i++) expect((await post('/entrance/v1/movement', [record, record], auth)).statusCode).toBe(200);
    await Promise.all([post('/entrance/v1/movement', record, auth), post('/entrance/v1/movement', record, auth)]);
    expect(await count('movements', user.id)).toBe(1);
    await post('/entrance/v1/movement', { ...record, boxId: 'other-box' }, auth);
    expect(await count('movements', user.id)).toBe(2);
  });

  it('stores every record stamped with server time', async () => {
    const { user, auth } = await createUser(t.app);
    const record = { hiveId: 'h', boxId: 'b', beesIn: 1, beesOut: 1 };
    await post('/entrance/v1/movement', [record, record], auth);
    expect(await count('movements', user.id)).toBe(2);
    expect(await count('boxes', user.id)).toBe(1);
  });

  it('refuses a device token acting for a box it was not issued for', async () => {
    const owner = await createUser(t.app);
    const { token } = await t.app.ctx.tokens.issue({ userId: owner.user.id, name: 'observer', scopes: ['ingest', 'device'], boxIds: ['b1'] });
    const headers = { authorization: `Bearer ${token}` };
    expect((await post('/entrance/v1/movement', { hiveId: 'h', boxId: 'b1', beesIn: 1, beesOut: 0 }, headers)).statusCode).toBe(200);
    const refused = await post('/entrance/v1/movement', [{ hiveId: 'h', boxId: 'b1', beesIn: 1, beesOut: 0 }, { hiveId: 'h', boxId: 'b2', beesIn: 1, beesOut: 0 }], headers);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toContain('"b2"');
    expect(await count('movements', owner.user.id)).toBe(1);
  });
});
