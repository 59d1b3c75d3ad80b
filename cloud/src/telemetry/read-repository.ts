import type { Queryable } from '../db/database.ts';

export interface MetricReading {
  time: Date;
  temperatureCelsius: number | null;
  humidityPercent: number | null;
  weightKg: number | null;
}
export interface MetricBucket extends MetricReading {
  samples: number;
}
/** A hive's newest value of each field, each with the time it was taken; `time` is the newest reading of any field. */
export interface LatestReading extends MetricReading {
  temperatureCelsiusAt: Date | null;
  humidityPercentAt: Date | null;
  weightKgAt: Date | null;
}
export interface MovementBucket {
  time: Date;
  beesIn: number;
  beesOut: number;
  netFlow: number;
  avgSpeed: number | null;
  p95Speed: number | null;
  detectedBees: number | null;
  stationaryBees: number | null;
  beeInteractions: number | null;
  samples: number;
}
export interface EntranceTotals {
  boxId: string;
  hiveId: string | null;
  date: string;
  beesIn: number;
  beesOut: number;
  netFlow: number;
  lastSampleAt: Date | null;
}
export interface HiveRow {
  id: string;
  firstSeenAt: Date;
}
export interface BoxRow {
  id: string;
  hiveId: string | null;
  firstSeenAt: Date;
}

/**
 * The start of the bucket a row's `ts` falls in, of the ascending bucket starts `$5` (from `bucketStarts`, which
 * lays them on the user's wall clock): the last start at or before `ts`.
 */
const BUCKET_START = `($5::timestamptz[])[width_bucket(ts, $5::timestamptz[])]`;

/**
 * A speed of the bucket from its records' speeds, each weighted by the bees it detected (a record without that count
 * weighs as one bee): a minute of 100 bees at 2 px/frame and one of a single bee at 10 averages 2.08, not 6. The agent
 * weights two parts of one interval by their speed samples, which records do not carry; the bees detected stand in
 * for them. For the p95 this is the agent's own approximation: it lies between the records' lowest and highest
 * p95, as the true p95 of all their samples does. Records that detected no bee weigh nothing, unless none did.
 */
function weightedBySpeedSamples(column: 'avg_speed' | 'p95_speed'): string {
  return `coalesce(sum(${column} * coalesce(detected_bees, 1)) / nullif(sum(coalesce(detected_bees, 1)) FILTER (WHERE ${column} IS NOT NULL), 0), avg(${column}))`;
}

/** What beekeepers read: everything here is filtered by the owner first. */
export class TelemetryReadRepository {
  constructor(private readonly db: Queryable) {}

  /** Hives of the owner; `boxIds` (a token made for some boxes) keeps the hives those boxes count in. */
  async hives(ownerId: number, boxIds: string[] | null): Promise<HiveRow[]> {
    const { rows } = await this.db.query<HiveRow>(
      `SELECT hive_id AS id, first_seen_at AS "firstSeenAt" FROM hives
       WHERE owner_id = $1 AND ($2::text[] IS NULL OR hive_id IN (SELECT hive_id FROM boxes WHERE owner_id = $1 AND box_id = ANY($2)))
       ORDER BY hive_id`,
      [ownerId, boxIds],
    );
    return rows;
  }

  async hive(ownerId: number, hiveId: string, boxIds: string[] | null): Promise<HiveRow | undefined> {
    const { rows } = await this.db.query<HiveRow>(
      `SELECT hive_id AS id, first_seen_at AS "firstSeenAt" FROM hives
       WHERE owner_id = $1 AND hive_id = $2
         AND ($3::text[] IS NULL OR EXISTS (SELECT 1 FROM boxes WHERE owner_id = $1 AND hive_id = $2 AND box_id = ANY($3)))`,
      [ownerId, hiveId, boxIds],
    );
    return rows[0];
  }

  async boxes(ownerId: number, hiveId: string | null, boxIds: string[] | null): Promise<BoxRow[]> {
    const { rows } = await this.db.query<BoxRow>(
      `SELECT box_id AS id, hive_id AS "hiveId", first_seen_at AS "firstSeenAt" FROM boxes
       WHERE owner_id = $1 AND ($2::text IS NULL OR hive_id = $2) AND ($3::text[] IS NULL OR box_id = ANY($3))
       ORDER BY box_id`,
      [ownerId, hiveId, boxIds],
    );
    return rows;
  }

