import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildTestApp, createTestDatabase, createUser, startDatabaseRelay, waitFor, type TestApp } from './helper.ts';
import { startServer } from './processes.ts';

describe('health', () => {
  it('answers hello world while the database answers', async () => {
    const t = await buildTestApp();
    try {
      const response = await t.app.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ hello: 'world' });
    } finally {
      await t.close();
    }
  });

  it('answers 503 within about two seconds once the database is gone', async () => {
    const database = await createTestDatabase();
    const relay = await startDatabaseRelay();
    const t = await buildTestApp({ healthTimeoutMs: 2000 }, { url: relay.urlFor(database.name) });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      await relay.cut();
      const started = Date.now();
      const response = await t.app.inject({ method: 'GET', url: '/health' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ error: 'database unavailable' });
      expect(Date.now() - started).toBeLessThan(4500);
    } finally {
      await t.close();
      await database.drop();
    }
  });
});

describe('operations endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('serves the OpenAPI document generated from the shared schemas', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.info.version).toBe('1.0.0');
    const metrics = doc.paths['/iot/v1/metrics'].post;
    expect(metrics.security).toEqual([{ bearer: [] }]);
    const body = metrics.requestBody.content['application/json'].schema;
    const [item, batch] = body.anyOf;
    expect(item.additionalProperties).toBe(false);
    expect(item.required).toEqual(['hiveId', 'fields']);
    expect(batch).toMatchObject({ type: 'array', minItems: 1, maxItems: 1000 });
    expect(doc.paths['/entrance/v1/movement'].post.responses['200']).toBeDefined();
    expect(doc.paths['/health'].get.responses['503']).toBeDefined();
  });

  // A trajectory point was a tuple (items: [..], additionalItems), which OpenAPI 3.0 does not have: strict validators and
  // code generators refused the whole document. The publisher's PUT and DELETE named no success and no credentials.
  it('serves an OpenAPI 3.0 document that uses only 3.0 schema keywords, with every operation\'s success and credentials', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\.0\./);
    const notIn30 = new Set(['const', 'prefixItems', 'additionalItems', 'patternProperties', '$schema', '$id', 'examples', 'if', 'then', 'else', 'contains', 'propertyNames']);
    const problems: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((child, i) => walk(child, `${at}/${i}`));
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (notIn30.has(key) || (key === 'items' && Array.isArray(value)) || (key === 'type' && Array.isArray(value))) problems.push(`${at}/${key}`);
        walk(value, `${at}/${key}`);
      }
    };
    walk(doc.paths, '');
    expect(problems).toEqual([]);
    const publish = doc.paths['/api/entrance-live/publish/{sessionId}/{file}'];
    expect(Object.keys(publish.put.responses)).toEqual(expect.arrayContaining(['201', '204']));
    expect(publish.put.security).toEqual([{ publishToken: [] }, { bearer: [] }]);
    expect(doc.components.securitySchemes.publishToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Publish-Token' });
    const trackPoint = doc.paths['/api/entrance-heatmaps/trajectories'].post.requestBody.content['application/json'].schema.properties.trackHistory.additionalProperties.items;
    expect(trackPoint).toMatchObject({ type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 });
  });

  it('counts ingested rows and rejected requests for Prometheus', async () => {
    const { auth } = await createUser(t.app);
    await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: auth, payload: [{ hiveId: 1, fields: { weightKg: 1 }, dedupeKey: 'a' }, { hiveId: 1, fields: { weightKg: 1 }, dedupeKey: 'a' }] });
    await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: auth, payload: [] });
    await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', payload: [] });
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toContain('hivegate_ingested_rows_total{kind="metrics",outcome="stored"} 1');
    expect(text).toContain('hivegate_ingested_rows_total{kind="metrics",outcome="duplicate"} 1');
    expect(text).toContain('hivegate_rejected_requests_total{reason="validation"} 1');
    expect(text).toContain('hivegate_rejected_requests_total{reason="auth"} 1');
    expect(text).toMatch(/hivegate_http_request_duration_seconds_count\{method="POST",route="\/iot\/v1\/metrics",status="200"\} 1/);
  });

  // /metrics had no pool gauges, and a 503 for an unreachable database counted as reason="server_error", like a bug.
  it('shows the database pool and counts database-unavailable 503s apart from server errors', async () => {
    const database = await createTestDatabase();
    const relay = await startDatabaseRelay();
    const cut = await buildTestApp({ dbPoolSize: 3 }, { url: relay.urlFor(database.name) });
    try {
      const { auth } = await createUser(cut.app);
      const before = (await cut.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(before).toMatch(/^hivegate_db_pool_connections [1-3]$/m);
      expect(before).toMatch(/^hivegate_db_pool_idle_connections [0-3]$/m);
      expect(before).toMatch(/^hivegate_db_pool_waiting 0$/m);
      await relay.cut();
      const refused = await cut.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: auth, payload: { hiveId: 1, fields: { weightKg: 1 } } });
      expect(refused.statusCode).toBe(503);
      const after = (await cut.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(after).toContain('hivegate_rejected_requests_total{reason="database_unavailable"} 1');
      expect(after).not.toContain('reason="server_error"');
    } finally {
      await cut.close();
      await database.drop();
    }
  });

  it('serves metrics only to the bearer of METRICS_TOKEN when one is set', async () => {
    const guarded = await buildTestApp({ metricsToken: 'scrape-0123456789abcdef' });
    try {
      const get = (authorization?: string) => guarded.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      for (const refused of [undefined, 'Bearer wrong', 'scrape-0123456789abcdef', 'Bearer scrape-0123456789abcde']) {
        const response = await get(refused);
        expect(response.statusCode, String(refused)).toBe(401);
        expect(response.json()).toEqual({ error: 'metrics need the bearer token set as METRICS_TOKEN' });
        expect(response.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      }
      const allowed = await get('Bearer scrape-0123456789abcdef');
      expect(allowed.statusCode).toBe(200);
      expect(allowed.body).toContain('hivegate_http_request_duration_seconds');
    } finally {
      await guarded.close();
    }
  });

  it('answers unknown routes with a JSON 404 (other GET paths belong to the web app)', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/nope?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'no route GET /api/nope' });
    const post = await t.app.inject({ method: 'POST', url: '/nope', payload: {} });
    expect(post.json()).toEqual({ error: 'no route POST /nope' });
  });
});

