import pg from 'pg';
import { ADMIN_DATABASE_URL } from './helper.ts';

const STALE_AFTER_SECONDS = 3600;

/**
 * Drops databases an interrupted earlier run left behind (every test file makes its own and drops it). Only old
 * ones: other test runs may share this Postgres server right now.
 */
export default async function dropLeftoverTestDatabases() {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'hivegate\\_t\\_%'`);
    const cutoff = Date.now() / 1000 - STALE_AFTER_SECONDS;
    for (const { datname } of rows) {
      const created = /^hivegate_t_(\d+)_/.exec(datname)?.[1];
      if (created && Number(created) < cutoff) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } finally {
    await client.end();
  }
}