  /** The boxes of several hives in one query (a page listing hives with their boxes). */
  async boxesOfHives(ownerId: number, hiveIds: string[], boxIds: string[] | null): Promise<BoxRow[]> {
    const { rows } = await this.db.query<BoxRow>(
      `SELECT box_id AS id, hive_id AS "hiveId", first_seen_at AS "firstSeenAt" FROM boxes
       WHERE owner_id = $1 AND hive_id = ANY($2) AND ($3::text[] IS NULL OR box_id = ANY($3))
       ORDER BY box_id`,
      [ownerId, hiveIds, boxIds],
    );
    return rows;
  }

  /**
   * Hives of `hiveIds` that a token made for `boxIds` may not send readings for: hives with boxes, none of them its
   * own. A hive without a counting box yet is allowed (a new device may send readings before its first count).
   */
  async hivesOfOtherBoxes(ownerId: number, hiveIds: string[], boxIds: string[]): Promise<string[]> {
    const { rows } = await this.db.query<{ hiveId: string }>(
      `SELECT hive_id AS "hiveId" FROM boxes WHERE owner_id = $1 AND hive_id = ANY($2)
       GROUP BY hive_id HAVING NOT bool_or(box_id = ANY($3)) ORDER BY hive_id`,
      [ownerId, hiveIds, boxIds],
    );
    return rows.map((row) => row.hiveId);
  }

  /**
   * A box the user has anything of: counts, a camera that reported, clips, heatmaps, or a token made for it (a camera
   * set up but not heard from yet). Null for an id the user has nothing of: a typo, or someone else's box.
   */
  async box(ownerId: number, boxId: string): Promise<BoxRow | null> {
    const { rows } = await this.db.query<BoxRow>(
      `SELECT $2::text AS id, b.hive_id AS "hiveId",
              least(b.first_seen_at, d.first, v.first, h.first, t.first) AS "firstSeenAt"
       FROM (SELECT 1) AS one
       LEFT JOIN boxes b ON b.owner_id = $1 AND b.box_id = $2
       LEFT JOIN LATERAL (SELECT min(status_updated_at) AS first FROM live_devices WHERE owner_id = $1 AND box_id = $2) d ON true
       LEFT JOIN LATERAL (SELECT min(created_at) AS first FROM gate_videos WHERE owner_id = $1 AND box_id = $2) v ON true
       LEFT JOIN LATERAL (SELECT min(updated_at) AS first FROM heatmap_days WHERE owner_id = $1 AND box_id = $2) h ON true
       LEFT JOIN LATERAL (SELECT min(created_at) AS first FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) AND $2 = ANY (box_ids)) t ON true`,
      [ownerId, boxId],
    );
    const [row] = rows;
    return row?.firstSeenAt ? row : null;
  }

  /**
   * Boxes that have not counted yet but that the user has a camera, clips, heatmaps or a live token of (`box`'s
   * "anything" less the counts): a camera set up and not counting yet, which no hive lists.
   */
  async boxesAwaitingCounts(ownerId: number, boxIds: string[] | null): Promise<BoxRow[]> {
    const { rows } = await this.db.query<BoxRow>(
      `SELECT k.box_id AS id, NULL::text AS "hiveId", min(k.first) AS "firstSeenAt"
       FROM (
         SELECT box_id, status_updated_at FROM live_devices WHERE owner_id = $1
         UNION ALL SELECT box_id, min(created_at) FROM gate_videos WHERE owner_id = $1 GROUP BY box_id
         UNION ALL SELECT box_id, min(updated_at) FROM heatmap_days WHERE owner_id = $1 GROUP BY box_id
         UNION ALL SELECT unnest(box_ids), created_at FROM api_tokens
                   WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
       ) AS k(box_id, first)
       WHERE NOT EXISTS (SELECT 1 FROM boxes b WHERE b.owner_id = $1 AND b.box_id = k.box_id)
         AND ($2::text[] IS NULL OR k.box_id = ANY($2))
       GROUP BY k.box_id ORDER BY k.box_id`,
      [ownerId, boxIds],
    );
    return rows;
  }

