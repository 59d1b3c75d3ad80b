import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadSigningSecret, signerApplicationName, SigningSecretMismatchError } from '../src/auth/tokens.ts';
import { defaultConfig } from '../src/config.ts';
import { PostgresDatabase } from '../src/db/postgres.ts';
import { createTestDatabase, createUser, waitFor } from './helper.ts';

const FIRST = 'first-secret-that-is-long-enough-0123456789';
const SECOND = 'second-secret-that-is-long-enough-987654321';
const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-secret-'));
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let firstToken: string;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

// Postgres shows application_name to every role: 16 characters of the fingerprint let anyone test guesses at the secret.
it('labels the connections with too little of the fingerprint to test guesses against', () => {
  expect(signerApplicationName(FIRST)).toMatch(/^hivegate jwt:[\w-]{3}$/);
  expect(signerApplicationName(FIRST)).not.toBe(signerApplicationName(SECOND));
});

const start = (jwtSecret: string | undefined) =>
  buildApp(defaultConfig({ databaseUrl: database.url, dataDir, storage: { kind: 'fs', dir: path.join(dataDir, 'blobs'), shared: true }, jwtSecret, tokenCacheSeconds: 0 }), { logger: false });

/** Until every stopped instance's connections are gone from pg_stat_activity (a backend ends a moment after its client). */
async function allGone(): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const prefix = signerApplicationName(undefined).replace(/stored$/, '');
  try {
    // This database's only: instances of other tests on the same server (on other databases) are no concern here.
    const query = `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, $1)`;
    await waitFor(async () => (await client.query(query, [prefix])).rowCount === 0, 'the connections to close');
  } finally {
    await client.end();
  }
}

const accepted = async (app: FastifyInstance, token: string) =>
  (await app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query: '{ hives { id } }' } })).json().errors === undefined;

describe('another JWT_SECRET', () => {
  // Another secret overwrote the recorded one in silence: earlier tokens stopped working, and beside a running
  // instance with the old secret, which tokens held depended on the instance that answered.
  it('is refused while an instance with another secret runs', async () => {
    const running = await start(FIRST);
    try {
      const { token } = await createUser(running);
      firstToken = token;
      for (const other of [SECOND, undefined]) {
        const refused = await start(other).then(
          async (app) => (await app.close(), undefined),
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(SigningSecretMismatchError);
        // The unset case read "is unset here, unlike another running instance signs tokens with".
        const why = other ? 'here is not the one another running instance signs tokens with' : 'is unset here, but another running instance signs tokens with a JWT_SECRET of its own';
        expect((refused as Error).message).toMatch(new RegExp(`^JWT_SECRET ${why}: .*give every instance the same JWT_SECRET, or stop them all to change it$`));
      }
      expect(await accepted(running, token)).toBe(true); // the running instance's tokens still hold
      const same = await start(FIRST);
      await same.close();
    } finally {
      await running.close();
    }
  });

  it('is taken with every instance stopped, saying loudly that earlier tokens are now refused', async () => {
    await allGone();
    const db = new PostgresDatabase({ url: database.url, poolSize: 1 });
    const warnings: string[] = [];
    try {
      await loadSigningSecret(db, FIRST, 'service', (m) => warnings.push(m)); // the one recorded already: nothing to say
      expect(warnings).toEqual([]);
      await loadSigningSecret(db, SECOND, 'service', (m) => warnings.push(m));
      expect(warnings).toEqual([
        'JWT_SECRET is not the secret tokens were signed with until now: every token issued before (device tokens, sign-in sessions) is now refused; set the previous JWT_SECRET back, or issue new device tokens (cli token create)',
      ]);
    } finally {
      await db.close();
    }
    const restarted = await start(SECOND);
    try {
      const { token } = await createUser(restarted);
      expect(await accepted(restarted, token)).toBe(true);
      expect(await accepted(restarted, firstToken)).toBe(false); // as the warning says
    } finally {
      await restarted.close();
    }
  });
});
