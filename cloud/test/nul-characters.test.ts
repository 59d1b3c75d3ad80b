import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createUser, graphql, type TestApp } from './helper.ts';

// JSON may hold U+0000 in a string, Postgres text cannot: such input ended in a 500, or in GraphQL in the database's
// own message ("invalid byte sequence for encoding UTF8: 0x00"), instead of a 400 naming the field.

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
