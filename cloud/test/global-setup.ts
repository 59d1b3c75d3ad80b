import pg from 'pg';
import { ADMIN_DATABASE_URL } from './helper.ts';

/**
 * Drops databases an interrupted earlier run left behind (every test file makes its own and drops it). Databases
 * someone is connected to belong to a run still going (another checkout testing on the same server): kept.
 */
export default async function dropLeftoverTestDatabases() {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database d WHERE datname LIKE 'hivegate\\_t\\_%'
         AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => undefined);
  } finally {
    await client.end();
  }
}
