import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, graphql, type TestApp } from './helper.ts';

// JSON may hold what Postgres cannot store. U+0000 ended in a 500, or in GraphQL in the database's own message
// ("invalid byte sequence for encoding UTF8: 0x00"); a lone surrogate in a status object was a 500 from Postgres json,
// and as an id it was stored as U+FFFD; a status nested 10 000 deep overflowed the stack (a 500). Each is a 400 naming
// the field.

let t: TestApp;
let auth: Record<string, string>;
let token: string;

beforeAll(async () => {
  t = await buildTestApp();
  ({ auth, token } = await createUser(t.app));
});
afterAll(() => t.close());

describe('the NUL character', () => {
  it('is refused by field in every JSON body, and nothing is stored', async () => {
    const cases: [string, object, string][] = [
      ['/iot/v1/metrics', [{ hiveId: 'h', fields: { weightKg: 1 }, timestamp: 1_790_000_000 }, { hiveId: 'a\u0000b', fields: { weightKg: 1 } }], '[1].hiveId'],
      ['/iot/v1/metrics', { hiveId: 'h', dedupeKey: 'k\u0000', fields: { weightKg: 1 } }, 'dedupeKey'],
      ['/entrance/v1/movement', { hiveId: 'h', boxId: 'b\u0000', beesIn: 1, beesOut: 0 }, 'boxId'],
      ['/api/entrance-live/device/status', { boxId: 'b', deviceId: 'pi\u0000' }, 'deviceId'],
      ['/api/entrance-live/device/status', { boxId: 'b', status: { ['x\u0000']: 1 } }, 'status.x\u0000'],
      ['/api/entrance-heatmaps/trajectories', { boxId: 'b', timestamp: '2026-05-04T08:00:00', frameDimensions: { width: 640, height: 480 }, trackHistory: {}, batchId: 'b\u0000' }, 'batchId'],
    ];
    for (const [url, payload, field] of cases) {
      const response = await t.app.inject({ method: 'POST', url, headers: auth, payload });
      expect(response.statusCode, url).toBe(400);
      expect(response.json()).toEqual({ error: `${field} must not contain the NUL character (U+0000)` });
    }
    const stored = await graphql(t.app, token, `{ hives { id } boxes { id } }`);
    expect(stored.data).toEqual({ hives: [], boxes: [] });
  });

  it('is refused in GraphQL variables and string literals with a client error', async () => {
    const variable = await t.app.inject({ method: 'POST', url: '/graphql', headers: auth, payload: { query: 'query ($id: ID!) { box(id: $id) { id } }', variables: { id: 'b\u0000' } } });
    expect(variable.statusCode).toBe(400);
    expect(variable.json()).toEqual({ data: null, errors: [{ message: 'variables.id must not contain the NUL character (U+0000)' }] });
    const literal = await graphql(t.app, token, '{ hive(id: "h\\u0000") { id } }');
    expect(literal.errors?.[0]).toMatchObject({ message: 'a string must not contain the NUL character (U+0000)', extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('a lone UTF-16 surrogate', () => {
  it('is refused by field in every JSON body, and nothing is stored', async () => {
    const cases: [string, object, string, string][] = [
      ['/api/entrance-live/device/status', { boxId: 'cam1', status: { a: '\ud800' } }, 'status.a', 'd800'],
      ['/api/entrance-live/device/status', { boxId: 'cam1', lastErrorMessage: 'camera \ud83d' }, 'lastErrorMessage', 'd83d'],
      ['/entrance/v1/movement', { hiveId: 'h', boxId: 'b\udc00', beesIn: 1, beesOut: 0 }, 'boxId', 'dc00'],
      ['/iot/v1/metrics', [{ hiveId: 'h', fields: { weightKg: 1 } }, { hiveId: '\ud800x', fields: { weightKg: 1 } }], '[1].hiveId', 'd800'],
    ];
    for (const [url, payload, field, unit] of cases) {
      const response = await t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      expect(response.statusCode, url).toBe(400);
      expect(response.json()).toEqual({ error: `${field} must be well-formed Unicode: it holds a lone UTF-16 surrogate (\\u${unit})` });
    }
    const stored = await graphql(t.app, token, `{ hives { id } boxes { id } }`);
    expect(stored.data).toEqual({ hives: [], boxes: [] });
  });

  it('is refused in GraphQL variables; a whole emoji passes', async () => {
    const variable = await t.app.inject({ method: 'POST', url: '/graphql', headers: auth, payload: { query: 'query ($id: ID!) { box(id: $id) { id } }', variables: { id: 'b\ud800' } } });
    expect(variable.statusCode).toBe(400);
    expect(variable.json().errors[0].message).toBe('variables.id must be well-formed Unicode: it holds a lone UTF-16 surrogate (\\ud800)');
    const emoji = await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: auth, payload: { hiveId: 'h🐝', boxId: 'b🐝', beesIn: 1, beesOut: 0 } });
    expect(emoji.statusCode).toBe(200);
  });
});

describe('a body nested without end', () => {
  it('is refused by its top-level field', async () => {
    let deep = '1';
    for (let i = 0; i < 10_000; i += 1) deep = `{"a":${deep}}`;
    for (const url of ['/api/entrance-live/device/status', '/iot/v1/metrics']) {
      const payload = url === '/iot/v1/metrics' ? `{"hiveId":"h","fields":{"weightKg":1},"extra":${deep}}` : `{"boxId":"cam2","status":${deep}}`;
      const response = await t.app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().error).toMatch(/^(status|extra) is nested more than 64 levels deep$/);
    }
  });
});
