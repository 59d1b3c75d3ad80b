import path from 'node:path';
import type { Config } from '../config.ts';
import type { Database } from './database.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { EmbeddedDatabase } from './embedded.ts';
import { PostgresDatabase } from './postgres.ts';

export interface OpenedDatabase {
  db: Database;
  /** Closes the database and lets go of the data dir. */
  close(): Promise<void>;
}

const MIN_CONNECT_TIMEOUT_MS = 2000;

/**
 * How long a request waits for a database connection: as long as /health waits for an answer, but never under 2 s.
 * A tiny HEALTH_TIMEOUT_MS (100) failed starts and answered 503 under load against a healthy database.
 */
export function connectTimeoutMs(config: Pick<Config, 'healthTimeoutMs'>): number {
  return Math.max(config.healthTimeoutMs, MIN_CONNECT_TIMEOUT_MS);
}

/** A Postgres server when DATABASE_URL is set, otherwise the embedded database under DATA_DIR. */
export async function openDatabase(config: Config, onError?: (err: Error) => void, applicationName?: string): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    const db = new PostgresDatabase({ url: config.databaseUrl, poolSize: config.dbPoolSize, connectTimeoutMs: connectTimeoutMs(config), applicationName, onError });
    return { db, close: () => db.close() };
  }
  const unlock = lockDataDir(config.dataDir);
  try {
    const db = await EmbeddedDatabase.open(path.join(config.dataDir, 'postgres'));
    return {
      db,
      close: async () => {
        try {
          await db.close();
        } finally {
          unlock();
        }
      },
    };
  } catch (err) {
    unlock();
    throw err;
  }
}