describe('unexpected failures', () => {
  it('answer 500 with a bare error and no internals', async () => {
    const t = await buildTestApp();
    try {
      const { auth } = await createUser(t.app);
      // Break the storage under the running service: the insert now fails inside Postgres.
      await t.app.ctx.db.query('ALTER TABLE metrics RENAME TO metrics_gone');
      const response = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: auth, payload: { hiveId: 1, fields: { weightKg: 1 } } });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ error: 'internal server error' });
    } finally {
      await t.close();
    }
  });
});

describe('a graceful stop', () => {
  // A keep-alive connection whose request ended after the stop began stayed open: the stop waited 15 s and exited 1.
  it('lasts as long as the longest request, closes keep-alive connections, and exits 0', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-stop-'));
    const server = await startServer({ DATABASE_URL: database.url, DATA_DIR: dataDir });
    const holder = new pg.Client({ connectionString: database.url });
    const agent = new http.Agent({ keepAlive: true });
    try {
      await holder.connect();
      // A sign-up that waits on the users table: a request still running when the stop begins.
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const answered = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const request = http.request(`${server.url}/graphql`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
        });
        request.on('error', reject);
        request.end(JSON.stringify({ query: 'mutation { signUp(login: "late-bee", password: "a long enough password") { token } }' }));
      });
      await waitFor(
        async () => (await holder.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rowCount,
        'the sign-up to wait for the table',
      );
      const stopping = Date.now();
      const exited = server.stop();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await holder.query('COMMIT');
      expect(await answered).toEqual({ status: 200, connection: 'close' });
      expect(await exited).toBe(0);
      expect(Date.now() - stopping).toBeLessThan(10_000);
      expect(server.output()).not.toContain('did not finish');
    } finally {
      agent.destroy();
      server.child.kill('SIGKILL');
      await holder.end().catch(() => undefined);
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
