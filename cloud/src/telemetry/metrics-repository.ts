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
 *
 * It also keeps each hive's newest value of each field (`hive_latest_readings`, which the apiary reads): the batch's
 * newest non-null value per field is merged into the hive's row, a field taken only where it is newer than the one
 * stored, so a late or out-of-order record changes nothing it should not. The upsert locks the hive's row and compares
 * against the row as a concurrent batch left it; rows are taken in hive order so that two batches cannot deadlock.
 * Of values of the same second, the first stored stays, as with dedupe keys.
 */
/** Whether the batch brings a value of the field taken later than the one stored (or the first one). */
function batchIsNewer(timeColumn: string): string {
  return `(EXCLUDED.${timeColumn} > l.${timeColumn} OR (l.${timeColumn} IS NULL AND EXCLUDED.${timeColumn} IS NOT NULL))`;
}

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
  SELECT hive_id, ts, temperature_celsius, humidity_percent, weight_kg, ord FROM input WHERE dedupe_key IS NULL
  UNION ALL
  SELECT k.hive_id, k.ts, k.temperature_celsius, k.humidity_percent, k.weight_kg, k.ord FROM keyed k JOIN claimed c USING (hive_id, dedupe_key)
),
latest AS (
  INSERT INTO hive_latest_readings AS l (owner_id, hive_id, reading_at, temperature_celsius, temperature_celsius_at,
                                         humidity_percent, humidity_percent_at, weight_kg, weight_kg_at)
  SELECT $1, hive_id, to_timestamp(max(ts)),
         (array_agg(temperature_celsius ORDER BY ts DESC, ord) FILTER (WHERE temperature_celsius IS NOT NULL))[1],
         to_timestamp(max(ts) FILTER (WHERE temperature_celsius IS NOT NULL)),
         (array_agg(humidity_percent ORDER BY ts DESC, ord) FILTER (WHERE humidity_percent IS NOT NULL))[1],
         to_timestamp(max(ts) FILTER (WHERE humidity_percent IS NOT NULL)),
         (array_agg(weight_kg ORDER BY ts DESC, ord) FILTER (WHERE weight_kg IS NOT NULL))[1],
         to_timestamp(max(ts) FILTER (WHERE weight_kg IS NOT NULL))
  FROM accepted GROUP BY hive_id ORDER BY hive_id
  ON CONFLICT (owner_id, hive_id) DO UPDATE SET
    reading_at = greatest(l.reading_at, EXCLUDED.reading_at),
    temperature_celsius = CASE WHEN ${batchIsNewer('temperature_celsius_at')} THEN EXCLUDED.temperature_celsius ELSE l.temperature_celsius END,
    temperature_celsius_at = CASE WHEN ${batchIsNewer('temperature_celsius_at')} THEN EXCLUDED.temperature_celsius_at ELSE l.temperature_celsius_at END,
    humidity_percent = CASE WHEN ${batchIsNewer('humidity_percent_at')} THEN EXCLUDED.humidity_percent ELSE l.humidity_percent END,
    humidity_percent_at = CASE WHEN ${batchIsNewer('humidity_percent_at')} THEN EXCLUDED.humidity_percent_at ELSE l.humidity_percent_at END,
    weight_kg = CASE WHEN ${batchIsNewer('weight_kg_at')} THEN EXCLUDED.weight_kg ELSE l.weight_kg END,
    weight_kg_at = CASE WHEN ${batchIsNewer('weight_kg_at')} THEN EXCLUDED.weight_kg_at ELSE l.weight_kg_at END
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
