import { PGlite } from '@electric-sql/pglite';
import { chmodSync } from 'node:fs';
import { withTimeout, type Database, type Queryable, type QueryResult } from './database.ts';
import { createPrivateDir, makeTreePrivate, PRIVATE_DIR_MODE } from './private-files.ts';

/**
 * The embedded Postgres (PGlite, WebAssembly) persisted in a folder. It serves one process at a time: the
 * caller holds the data dir's lock (see data-dir-lock.ts) for as long as this is open.
 */
export class EmbeddedDatabase implements Database {
  readonly kind = 'embedded' as const;
  private constructor(private readonly db: PGlite) {}

  static async open(dir: string | undefined): Promise<EmbeddedDatabase> {
    // The folder is shut before PGlite opens anything in it: files an older version left 0666 are out of reach from
    // here on, and so are the 0666 files a first start's initdb writes until the walk below tightens them.
    if (dir) {
      createPrivateDir(dir);
      chmodSync(dir, PRIVATE_DIR_MODE);
    }
    const db = await PGlite.create(dir, { parsers: { 1700: (value: string) => Number(value) } });
    if (dir) makeTreePrivate(dir);
    return new EmbeddedDatabase(db);
  }

  async query<R>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
    const result = await this.db.query<R>(text, params);
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
  }

  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) =>
      fn({
        query: async <R>(text: string, params?: unknown[]) => {
          const result = await tx.query<R>(text, params);
          return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
        },
        exec: async (sql: string) => {
          await tx.exec(sql);
        },
      }),
    );
  }

  async listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>> {
    return this.db.listen(channel, onMessage);
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.db.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async ping(timeoutMs: number): Promise<void> {
    await withTimeout(this.db.query('SELECT 1'), timeoutMs, 'the embedded database');
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
