import type { Database, Queryable } from '../db/database.ts';
import type { BinnedTrajectories, GridSize } from './grid.ts';

export interface HeatmapDay {
  id: string;
  ownerId: number;
  boxId: string;
  date: string;
  cols: number;
  rows: number;
  frameWidth: number;
  frameHeight: number;
  trajectoryCount: number;
  pointCount: number;
  maxCount: number;
  lastSampleAt: Date;
  updatedAt: Date;
  imageKey: string | null;
  imageWidth: number | null;
  imageHeight: number | null;
  renderedAt: Date | null;
  renderCount: number;
}

interface DayRow {
  id: number;
  owner_id: number;
  box_id: string;
  date: string;
  cols: number;
  rows: number;
  frame_width: number;
  frame_height: number;
  trajectory_count: number;
  point_count: number;
  max_count: number;
  last_sample_at: Date;
  updated_at: Date;
  image_key: string | null;
  image_width: number | null;
  image_height: number | null;
  rendered_at: Date | null;
  render_count: number;
}

const DAY_COLUMNS = `id, owner_id, box_id, to_char(day, 'YYYY-MM-DD') AS date, cols, rows, frame_width, frame_height, trajectory_count,
  point_count, max_count, last_sample_at, updated_at, image_key, image_width, image_height, rendered_at, render_count`;

function toDay(row: DayRow): HeatmapDay {
  return {
    id: String(row.id),
    ownerId: Number(row.owner_id),
    boxId: row.box_id,
    date: row.date,
    cols: row.cols,
    rows: row.rows,
    frameWidth: row.frame_width,
    frameHeight: row.frame_height,
    trajectoryCount: Number(row.trajectory_count),
    pointCount: Number(row.point_count),
    maxCount: Number(row.max_count),
    lastSampleAt: new Date(row.last_sample_at),
    updatedAt: new Date(row.updated_at),
    imageKey: row.image_key,
    imageWidth: row.image_width,
    imageHeight: row.image_height,
    renderedAt: row.rendered_at ? new Date(row.rendered_at) : null,
    renderCount: row.render_count,
  };
}

/** One upload's contribution to a day. */
export interface TrajectoryDelta {
  binned: BinnedTrajectories;
  sampleAt: Date;
  frame: { width: number; height: number };
  batchId?: string;
}

/** Uploads to one day, all binned on `grid`, written in one transaction. */
export interface DayDeltas {
  ownerId: number;
  boxId: string;
  /** UTC date, YYYY-MM-DD. */
  date: string;
  grid: GridSize;
  deltas: TrajectoryDelta[];
}

/** The grid the day's first upload fixed differs from the one a delta was binned on; bin again on this one. */
export class GridMismatchError extends Error {
  constructor(readonly grid: GridSize) {
    super(`the day's heatmap grid is ${grid.cols}×${grid.rows}`);
  }
}

const GRID_CACHE_LIMIT = 10_000;

/**
 * Daily heatmaps as one dense count grid per day. An upload adds its deltas in a single statement under the day
 * row's lock (`heatmap_add`: count += delta for each touched cell, summary counters likewise), so concurrent
 * uploads, from any number of instances, never lose counts.
 */
export class HeatmapsRepository {
  /** A day's grid never changes once set, so it is remembered instead of read on every upload. */
  private readonly grids = new Map<string, GridSize>();

  constructor(private readonly db: Database) {}

  /** The grid a day uses, or undefined when it has no data yet. */
  async dayGrid(ownerId: number, boxId: string, date: string): Promise<GridSize | undefined> {
    const key = `${ownerId}\n${boxId}\n${date}`;
    const known = this.grids.get(key);
    if (known) return known;
    const { rows } = await this.db.query<{ cols: number; rows: number }>('SELECT cols, rows FROM heatmap_days WHERE owner_id = $1 AND box_id = $2 AND day = $3', [ownerId, boxId, date]);
    if (!rows[0]) return undefined;
    const grid = { cols: rows[0].cols, rows: rows[0].rows };
    if (this.grids.size >= GRID_CACHE_LIMIT) this.grids.clear();
    this.grids.set(key, grid);
    return grid;
  }

