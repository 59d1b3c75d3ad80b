import type { Database, Queryable } from './database.ts';

/** Time-series tables partitioned by month on `ts`, each with a `<table>_default` partition. */
export const PARTITIONED_TABLES = ['metrics', 'movements'] as const;
const DEDUPE_TABLES = ['metric_dedupe', 'movement_dedupe'] as const;
const MAINTENANCE_LOCK_KEY = 0x48_69_76_66;

export interface PartitionPolicy {
  now?: Date;
  monthsAhead?: number;
  monthsBehind?: number;
  retentionDays: number;
  dedupeRetentionDays: number;
  /** False leaves the partitions to an external tool and only prunes dedupe keys. */
  partitions?: boolean;
  /** How long to wait for a table lock before giving up until the next run (default 3 s). */
  lockTimeoutMs?: number;
}

/**
 * Maintenance could not get a table's lock in time: something holds it (a `pg_dump` holds every table it copies for
 * the whole backup). Nothing was changed; the next run tries again.
 */
export class MaintenancePostponedError extends Error {}

export interface MaintenanceReport {
  created: string[];
  dropped: string[];
  movedFromDefault: number;
  /** Rows the default partitions held from before the retention period, deleted (they would never get a month). */
  deletedFromDefault: number;
  dedupeKeysPruned: number;
  /** Hives whose last reading (the newest value of each field) lost a value older than retention. */
  latestReadingsThinned: number;
}

function monthStart(year: number, month: number): Date {
  return new Date(Date.UTC(year, month, 1));
}

export function partitionName(table: string, start: Date): string {
  return `${table}_p${start.getUTCFullYear()}${String(start.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Creates the monthly partitions around now, moving any rows the default partition caught for those months, and
 * drops partitions wholly older than the retention period. Safe to run from every instance at once: the work
 * happens behind a transaction-scoped advisory lock.
 */
export async function maintainPartitions(db: Database, policy: PartitionPolicy): Promise<MaintenanceReport> {
  const now = policy.now ?? new Date();
  const ahead = policy.monthsAhead ?? 3;
  const behind = policy.monthsBehind ?? 1;
  const retentionCutoff = new Date(now.getTime() - policy.retentionDays * 86_400_000);
  const report: MaintenanceReport = { created: [], dropped: [], movedFromDefault: 0, deletedFromDefault: 0, dedupeKeysPruned: 0, latestReadingsThinned: 0 };

  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MAINTENANCE_LOCK_KEY]);
    // Dropping or attaching a partition locks its parent table. Waiting for that lock behind a backup queued every
    // insert behind the waiting drop: ingest stopped on every instance for as long as the backup ran.
    await tx.exec(`SET LOCAL lock_timeout = '${Math.max(1, Math.round(policy.lockTimeoutMs ?? 3000))}ms'`);
    for (const table of policy.partitions === false ? [] : PARTITIONED_TABLES) {
      const existing = new Set(
        (
          await tx.query<{ name: string }>(
            `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = $1`,
            [table],
          )
        ).rows.map((r) => r.name),
      );
      for (let offset = -behind; offset <= ahead; offset++) {
        const start = monthStart(now.getUTCFullYear(), now.getUTCMonth() + offset);
        const end = monthStart(start.getUTCFullYear(), start.getUTCMonth() + 1);
        if (end <= retentionCutoff) continue;
        const name = partitionName(table, start);
        if (existing.has(name)) continue;
        await tx.exec(`CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
        const moved = await tx.query(
          `WITH moved AS (DELETE FROM ${table}_default WHERE ts >= $1 AND ts < $2 RETURNING *)
           INSERT INTO ${name} SELECT * FROM moved`,
          [start.toISOString(), end.toISOString()],
        );
        report.movedFromDefault += moved.rowCount;
        await tx.exec(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`);
        report.created.push(name);
      }
      for (const name of existing) {
        const match = /_p(\d{4})(\d{2})$/.exec(name);
        if (!match) continue;
        const end = monthStart(Number(match[1]), Number(match[2]));
        if (end <= retentionCutoff) {
          await tx.exec(`DROP TABLE ${name}`);
          report.dropped.push(name);
        }
      }
      report.deletedFromDefault += (await tx.query(`DELETE FROM ${table}_default WHERE ts < $1`, [retentionCutoff.toISOString()])).rowCount;
    }
    if (policy.partitions !== false) report.latestReadingsThinned = await forgetLatestValuesBefore(tx, retentionCutoff);
    const dedupeCutoff = new Date(now.getTime() - policy.dedupeRetentionDays * 86_400_000).toISOString();
    for (const table of DEDUPE_TABLES) {
      report.dedupeKeysPruned += (await tx.query(`DELETE FROM ${table} WHERE created_at < $1`, [dedupeCutoff])).rowCount;
    }
  }).catch((error: unknown) => {
    if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) {
      throw new MaintenancePostponedError('partition maintenance postponed: a table it changes is locked by another session (a backup?); nothing was changed, it runs again later');
    }
    throw error;
  });
  return report;
}

/**
 * The newest value of each field of a hive is kept apart from the metrics rows it came from, and would outlive them:
 * a scale gone for years would still show its weight. Values taken before the retention cutoff are forgotten as their
 * rows are (a hive with nothing newer loses its row, and reads as one without readings). Returns how many hives
 * lost a value.
 */
async function forgetLatestValuesBefore(tx: Queryable, cutoff: Date): Promise<number> {
  const { rows } = await tx.query<{ forgotten: number }>(
    `WITH gone AS (DELETE FROM hive_latest_readings WHERE reading_at < $1
                   RETURNING 1),
          thinned AS (
            UPDATE hive_latest_readings SET
              temperature_celsius = CASE WHEN temperature_celsius_at < $1 THEN NULL ELSE temperature_celsius END,
              temperature_celsius_at = CASE WHEN temperature_celsius_at < $1 THEN NULL ELSE temperature_celsius_at END,
              humidity_percent = CASE WHEN humidity_percent_at < $1 THEN NULL ELSE humidity_percent END,
              humidity_percent_at = CASE WHEN humidity_percent_at < $1 THEN NULL ELSE humidity_percent_at END,
              weight_kg = CASE WHEN weight_kg_at < $1 THEN NULL ELSE weight_kg END,
              weight_kg_at = CASE WHEN weight_kg_at < $1 THEN NULL ELSE weight_kg_at END
            WHERE reading_at >= $1 AND (temperature_celsius_at < $1 OR humidity_percent_at < $1 OR weight_kg_at < $1)
            RETURNING 1
          )
     SELECT ((SELECT count(*) FROM gone) + (SELECT count(*) FROM thinned))::int AS forgotten`,
    [cutoff.toISOString()],
  );
  return rows[0]!.forgotten;
}

/** SQLSTATE of a lock wait that ran out of `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';
