import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/open.ts';
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
      const created = await runScript('src/cli.ts', ['token', 'create', '--user', 'ana', '--scope', 'ingest,read'], env);
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
    expect(listed.stdout).toMatch(/\tana\tcli\tingest,read\t/);

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

/** Every folder and file under `dir` with its permission bits, as `d 755 rel/path` / `f 666 rel/path`. */
function modes(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((entry) => {
    const file = path.join(entry.parentPath, entry.name);
    return `${entry.isDirectory() ? 'd' : 'f'} ${(statSync(file).mode & 0o777).toString(8)} ${path.relative(dir, file)}`;
  });
}

describe('embedded database file modes', () => {
  // Under umask 022 the database folders were 0755 and most files 0666: any local user could read or change password hashes and the signing key.
  it('keeps DATA_DIR (when new), the database folder and its files to this user, also a folder an older version left open', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'hivegate-modes-'));
    const previousUmask = process.umask(0o022);
    const config = defaultConfig({ databaseUrl: undefined, dataDir: path.join(root, 'data'), logLevel: 'silent' });
    const start = async () => {
      const opened = await openDatabase(config);
      await opened.db.exec('CREATE TABLE IF NOT EXISTS t (a int); INSERT INTO t VALUES (1)');
      await opened.close();
    };
    const database = path.join(config.dataDir, 'postgres');
    const loose = (dir: string) => modes(dir).filter((line) => !/^(d 700|f 600) /.test(line));
    try {
      await start();
      expect(statSync(config.dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(database).mode & 0o777).toBe(0o700);
      expect(modes(database)).toContain('f 600 pg_hba.conf');
      expect(loose(database)).toEqual([]);

      // As the review found a database an older version had made: folders 0755, files 0666.
      chmodSync(database, 0o755);
      for (const line of modes(database)) {
        const [kind, , file] = line.split(' ') as [string, string, string];
        chmodSync(path.join(database, file), kind === 'd' ? 0o755 : 0o666);
      }
      expect(loose(database).length).toBeGreaterThan(100);
      await start();
      expect(statSync(database).mode & 0o777).toBe(0o700);
      expect(loose(database)).toEqual([]);
    } finally {
      process.umask(previousUmask);
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
