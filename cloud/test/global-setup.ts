import pg from 'pg';
import { ADMIN_DATABASE_URL } from './helper.ts';

/** Drops databases an interrupted earlier run left behind (every test file makes its own and drops it). */
export default async function dropLeftoverTestDatabases() {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'hivegate\\_t\\_%'`);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
