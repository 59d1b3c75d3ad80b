import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { DatabaseRefusedError } from '../src/db/database.ts';
import { PostgresDatabase } from '../src/db/postgres.ts';
import { startupFailureMessage } from '../src/startup-failure.ts';
import { buildTestApp, createTestDatabase, databaseUrl } from './helper.ts';
import { runScript } from './processes.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'hivegate-startup-'));
let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Why building the app on this config fails, as the one line server.ts prints. */
async function failureOf(overrides: Parameters<typeof defaultConfig>[0]): Promise<string | undefined> {
  const config = defaultConfig({ dataDir: mkdtempSync(path.join(scratch, 'data-')), logLevel: 'silent', ...overrides });
  const err = await buildApp(config, { logger: false }).then(
    async (app) => {
      await app.close();
      throw new Error('the app started');
    },
    (e: unknown) => e,
  );
  return startupFailureMessage(err) ?? `unforeseen: ${String(err)}`;
}

describe('start-up failures say in one line which setting to fix', () => {
  // A missing database or role was not counted as a connection failure and came out as a 25-line driver error dump.
  it('a database or role the server does not have', async () => {
    const missing = new PostgresDatabase({ url: databaseUrl('hivegate_no_such_database'), poolSize: 1 });
    await expect(missing.query('SELECT 1')).rejects.toThrow(DatabaseRefusedError);
    await missing.close();
    expect(await failureOf({ databaseUrl: databaseUrl('hivegate_no_such_database') })).toBe(
      'cannot start: the database server refused the connection: database "hivegate_no_such_database" does not exist; check the user name, password and database name in DATABASE_URL',
    );
    const role = new URL(database.url);
    role.username = 'hivegate_no_such_role';
    expect(await failureOf({ databaseUrl: role.toString() })).toMatch(/^cannot start: the database server refused the connection: .*hivegate_no_such_role.*; check the user name, password and database name in DATABASE_URL$/);
  });

  // A DATA_DIR that could not be made failed with a bare EACCES/ENOTDIR stack naming only a path.
  it('a DATA_DIR that cannot be made, in either database mode', async () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, '');
    const expected = new RegExp(`^DATA_DIR ${file}/data cannot be used: it could not be created \\(ENOTDIR at ${file}/data\\); make it a folder this user \\(uid \\d+\\) can write, or set DATA_DIR to one$`);
    expect(await failureOf({ dataDir: `${file}/data`, databaseUrl: undefined })).toMatch(expected);
    expect(await failureOf({ dataDir: `${file}/data`, databaseUrl: database.url })).toMatch(expected);
  });

  // An S3 server that did not answer failed with a bare "connect ECONNREFUSED" stack, naming no setting.
  it('an S3 endpoint that does not answer', async () => {
    const storage = { kind: 's3', endpoint: 'http://127.0.0.1:1', region: 'us-east-1', bucket: 'bees', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true, createBucket: true } as const;
    expect(await failureOf({ databaseUrl: database.url, storage })).toBe(
      'cannot start: the S3 endpoint http://127.0.0.1:1 cannot be reached (ECONNREFUSED); is the S3 server running and S3_ENDPOINT right?',
    );
  });

  // A port in use ended in "Error: listen EADDRINUSE" with a stack, and the embedded data dir kept its lock and admin socket.
  it('a port in use: one line, exit 1, and the data dir left unlocked', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const dataDir = mkdtempSync(path.join(scratch, 'embedded-'));
    try {
      const result = await runScript('src/server.ts', [], { DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
      expect(result).toMatchObject({
        code: 1,
        stderr: `cannot start: port ${port} on 127.0.0.1 is already in use (EADDRINUSE); stop what listens there or set PORT to another port\n`,
      });
      expect(readdirSync(dataDir).filter((name) => name === 'embedded-db.lock' || name === 'admin.sock')).toEqual([]);
      // A doomed start opened (and on a server, migrated) the database before it found the port taken.
      expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 60_000);

  // Two instances on one database, each writing media under its own DATA_DIR/blobs, served each other's links as 404s.
  it('fs storage beside another running instance, unless the operator says the blob folder is shared', async () => {
    const running = await buildTestApp({}, database);
    try {
      const blobs = path.join(scratch, 'blobs-beside');
      expect(await failureOf({ databaseUrl: database.url, storage: { kind: 'fs', dir: blobs } })).toBe(
        `cannot start: STORAGE is fs and another instance runs on this database: media this one writes under DATA_DIR (${blobs}) would be missing on the others; set STORAGE=s3 and the S3_* settings on every instance, or mount one blob folder as DATA_DIR/blobs on all of them and set STORAGE_SHARED=true`,
      );
      const beside = await buildApp(defaultConfig({ dataDir: mkdtempSync(path.join(scratch, 'data-')), databaseUrl: database.url, storage: { kind: 'fs', dir: blobs, shared: true } }), { logger: false });
      await beside.close();
    } finally {
      await running.close();
    }
  }, 60_000);
});
