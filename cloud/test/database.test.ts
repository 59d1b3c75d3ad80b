import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../src/db/database.ts';
import { PostgresDatabase } from '../src/db/postgres.ts';
import { migrate, loadMigrations, unknownMigrations } from '../src/db/migrate.ts';
import { MaintenancePostponedError, maintainPartitions, partitionName } from '../src/db/partitions.ts';
import { createTestDatabase, waitFor } from './helper.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function freshDatabase() {
  const database = await createTestDatabase();
  const db = new PostgresDatabase({ url: database.url, poolSize: 4 });
  cleanups.push(database.drop, () => db.close());
  return { db, url: database.url };
}

describe('migrations', () => {
  it('apply once when several instances start together, and again is a no-op', async () => {
    const database = await createTestDatabase();
    const instances = Array.from({ length: 3 }, () => new PostgresDatabase({ url: database.url, poolSize: 2 }));
    cleanups.push(database.drop, async () => void (await Promise.all(instances.map((db) => db.close()))));
    const applied = await Promise.all(instances.map((db) => migrate(db)));
    const all = loadMigrations().map((m) => m.version);
    // Sorted as numbers: as text, a tenth migration sorted between the first and the second.
    expect(applied.flat().sort((a, b) => a - b)).toEqual(all);
    expect(applied.filter((versions) => versions.length > 0)).toHaveLength(1);
    expect(await migrate(instances[0]!)).toEqual([]);
  });
});

