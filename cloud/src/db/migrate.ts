import { readdirSync, readFileSync } from 'node:fs';
import { DatabaseUnavailableError, type Database } from './database.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Any constant works; it only has to be the same for every instance of this service. */
const MIGRATION_LOCK_KEY = 0x48_69_76_65;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8'),
    }));
}

/** A migration as its file names it, `007_video_content`: how an operator finds it. */
function labelOf(migration: Pick<Migration, 'version' | 'name'>): string {
  return `${String(migration.version).padStart(3, '0')}_${migration.name}`;
}

/**
 * Applies the migrations not yet applied, all in one transaction behind a transaction-scoped advisory lock:
 * instances starting together wait for each other, and the second finds nothing left to do.
 */
export async function migrate(db: Database, migrations = loadMigrations()): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const applied = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const done: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      try {
        await tx.exec(migration.sql);
      } catch (err) {
        // Named by its file: the server's message alone ("column … already exists") did not say which one failed.
        if (err instanceof DatabaseUnavailableError) throw err;
        throw new Error(`migration ${labelOf(migration)}.sql failed (nothing was applied): ${(err as Error).message}`, { cause: err });
      }
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      done.push(migration.version);
    }
    return done;
  });
}

/**
 * Migrations the database has and this build does not know: a newer build upgraded it, and this older one may not
 * read what that one writes. Said at start; an operator rolling back needs to know.
 */
export async function unknownMigrations(db: Database, migrations = loadMigrations()): Promise<string[]> {
  const known = new Set(migrations.map((m) => m.version));
  const { rows } = await db.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  return rows.filter((row) => !known.has(row.version)).map(labelOf);
}
