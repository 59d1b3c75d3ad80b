import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, Socket, type Server } from 'node:net';
import pg from 'pg';
import { buildApp, type BuildOptions } from '../src/app.ts';
import { defaultConfig, type Config } from '../src/config.ts';

/** The machine's Postgres server (trust auth); each test file gets a database of its own on it. */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string, base = ADMIN_DATABASE_URL): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createTestDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  // The creation time in the name lets a later run clean up after an interrupted one without touching live ones.
  const name = `hivegate_t_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  databaseUrl: string;
  close: () => Promise<void>;
}

/** A full app on a fresh database of the real Postgres server. */
export async function buildTestApp(overrides: Partial<Config> = {}, database?: { url: string }, options: Omit<BuildOptions, 'logger'> = {}): Promise<TestApp> {
  const owned = database ? undefined : await createTestDatabase();
  const url = database?.url ?? owned!.url;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-test-'));
  // A second instance on a test's database says its blob folder is shared, or fs storage would refuse to start beside
  // the first: the tests that read media across instances hand it the first one's storage, the others do not look.
  const storage = overrides.storage ?? { kind: 'fs', dir: path.join(dataDir, 'blobs') };
  const config = defaultConfig({
    databaseUrl: url,
    dataDir,
    logLevel: 'silent',
    tokenCacheSeconds: 0.5,
    ...overrides,
    storage: database && storage.kind === 'fs' ? { ...storage, shared: true } : storage,
  });
  const app = await buildApp(config, { ...options, logger: false });
  return {
    app,
    config,
    databaseUrl: url,
    close: async () => {
      await app.close();
      await owned?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let userCounter = 0;

/** A user with an API token, made through the same services the admin CLI uses. */
export async function createUser(app: FastifyInstance, options: { login?: string; scopes?: string[]; boxIds?: string[]; expiresAt?: Date } = {}) {
  const login = options.login ?? `beekeeper${++userCounter}_${randomBytes(3).toString('hex')}`;
  const user = await app.ctx.users.create(login);
  const { token, tokenId } = await app.ctx.tokens.issue({
    userId: user.id,
    name: 'test',
    scopes: options.scopes ?? ['*'],
    boxIds: options.boxIds ?? null,
    expiresAt: options.expiresAt,
  });
  return { user, token, tokenId, auth: { authorization: `Bearer ${token}` } };
}

export async function graphql(app: FastifyInstance, token: string | undefined, query: string, variables: Record<string, unknown> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    payload: { query, variables },
  });
  return response.json() as { data?: Record<string, unknown>; errors?: { message: string; extensions?: { code?: string } }[] };
}

/** A TCP relay to the database that a test can cut, to see how the service behaves when Postgres goes away. */
export async function startDatabaseRelay(target = new URL(ADMIN_DATABASE_URL)) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    upstream.connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    urlFor: (name: string) => databaseUrl(name, `postgres://postgres@127.0.0.1:${port}/postgres`),
    cut: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** How long a wait for a transcode or a heatmap render may take: both run ffmpeg, slow on a loaded machine. */
export const FFMPEG_WAIT_MS = 30_000;

/** Polls `probe` until it gives something truthy and returns that; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