describe('a connection lost inside a transaction', () => {
  // The server ending a backend mid-transaction emitted an unhandled 'error' on the checked-out client: the process died.
  it('fails the transaction as unavailable, reports the loss, and the pool goes on serving without the dead client', async () => {
    const database = await createTestDatabase();
    const lost: Error[] = [];
    const db = new PostgresDatabase({ url: database.url, poolSize: 1, applicationName: 'hivegate tx-under-test', onError: (err) => lost.push(err) });
    const admin = new PostgresDatabase({ url: database.url, poolSize: 1 });
    cleanups.push(database.drop, () => db.close(), () => admin.close());
    const transaction = db.transaction((tx) => tx.query('SELECT pg_sleep(30)'));
    const backend = await waitFor(
      async () =>
        (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'hivegate tx-under-test' AND query LIKE 'SELECT pg_sleep%'`)).rows[0]?.pid,
      'the transaction to sleep',
    );
    await admin.query('SELECT pg_terminate_backend($1)', [backend]);
    await expect(transaction).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(lost.length).toBeGreaterThanOrEqual(1);
    // One connection in the pool: this answers only if the broken client was let go rather than handed out again.
    expect((await db.transaction((tx) => tx.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
    expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('migrations that go wrong', () => {
  // A failing migration's error was the server's alone ("relation … does not exist"), naming no file.
  it('name the file that failed, apply none of it, and tell of versions a newer build applied', async () => {
    const { db } = await freshDatabase();
    await migrate(db);
    const broken = [...loadMigrations(), { version: 998, name: 'broken', sql: 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;' }];
    await expect(migrate(db, broken)).rejects.toThrow(/^migration 998_broken\.sql failed \(nothing was applied\): relation "no_such_table" does not exist$/);
    expect((await db.query(`SELECT 1 FROM pg_class WHERE relname = 'half_done'`)).rowCount).toBe(0);
    expect(await unknownMigrations(db)).toEqual([]);
    await migrate(db, [...loadMigrations(), { version: 999, name: 'from_a_newer_build', sql: 'SELECT 1' }]);
    expect(await unknownMigrations(db)).toEqual(['999_from_a_newer_build']);
  });
});

describe('partitions', () => {
  const policy = { retentionDays: 365, dedupeRetentionDays: 30, now: new Date('2026-05-15T00:00:00Z') };

  it('creates monthly partitions around now and moves rows the default partition caught', async () => {
    const { db } = await freshDatabase();
    await migrate(db);
    await db.query(`INSERT INTO metrics (owner_id, hive_id, ts, weight_kg) VALUES (1, 'h', '2026-06-10T00:00:00Z', 1), (1, 'h', '2030-01-01T00:00:00Z', 2)`);
    const report = await maintainPartitions(db, policy);
    expect(report.created).toContain('metrics_p202606');
    expect(report.created).toContain('movements_p202604');
    expect(report.created).toContain('metrics_p202608');
    expect(report.movedFromDefault).toBe(1);
    const where = await db.query<{ table: string; weight: number }>(`SELECT tableoid::regclass::text AS table, weight_kg AS weight FROM metrics ORDER BY weight_kg`);
    expect(where.rows).toEqual([{ table: 'metrics_p202606', weight: 1 }, { table: 'metrics_default', weight: 2 }]);
    expect((await maintainPartitions(db, policy)).created).toEqual([]);
  });

  it('drops partitions and default rows past retention, and old dedupe keys', async () => {
    const { db } = await freshDatabase();
    await migrate(db);
    await maintainPartitions(db, { ...policy, now: new Date('2024-03-15T00:00:00Z') });
    await db.query(`INSERT INTO movements (owner_id, hive_id, box_id, ts, bees_in, bees_out) VALUES (1, 'h', 'b', '2024-03-02T00:00:00Z', 1, 1)`);
    // Rows of months that never had a partition wait in the default one; past retention they were deleted unreported.
    await db.query(`INSERT INTO metrics (owner_id, hive_id, ts, weight_kg) VALUES (1, 'h', '2023-01-02T00:00:00Z', 1), (1, 'h', '2023-01-03T00:00:00Z', 2)`);
    await db.query(`INSERT INTO metric_dedupe (owner_id, hive_id, dedupe_key, created_at) VALUES (1, 'h', 'old', '2026-01-01'), (1, 'h', 'new', '2026-05-14')`);
    const report = await maintainPartitions(db, policy);
    expect(report.dropped).toContain(partitionName('movements', new Date('2024-03-01T00:00:00Z')));
    expect(report.dedupeKeysPruned).toBe(1);
    expect(report.deletedFromDefault).toBe(2);
    expect((await db.query('SELECT * FROM movements')).rowCount).toBe(0);
    expect((await db.query('SELECT * FROM metrics')).rowCount).toBe(0);
  });

  // A hive's newest weight is kept apart from the metrics rows, and showed on the apiary years after retention dropped them.
  it("forgets a hive's newest values older than retention, as their rows go", async () => {
    const { db } = await freshDatabase();
    await migrate(db);
    await db.query(
      `INSERT INTO hive_latest_readings (owner_id, hive_id, reading_at, temperature_celsius, temperature_celsius_at, weight_kg, weight_kg_at) VALUES
         (1, 'scale-gone', '2026-05-14', 34, '2026-05-14', 40, '2025-01-10'),
         (1, 'all-gone', '2025-02-01', 33, '2025-02-01', NULL, NULL),
         (1, 'all-kept', '2026-05-14', 35, '2026-05-14', 41, '2025-06-01')`,
    );
    const report = await maintainPartitions(db, policy); // retention 365 days before 2026-05-15
    expect(report.latestReadingsThinned).toBe(2);
    const { rows } = await db.query(`SELECT hive_id, temperature_celsius, weight_kg, weight_kg_at FROM hive_latest_readings ORDER BY hive_id`);
    expect(rows).toEqual([
      { hive_id: 'all-kept', temperature_celsius: 35, weight_kg: 41, weight_kg_at: new Date('2025-06-01') },
      { hive_id: 'scale-gone', temperature_celsius: 34, weight_kg: null, weight_kg_at: null },
    ]);
    expect((await maintainPartitions(db, policy)).latestReadingsThinned).toBe(0);
  });

  // Dropping a partition waited for the lock a backup held, and every insert queued behind the waiting drop.
  it('gives up when a backup holds a table it must lock, changing nothing, and ingest goes on meanwhile', async () => {
    const { db, url } = await freshDatabase();
    await migrate(db);
    await maintainPartitions(db, { ...policy, now: new Date('2024-03-15T00:00:00Z') });
    const backup = new PostgresDatabase({ url, poolSize: 1 });
    cleanups.push(() => backup.close());
    let releaseBackup!: () => void;
    const backupHeld = new Promise<void>((held) => {
      void backup.transaction(async (tx) => {
        await tx.exec('LOCK TABLE metrics, movements IN ACCESS SHARE MODE'); // what pg_dump takes
        held();
        await new Promise<void>((resolve) => (releaseBackup = resolve));
      });
    });
    await backupHeld;
    const started = Date.now();
    await expect(maintainPartitions(db, { ...policy, lockTimeoutMs: 500 })).rejects.toThrow(MaintenancePostponedError);
    expect(Date.now() - started).toBeLessThan(5000);
    await db.query(`INSERT INTO movements (owner_id, hive_id, box_id, ts, bees_in, bees_out) VALUES (1, 'h', 'b', '2026-05-15T00:00:00Z', 1, 1)`);
    expect((await db.query(`SELECT 1 FROM pg_class WHERE relname = 'movements_p202403'`)).rowCount).toBe(1); // not dropped
    releaseBackup();
    expect((await maintainPartitions(db, policy)).dropped).toContain('movements_p202403');
  });

  it('lets two instances maintain partitions at the same time', async () => {
    const { db, url } = await freshDatabase();
    await migrate(db);
    const other = new PostgresDatabase({ url, poolSize: 2 });
    cleanups.push(() => other.close());
    const [a, b] = await Promise.all([maintainPartitions(db, policy), maintainPartitions(other, policy)]);
    expect(a.created.length + b.created.length).toBe(10);
  });
});

describe('partition maintenance switched off', () => {
  it('leaves partitions to an external tool but still prunes retry keys', async () => {
    const database = await createTestDatabase();
    const db = new PostgresDatabase({ url: database.url, poolSize: 2 });
    cleanups.push(database.drop, () => db.close());
    await migrate(db);
    await db.query(`INSERT INTO movement_dedupe (owner_id, hive_id, box_id, ts, created_at) VALUES (1, 'h', 'b', now(), '2020-01-01')`);
    await db.query(`INSERT INTO hive_latest_readings (owner_id, hive_id, reading_at, weight_kg, weight_kg_at) VALUES (1, 'h', '2020-01-01', 40, '2020-01-01')`);
    const report = await maintainPartitions(db, { retentionDays: 30, dedupeRetentionDays: 30, partitions: false });
    expect(report).toEqual({ created: [], dropped: [], movedFromDefault: 0, deletedFromDefault: 0, dedupeKeysPruned: 1, latestReadingsThinned: 0 });
    // The external tool's retention is not known here: the hive's last weight stays.
    expect((await db.query('SELECT weight_kg FROM hive_latest_readings')).rows).toEqual([{ weight_kg: 40 }]);
  });
});

// A listening connection that went silent (packets dropped, no reset) heard nothing again and said nothing.
describe('the listening connection', () => {
  it('is found dead when it stops answering, and listens again on a new one', async () => {
    const database = await createTestDatabase();
    const errors: string[] = [];
    const db = new PostgresDatabase({ url: database.url, poolSize: 2, listenerCheckMs: 200, listenerCheckTimeoutMs: 300, onError: (err) => errors.push(err.message) });
    cleanups.push(database.drop, () => db.close());
    const heard: string[] = [];
    await db.listen('hivegate_probe', (payload) => heard.push(payload));
    const listening = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`);
    const pid = listening.rows[0]!.pid;
    // The server process behind the listening connection stops answering: what a dropped connection looks like.
    process.kill(pid, 'SIGSTOP');
    try {
      await expect.poll(() => errors.some((message) => message.includes('the listening connection did not answer')), { timeout: 5000 }).toBe(true);
      await expect
        .poll(async () => {
          await db.notify('hivegate_probe', 'after');
          return heard.includes('after');
        }, { timeout: 10_000, interval: 300 })
        .toBe(true);
    } finally {
      process.kill(pid, 'SIGCONT');
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
    }
  });
});
