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

/** A Postgres server when DATABASE_URL is set, otherwise the embedded database under DATA_DIR. */
export async function openDatabase(config: Config, onError?: (err: Error) => void): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    const db = new PostgresDatabase({ url: config.databaseUrl, poolSize: config.dbPoolSize, connectTimeoutMs: config.healthTimeoutMs, onError });
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
