import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ADMIN_DATABASE_URL, databaseUrl } from '../test/helper.ts';

/**
 * A database of its own for one benchmark run, named apart from the test databases: a test run's start-up clean-up
 * of leftover test databases (possibly from another checkout on the same server) must not drop it mid-run.
 */
export async function createBenchDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `hivegate_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
