import pg from 'pg';
import { ADMIN_DATABASE_URL } from './helper.ts';

/** Test databases older than this are leftovers of an interrupted run; younger ones may belong to a run going on now. */
const LEFTOVER_AGE_SECONDS = 3 * 3600;

/** When a test database was created, from its name (`hivegate_t_<base-36 unix seconds>_<random>`), if it says. */
export function createdAtSeconds(name: string): number | undefined {
  const match = /^hivegate_t_([0-9a-z]+)_[0-9a-f]+$/.exec(name);
  return match ? parseInt(match[1]!, 36) : undefined;
}

/**
 * Drops databases that interrupted earlier runs left behind (every test file makes its own and drops it). Several
 * runs may share one Postgres server (parallel checkouts), so only old databases are dropped, and databases named
 * without a creation time only when nobody is connected to them.
 */
export default async function dropLeftoverTestDatabases() {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string; connections: number }>(
      `SELECT d.datname, (SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname)::int AS connections
       FROM pg_database d WHERE d.datname LIKE 'hivegate\\_t\\_%'`,
    );
    const now = Date.now() / 1000;
    for (const { datname, connections } of rows) {
      const created = createdAtSeconds(datname);
      const leftover = created === undefined ? connections === 0 : now - created > LEFTOVER_AGE_SECONDS;
      if (!leftover) continue;
      try {
        await client.query(`DROP DATABASE IF EXISTS ${datname}${created === undefined ? '' : ' WITH (FORCE)'}`);
      } catch {
        // Someone connected to it meanwhile: it is in use after all.
      }
    }
  } finally {
    await client.end();
  }
}