  /**
   * The newest value of each field of each hive, in one query of one row per hive (kept by the metrics ingest): the
   * newest metrics row alone had no weight whenever a climate sensor had posted after the scale.
   */
  async lastReadings(ownerId: number, hiveIds: string[]): Promise<Map<string, LatestReading>> {
    const { rows } = await this.db.query<LatestReading & { hiveId: string }>(
      `SELECT hive_id AS "hiveId", reading_at AS time,
              temperature_celsius AS "temperatureCelsius", temperature_celsius_at AS "temperatureCelsiusAt",
              humidity_percent AS "humidityPercent", humidity_percent_at AS "humidityPercentAt",
              weight_kg AS "weightKg", weight_kg_at AS "weightKgAt"
       FROM hive_latest_readings WHERE owner_id = $1 AND hive_id = ANY($2)`,
      [ownerId, hiveIds],
    );
    return new Map(rows.map(({ hiveId, ...reading }) => [hiveId, reading]));
  }

  /** Readings averaged per bucket; `bucketStarts` ascending, the first at or before `from`. */
  async metricSeries(ownerId: number, hiveId: string, from: Date, to: Date, bucketStarts: Date[]): Promise<MetricBucket[]> {
    const { rows } = await this.db.query<MetricBucket>(
      `SELECT ${BUCKET_START} AS time,
              avg(temperature_celsius) AS "temperatureCelsius", avg(humidity_percent) AS "humidityPercent",
              avg(weight_kg) AS "weightKg", count(*)::int AS samples
       FROM metrics WHERE owner_id = $1 AND hive_id = $2 AND ts >= $3 AND ts < $4
       GROUP BY 1 ORDER BY 1`,
      [ownerId, hiveId, from, to, bucketStarts.map((start) => start.toISOString())],
    );
    return rows;
  }

  /** Movement per bucket; `bucketStarts` ascending, the first at or before `from`. */
  async movementSeries(ownerId: number, boxId: string, from: Date, to: Date, bucketStarts: Date[]): Promise<MovementBucket[]> {
    const { rows } = await this.db.query<MovementBucket>(
      `SELECT ${BUCKET_START} AS time,
              sum(bees_in)::float8 AS "beesIn", sum(bees_out)::float8 AS "beesOut",
              sum(coalesce(net_flow, bees_in - bees_out))::float8 AS "netFlow",
              ${weightedBySpeedSamples('avg_speed')} AS "avgSpeed", ${weightedBySpeedSamples('p95_speed')} AS "p95Speed",
              sum(detected_bees)::float8 AS "detectedBees", avg(stationary_bees)::float8 AS "stationaryBees",
              sum(bee_interactions)::float8 AS "beeInteractions", count(*)::int AS samples
       FROM movements WHERE owner_id = $1 AND box_id = $2 AND ts >= $3 AND ts < $4
       GROUP BY 1 ORDER BY 1`,
      [ownerId, boxId, from, to, bucketStarts.map((start) => start.toISOString())],
    );
    return rows;
  }

  /**
   * Totals per box over one calendar day: `date` as it is named, [`from`, `to`) the instants it spans where the user is;
   * boxes without data that day are listed with zeros. The hive is the one the box's newest record of that day names
   * (a box moved since counted that day in its old hive), or on a day without records the box's hive now.
   */
  async entranceTotals(ownerId: number, day: { date: string; from: Date; to: Date }, boxIds?: string[]): Promise<EntranceTotals[]> {
    const { rows } = await this.db.query<EntranceTotals>(
      `SELECT b.box_id AS "boxId", $2::text AS date,
              coalesce((array_agg(m.hive_id ORDER BY m.ts DESC, m.hive_id DESC) FILTER (WHERE m.hive_id IS NOT NULL))[1], b.hive_id) AS "hiveId",
              coalesce(sum(m.bees_in), 0)::float8 AS "beesIn", coalesce(sum(m.bees_out), 0)::float8 AS "beesOut",
              coalesce(sum(coalesce(m.net_flow, m.bees_in - m.bees_out)), 0)::float8 AS "netFlow",
              max(m.ts) AS "lastSampleAt"
       FROM boxes b
       LEFT JOIN movements m ON m.owner_id = b.owner_id AND m.box_id = b.box_id
         AND m.ts >= $4 AND m.ts < $5
       WHERE b.owner_id = $1 AND ($3::text[] IS NULL OR b.box_id = ANY($3))
       GROUP BY b.box_id, b.hive_id ORDER BY b.box_id`,
      [ownerId, day.date, boxIds ?? null, day.from, day.to],
    );
    return rows;
  }
}
