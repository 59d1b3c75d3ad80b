import type { EntranceMovementInput } from '@hivegate/shared';
import type { Queryable } from '../db/database.ts';
import type { IngestOutcome } from './metrics-repository.ts';

/**
 * Like metrics, one statement per batch. The movement record may carry no extra idempotency key (the contract
 * forbids extra properties), so a record the device timestamped is stored once per (owner, hive, box, timestamp);
 * records stamped with server time are always new.
 *
 * A box belongs to the hive its newest record names (a box moved to another hive used to stay in its first for good):
 * the upsert keeps the hive of the greatest (time, hive id), so a record arriving late for an earlier time leaves the
 * box where it is, and concurrent batches agree whatever order they commit in (the box row's lock serialises them,
 * and the update compares against the row as the other left it). Boxes are taken in id order, and hives too, so
 * that two batches naming the same ones cannot deadlock.
 */
const INGEST_MOVEMENT = `
WITH input AS (
  SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bool[], $6::float8[], $7::float8[], $8::float8[],
                       $9::float8[], $10::float8[], $11::int[], $12::int[], $13::int[])
    WITH ORDINALITY AS t(hive_id, box_id, ts, device_time, bees_out, bees_in, net_flow, avg_speed, p95_speed,
                         stationary_bees, detected_bees, bee_interactions, ord)
),
new_hives AS (
  INSERT INTO hives (owner_id, hive_id) SELECT DISTINCT $1::bigint, hive_id FROM input ORDER BY hive_id ON CONFLICT DO NOTHING
),
box_hives AS (
  INSERT INTO boxes AS b (owner_id, box_id, hive_id, hive_named_at)
  SELECT DISTINCT ON (box_id) $1::bigint, box_id, hive_id, to_timestamp(ts) FROM input ORDER BY box_id, ts DESC, hive_id DESC
  ON CONFLICT (owner_id, box_id) DO UPDATE SET hive_id = EXCLUDED.hive_id, hive_named_at = EXCLUDED.hive_named_at
  WHERE b.hive_named_at IS NULL OR b.hive_id IS NULL
     OR (EXCLUDED.hive_named_at, EXCLUDED.hive_id) > (b.hive_named_at, b.hive_id)
),
keyed AS (
  SELECT DISTINCT ON (hive_id, box_id, ts) * FROM input WHERE device_time ORDER BY hive_id, box_id, ts, ord
),
claimed AS (
  INSERT INTO movement_dedupe (owner_id, hive_id, box_id, ts) SELECT $1, hive_id, box_id, to_timestamp(ts) FROM keyed
  ON CONFLICT DO NOTHING RETURNING hive_id, box_id, extract(epoch FROM ts)::bigint AS ts
),
accepted AS (
  SELECT * FROM input WHERE NOT device_time
  UNION ALL
  SELECT k.* FROM keyed k JOIN claimed c USING (hive_id, box_id, ts)
)
INSERT INTO movements (owner_id, hive_id, box_id, ts, bees_out, bees_in, net_flow, avg_speed, p95_speed,
                       stationary_bees, detected_bees, bee_interactions)
SELECT $1, hive_id, box_id, to_timestamp(ts), bees_out, bees_in, net_flow, avg_speed, p95_speed,
       stationary_bees, detected_bees, bee_interactions FROM accepted`;

export class MovementRepository {
  constructor(private readonly db: Queryable) {}

  async ingest(ownerId: number, items: readonly EntranceMovementInput[], nowSeconds: number): Promise<IngestOutcome> {
    const columns = Array.from({ length: 12 }, () => new Array<unknown>(items.length));
    items.forEach((item, i) => {
      const values = [
        String(item.hiveId),
        String(item.boxId),
        item.timestamp ?? nowSeconds,
        item.timestamp !== undefined,
        item.beesOut,
        item.beesIn,
        item.netFlow ?? null,
        item.avgSpeed ?? null,
        item.p95Speed ?? null,
        item.stationaryBees ?? null,
        item.detectedBees ?? null,
        item.beeInteractions ?? null,
      ];
      values.forEach((value, c) => (columns[c]![i] = value));
    });
    const { rowCount } = await this.db.query(INGEST_MOVEMENT, [ownerId, ...columns]);
    return { received: items.length, stored: rowCount };
  }
}
