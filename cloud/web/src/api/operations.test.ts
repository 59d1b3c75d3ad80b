/**
 * Every GraphQL document the app sends, validated against the server's schema files: a field, argument or type the
 * server does not have (or no longer has) fails here rather than in a user's browser.
 */
import { buildSchema, parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { Operation } from './graphql.ts';

const schemaFiles = import.meta.glob<string>('../../../src/graphql/schema/*.graphql', { query: '?raw', import: 'default', eager: true });
const modules = import.meta.glob<Record<string, unknown>>(['./*.ts', '!./*.test.ts'], { eager: true });

/** The operations each part of the app needs: accounts and telemetry, the video gateway (clips, heatmaps), the live gateway. */
const EXPECTED = [
  ...['Me', 'SignIn', 'SignUp', 'SignOut', 'ApiTokens', 'CreateApiToken', 'RevokeApiToken', 'WebSessions', 'RevokeWebSession', 'SignOutOtherSessions', 'ChangePassword', 'Apiary', 'Hive', 'HiveMetrics', 'EntranceMovement', 'EntranceBox'],
  ...['GateVideos', 'UploadGateVideo', 'DeleteGateVideo', 'EntranceHeatmaps'],
  ...['LiveSession', 'StartLive', 'KeepLiveAlive', 'StopLive', 'LiveSessionChanged'],
];

function isOperation(value: unknown): value is Operation<unknown, unknown> {
  return typeof value === 'object' && value !== null && 'document' in value && 'name' in value && 'kind' in value;
}

const sdl = Object.entries(schemaFiles)
  .sort(([a], [b]) => (a.endsWith('/base.graphql') ? -1 : b.endsWith('/base.graphql') ? 1 : a.localeCompare(b)))
  .map(([, text]) => text)
  .join('\n');
const schema = buildSchema(sdl);

const operations = Object.entries(modules).flatMap(([file, exports]) =>
  Object.values(exports)
    .filter(isOperation)
    .map((op) => ({ file, op })),
);

describe('GraphQL documents of the web app', () => {
  it('are all found, with unique names', () => {
    const names = operations.map(({ op }) => op.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(EXPECTED));
  });

  it('include a subscription, and the schema has the Subscription type for it', () => {
    expect(operations.some(({ op }) => op.kind === 'subscription')).toBe(true);
    expect(schema.getSubscriptionType()).toBeDefined();
  });

  for (const { file, op } of operations) {
    it(`${op.name} (${file}) is valid against the server schema`, () => {
      expect(validate(schema, parse(op.document)).map((e) => e.message)).toEqual([]);
    });
  }
});
