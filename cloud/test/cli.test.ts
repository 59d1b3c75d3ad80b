import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestDatabase } from './helper.ts';
import { runScript } from './processes.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let env: Record<string, string>;
const JWT_SECRET = 'cli-test-secret-that-is-long-enough-0123456789';

beforeAll(async () => {
  database = await createTestDatabase();
  env = { DATABASE_URL: database.url, JWT_SECRET };
});
afterAll(() => database.drop());

const cli = (...args: string[]) => runScript('src/cli.ts', args, env);
// Tests that start the CLI ten times or so: each start takes seconds on a busy machine.
const CLI_RUNS_TIMEOUT_MS = 120_000;

describe('admin CLI on a Postgres server', () => {
  it('creates a user and a token that the service accepts, lists and revokes it', async () => {
    expect(await cli('user', 'add', 'maya')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^created user maya \(id \d+\)\n$/) });
    expect((await cli('user', 'add', 'maya')).stderr).toMatch(/taken/);

    const created = await cli('token', 'create', '--user', 'maya', '--name', 'scale', '--scope', 'ingest');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/); // only the token, for scripts
    const token = created.stdout.trim();

    const t = await buildTestApp({ jwtSecret: JWT_SECRET }, { url: database.url });
    try {
      const post = () => t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: { authorization: `Bearer ${token}` }, payload: { hiveId: 1, fields: { weightKg: 3 } } });
      expect((await post()).statusCode).toBe(200);

      const listed = await cli('token', 'list', '--user', 'maya');
      const row = listed.stdout.split('\n').find((line) => line.includes('\tscale\t'))!;
      expect(row).toMatch(/\tmaya\tscale\tingest\t-\t.*\tactive$/);
      const tokenId = row.split('\t')[0]!;

      expect(await cli('token', 'revoke', tokenId)).toMatchObject({ code: 0, stdout: `revoked ${tokenId}\n` });
      expect(await cli('token', 'revoke', tokenId)).toMatchObject({ code: 0, stdout: `${tokenId} was already revoked\n` });
      await new Promise((r) => setTimeout(r, 700)); // the test app caches token status for 0.5 s
      expect((await post()).statusCode).toBe(401);

      // A token past its expiry was listed as active.
      expect((await cli('token', 'create', '--user', 'maya', '--name', 'brief', '--expires-days', '0.00001')).code).toBe(0);
      expect((await cli('token', 'create', '--user', 'maya', '--name', 'season', '--expires-days', '90')).code).toBe(0);
      const statuses = (await cli('token', 'list', '--user', 'maya')).stdout;
      expect(statuses).toMatch(/\tbrief\t.*\texpired \d{4}-\d\d-\d\dT/);
      expect(statuses).toMatch(/\tseason\t.*\tactive until \d{4}-/);
    } finally {
      await t.close();
    }
  }, CLI_RUNS_TIMEOUT_MS);

  // A user made with `user add` had no password and no way to get one: they could never sign in to the web app.
  it('sets a password read from standard input, which signs the user in and their old sessions out', async () => {
    expect((await cli('user', 'add', 'ines')).code).toBe(0);
    const t = await buildTestApp({ jwtSecret: JWT_SECRET }, { url: database.url });
    const signIn = (password: string) =>
      t.app.inject({ method: 'POST', url: '/graphql', payload: { query: 'mutation ($l: String!, $p: String!) { signIn(login: $l, password: $p) { token } }', variables: { l: 'ines', p: password } } });
    try {
      expect((await signIn('first password')).json().errors?.[0]?.message).toBe('login or password is wrong');
      expect(await runScript('src/cli.ts', ['user', 'password', 'ines'], env, 'first password\n')).toMatchObject({ code: 0, stdout: 'password set for ines: they can sign in to the web app\n' });
      const session = (await signIn('first password')).json().data.signIn.token as string;
      const me = () => t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${session}` }, payload: { query: '{ hives { id } }' } });
      expect((await me()).json()).toEqual({ data: { hives: [] } });

      expect(await runScript('src/cli.ts', ['user', 'password', 'ines'], env, 'second password\n')).toMatchObject({ code: 0, stdout: expect.stringContaining('(1 session signed out)') });
      await new Promise((r) => setTimeout(r, 700)); // the test app caches token status for 0.5 s
      expect((await me()).json().errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect((await signIn('first password')).json().errors?.[0]?.message).toBe('login or password is wrong');
      expect((await signIn('second password')).json().data.signIn.token).toEqual(expect.any(String));

      expect(await runScript('src/cli.ts', ['user', 'password', 'ines'], env, 'short\n')).toMatchObject({ code: 2, stderr: 'the password must be 10-200 characters long\n' });
      expect(await runScript('src/cli.ts', ['user', 'password', 'nobody'], env, 'long enough password\n')).toMatchObject({ code: 1, stderr: 'no user "nobody"\n' });
      expect(await cli('user', 'password')).toMatchObject({ code: 2, stderr: expect.stringContaining('user password takes exactly one login') });
    } finally {
      await t.close();
    }
  }, CLI_RUNS_TIMEOUT_MS);

  it('explains usage mistakes with exit code 2', async () => {
    expect(await cli('token', 'create')).toMatchObject({ code: 2, stderr: expect.stringContaining('--user') });
    expect(await cli('token', 'create', '--user', 'maya', '--scope', 'everything')).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown scope everything') });
    expect(await cli('hive', 'burn')).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command') });
    expect(await cli('token', 'create', '--user', 'nobody')).toMatchObject({ code: 1, stderr: 'no user "nobody"\n' });
  });

  // Run without the service's JWT_SECRET, the CLI made tokens the service refused, said nothing, and stored a secret.
  it("refuses to make tokens with another signing secret than the service's", async () => {
    const t = await buildTestApp({ jwtSecret: JWT_SECRET }, { url: database.url }); // the service records its secret's fingerprint
    await t.close();
    const without = await runScript('src/cli.ts', ['token', 'create', '--user', 'maya'], { DATABASE_URL: database.url, JWT_SECRET: '' });
    expect(without).toMatchObject({ code: 1, stdout: '', stderr: 'the service signs tokens with its JWT_SECRET: set the same JWT_SECRET here, or the tokens made here would be refused\n' });
    const other = await runScript('src/cli.ts', ['token', 'create', '--user', 'maya'], { DATABASE_URL: database.url, JWT_SECRET: 'another-secret-that-is-long-enough-987654321' });
    expect(other).toMatchObject({ code: 1, stderr: expect.stringContaining('JWT_SECRET here is not the one the service signs tokens with') });
    const check = await buildTestApp({ jwtSecret: JWT_SECRET }, { url: database.url });
    try {
      expect((await check.app.ctx.db.query(`SELECT 1 FROM server_secrets WHERE name = 'jwt'`)).rowCount).toBe(0); // no secret made up
    } finally {
      await check.close();
    }
    expect((await cli('token', 'create', '--user', 'maya')).code).toBe(0);
  });

  // The CLI printed a DatabaseUnavailableError's stack trace where the service says one line.
  it('says in one line that the database cannot be reached, as the service does', async () => {
    const result = await runScript('src/cli.ts', ['user', 'list'], { DATABASE_URL: 'postgres://hivegate:secret-password@127.0.0.1:1/hivegate', JWT_SECRET });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^cannot start: database unavailable: .*ECONNREFUSED.*; is the database server running and DATABASE_URL right\?\n$/);
  });

  it('refuses a bad configuration naming the variable', async () => {
    const result = await runScript('src/cli.ts', ['user', 'list'], { ...env, DB_POOL_SIZE: 'many' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DB_POOL_SIZE must be an integer');
  });
});
