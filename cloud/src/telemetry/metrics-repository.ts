import type { MetricInput } from '@hivegate/shared';
import type { Queryable } from '../db/database.ts';

export interface IngestOutcome {
  received: number;
  stored: number;
}

/**
 * One statement per batch: registers unseen hives, claims each dedupe key once (the first occurrence wins, in
 * the batch and across concurrent requests, since a claimed key blocks a concurrent claim until it commits), and
 * inserts the accepted rows. The statement is atomic, so a batch is stored whole or not at all.
 */
const INGEST_METRICS = `
WITH input AS (
  SELECT * FROM unnest($2::text[], $3::bigint[], $4::float8[], $5::float8[], $6::float8[], $7::text[])
    WITH ORDINALITY AS t(hive_id, ts, temperature_celsius, humidity_percent, weight_kg, dedupe_key, ord)
),
new_hives AS (
  INSERT INTO hives (owner_id, hive_id) SELECT DISTINCT $1::bigint, hive_id FROM input ORDER BY hive_id ON CONFLICT DO NOTHING
),
keyed AS (
  SELECT DISTINCT ON (hive_id, dedupe_key) * FROM input WHERE dedupe_key IS NOT NULL ORDER BY hive_id, dedupe_key, ord
),
claimed AS (
  INSERT INTO metric_dedupe (owner_id, hive_id, dedupe_key) SELECT $1, hive_id, dedupe_key FROM keyed
  ON CONFLICT DO NOTHING RETURNING hive_id, dedupe_key
),
accepted AS (
  SELECT hive_id, ts, temperature_celsius, humidity_percent, weight_kg FROM input WHERE dedupe_key IS NULL
  UNION ALL
  SELECT k.hive_id, k.ts, k.temperature_celsius, k.humidity_percent, k.weight_kg FROM keyed k JOIN claimed c USING (hive_id, dedupe_key)
)
INSERT INTO metrics (owner_id, hive_id, ts, temperature_celsius, humidity_percent, weight_kg)
SELECT $1, hive_id, to_timestamp(ts), temperature_celsius, humidity_percent, weight_kg FROM accepted`;

export class MetricsRepository {
  constructor(private readonly db: Queryable) {}

  async ingest(ownerId: number, items: readonly MetricInput[], nowSeconds: number): Promise<IngestOutcome> {
    const n = items.length;
    const hiveIds = new Array<string>(n);
    const timestamps = new Array<number>(n);
    const temperatures = new Array<number | null>(n);
    const humidities = new Array<number | null>(n);
    const weights = new Array<number | null>(n);
    const dedupeKeys = new Array<string | null>(n);
    for (let i = 0; i < n; i++) {
      const item = items[i]!;
      hiveIds[i] = String(item.hiveId);
      timestamps[i] = item.timestamp ?? nowSeconds;
      temperatures[i] = item.fields.temperatureCelsius ?? null;
      humidities[i] = item.fields.humidityPercent ?? null;
      weights[i] = item.fields.weightKg ?? null;
      dedupeKeys[i] = item.dedupeKey ?? null;
    }
    const { rowCount } = await this.db.query(INGEST_METRICS, [ownerId, hiveIds, timestamps, temperatures, humidities, weights, dedupeKeys]);
    return { received: n, stored: rowCount };
  }
}