  /**
   * Adds uploads to their day in one transaction; `afterWrite` runs in it too (to queue the re-render). Returns,
   * per delta, whether it was counted: false for a batch id counted before (or twice in this group). Throws
   * GridMismatchError, adding nothing, when the day has another grid.
   */
  async add(group: DayDeltas, afterWrite?: (tx: Queryable) => Promise<void>): Promise<boolean[]> {
    const { ownerId, boxId, date, grid, deltas } = group;
    return this.db.transaction(async (tx) => {
      const counted = deltas.map(() => true);
      const batchIds = [...new Set(deltas.flatMap((d) => (d.batchId === undefined ? [] : [d.batchId])))];
      if (batchIds.length > 0) {
        const { rows } = await tx.query<{ batch_id: string }>(
          `INSERT INTO heatmap_batches (owner_id, box_id, batch_id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING RETURNING batch_id`,
          [ownerId, boxId, batchIds],
        );
        const fresh = new Set(rows.map((r) => r.batch_id));
        deltas.forEach((d, i) => {
          if (d.batchId === undefined) return;
          // The first upload of a fresh id counts; a retry of it in the same group does not.
          counted[i] = fresh.delete(d.batchId);
        });
      }
      const size = grid.cols * grid.rows;
      const sum = new Float64Array(size);
      let trajectories = 0;
      let points = 0;
      let sampleAt: Date | undefined;
      let frame: TrajectoryDelta['frame'] | undefined;
      deltas.forEach((d, i) => {
        if (!counted[i]) return;
        for (const [cell, count] of d.binned.cells) sum[cell] = sum[cell]! + count;
        trajectories += d.binned.trajectories;
        points += d.binned.points;
        if (!sampleAt || d.sampleAt > sampleAt) sampleAt = d.sampleAt;
        frame = d.frame;
      });
      if (!sampleAt || !frame) return counted;

      // Only the cells that got something travel, in ascending order.
      const cells: number[] = [];
      const counts: number[] = [];
      for (let i = 0; i < size; i += 1) {
        if (sum[i]! > 0) {
          cells.push(i);
          counts.push(sum[i]!);
        }
      }
      const { rows } = await tx.query<{ cols: number }>(
        `INSERT INTO heatmap_days AS d (owner_id, box_id, day, cols, rows, counts, max_count, frame_width, frame_height, trajectory_count, point_count, last_sample_at)
         SELECT $1, $2, $3::date, $4, $5, added.counts, added.max_touched, $8, $9, $10, $11, $12
         FROM heatmap_add(array_fill(0::bigint, ARRAY[$4::int * $5::int]), $6::int[], $7::bigint[]) AS added
         ON CONFLICT (owner_id, box_id, day) DO UPDATE SET
           (counts, max_count) = (
             SELECT added.counts, GREATEST(d.max_count, added.max_touched) FROM heatmap_add(d.counts, $6::int[], $7::bigint[]) AS added),
           trajectory_count = d.trajectory_count + EXCLUDED.trajectory_count,
           point_count = d.point_count + EXCLUDED.point_count,
           last_sample_at = GREATEST(d.last_sample_at, EXCLUDED.last_sample_at),
           -- The day keeps the frame its first upload named: a later size of another shape stretched the image.
           updated_at = now()
         WHERE d.cols = EXCLUDED.cols AND d.rows = EXCLUDED.rows
         RETURNING d.cols`,
        [ownerId, boxId, date, grid.cols, grid.rows, `{${cells.join(',')}}`, `{${counts.join(',')}}`, frame.width, frame.height, trajectories, points, sampleAt],
      );
      if (rows.length === 0) {
        // The row exists with another grid (the update's WHERE refused it): the caller bins again on that one.
        const actual = await tx.query<{ cols: number; rows: number }>('SELECT cols, rows FROM heatmap_days WHERE owner_id = $1 AND box_id = $2 AND day = $3', [ownerId, boxId, date]);
        throw new GridMismatchError({ cols: actual.rows[0]!.cols, rows: actual.rows[0]!.rows });
      }
      if (afterWrite) await afterWrite(tx);
      return counted;
    });
  }

  async get(ownerId: number, boxId: string, date: string): Promise<HeatmapDay | null> {
    const { rows } = await this.db.query<DayRow>(`SELECT ${DAY_COLUMNS} FROM heatmap_days WHERE owner_id = $1 AND box_id = $2 AND day = $3`, [ownerId, boxId, date]);
    return rows[0] ? toDay(rows[0]) : null;
  }

  /** Heatmaps of some boxes, one date or all, newest first. */
  async list(ownerId: number, boxIds: string[], date: string | null, limit: number): Promise<HeatmapDay[]> {
    const { rows } = await this.db.query<DayRow>(
      `SELECT ${DAY_COLUMNS} FROM heatmap_days
       WHERE owner_id = $1 AND box_id = ANY($2::text[]) AND ($3::date IS NULL OR day = $3::date)
       ORDER BY day DESC, updated_at DESC, box_id LIMIT $4`,
      [ownerId, boxIds, date, limit],
    );
    return rows.map(toDay);
  }

  /** The day's grid as dense counts, row-major. */
  async counts(day: HeatmapDay): Promise<Float64Array> {
    const { rows } = await this.db.query<{ counts: number[] }>('SELECT counts::float8[] AS counts FROM heatmap_days WHERE owner_id = $1 AND box_id = $2 AND day = $3', [
      day.ownerId,
      day.boxId,
      day.date,
    ]);
    const grid = new Float64Array(day.cols * day.rows);
    const counts = rows[0]?.counts ?? [];
    for (let i = 0; i < grid.length && i < counts.length; i += 1) grid[i] = Number(counts[i]);
    return grid;
  }

  async markRendered(day: HeatmapDay, image: { key: string; width: number; height: number }): Promise<void> {
    await this.db.query(
      `UPDATE heatmap_days SET image_key = $4, image_width = $5, image_height = $6, rendered_at = now(), render_count = render_count + 1
       WHERE owner_id = $1 AND box_id = $2 AND day = $3`,
      [day.ownerId, day.boxId, day.date, image.key, image.width, image.height],
    );
  }

  /** Days of a box that have data, for re-rendering when a new entrance still arrives. */
  async datesOf(ownerId: number, boxId: string, since: string): Promise<string[]> {
    const { rows } = await this.db.query<{ date: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS date FROM heatmap_days WHERE owner_id = $1 AND box_id = $2 AND day >= $3::date ORDER BY day`,
      [ownerId, boxId, since],
    );
    return rows.map((r) => r.date);
  }

  /** Forgets batch ids older than the retry window. */
  async purgeBatchIds(olderThanDays: number): Promise<number> {
    const { rowCount } = await this.db.query(`DELETE FROM heatmap_batches WHERE created_at < now() - $1::float8 * interval '1 day'`, [olderThanDays]);
    return rowCount;
  }
}
