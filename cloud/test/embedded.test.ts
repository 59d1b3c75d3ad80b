import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runScript, startServer } from './processes.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-embedded-'));
// No DATABASE_URL: the cloud runs on its embedded Postgres in DATA_DIR.
const env = { DATA_DIR: dataDir, DATABASE_URL: '' };
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('embedded mode, end to end', () => {
  it('serves ingest and reads, takes admin commands while running, and keeps data across restarts', async () => {
    const server = await startServer(env);
    let token: string;
    try {
      // The CLI reaches the running cloud through its admin socket.
      expect((await runScript('src/cli.ts', ['user', 'add', 'ana'], env)).code).toBe(0);
      const created = await runScript('src/cli.ts', ['token', 'create', '--user', 'ana'], env);
      expect(created.code).toBe(0);
      token = created.stdout.trim();

      const posted = await fetch(`${server.url}/iot/v1/metrics`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify([{ hiveId: 'garden', fields: { weightKg: 31.5 }, dedupeKey: 'x' }, { hiveId: 'garden', fields: { weightKg: 31.5 }, dedupeKey: 'x' }]),
      });
      expect(await posted.json()).toEqual({ message: 'OK' });

      const second = await startServer(env).then(
        async (s) => (await s.stop(), 'started'),
        (err: Error) => err.message,
      );
      expect(second).toMatch(/in use by process/);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    // With no cloud running, the CLI opens the embedded database itself.
    const listed = await runScript('src/cli.ts', ['token', 'list'], env);
    expect(listed.stdout).toMatch(/\tana\tcli\t\*\t/);

    const again = await startServer(env);
    try {
      const response = await fetch(`${again.url}/graphql`, {
        method: 'POST',
        headers: { token, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ hives { id lastReading { weightKg } } }' }),
      });
      expect(await response.json()).toEqual({ data: { hives: [{ id: 'garden', lastReading: { weightKg: 31.5 } }] } });
    } finally {
      await again.stop();
    }
  }, 120_000);
});

describe('start-up failures', () => {
  // A database that could not be reached ended the start in a stack trace.
  it('says in one line that the database cannot be reached, and exits 1', async () => {
    const result = await runScript('src/server.ts', [], { DATABASE_URL: 'postgres://hivegate:secret-password@127.0.0.1:1/hivegate', PORT: '0', LOG_LEVEL: 'warn' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^cannot start: database unavailable: .*ECONNREFUSED.*; is the database server running and DATABASE_URL right\?\n$/);
    expect(result.stderr).not.toContain('secret-password');
  }, 30_000);
});
