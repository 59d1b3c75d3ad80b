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

export interface TrajectoryDelta {
  ownerId: number;
  boxId: string;
  /** UTC date, YYYY-MM-DD. */
  date: string;
  sampleAt: Date;
  frame: { width: number; height: number };
  grid: GridSize;
  binned: BinnedTrajectories;
  batchId?: string;
}

/** The grid the day's first upload fixed differs from the one a delta was binned on; bin again on this one. */
export class GridMismatchError extends Error {
  constructor(readonly grid: GridSize) {
    super(`the day's heatmap grid is ${grid.cols}×${grid.rows}`);
  }
}

const GRID_CACHE_LIMIT = 10_000;

/**
 * Daily heatmaps as cell counts. Uploads add deltas atomically (`count = count + delta`, rows locked in cell order,
 * then the day's summary row), so concurrent uploads never lose counts and never deadlock.
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
   * Adds one upload's deltas; `afterWrite` runs in the same transaction (to queue the re-render). Returns false
   * when the batch id was counted before (nothing added). Throws GridMismatchError when the day has another grid.
   */
  async add(delta: TrajectoryDelta, afterWrite?: (tx: Queryable) => Promise<void>): Promise<boolean> {
    const { ownerId, boxId, date, binned, grid } = delta;
    return this.db.transaction(async (tx) => {
      if (delta.batchId !== undefined) {
        const fresh = await tx.query('INSERT INTO heatmap_batches (owner_id, box_id, batch_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1', [
          ownerId,
          boxId,
          delta.batchId,
        ]);
        if (fresh.rowCount === 0) return false;
      }
      const cells = new Int32Array(binned.cells.size);
      const counts = new Array<number>(binned.cells.size);
      let i = 0;
      for (const [cell, count] of binned.cells) {
        cells[i] = cell;
        counts[i] = count;
        i += 1;
      }
      let maxCount = 0;
      if (cells.length > 0) {
        // ORDER BY cell: every writer locks cells in the same order, so concurrent uploads queue instead of deadlocking.
        const { rows } = await tx.query<{ max: number }>(
          `WITH up AS (
             INSERT INTO heatmap_cells (owner_id, box_id, day, cell, count)
             SELECT $1, $2, $3::date, c, n FROM unnest($4::int[], $5::bigint[]) AS t (c, n) ORDER BY c
             ON CONFLICT (owner_id, box_id, day, cell) DO UPDATE SET count = heatmap_cells.count + EXCLUDED.count
             RETURNING count)
           SELECT coalesce(max(count), 0) AS max FROM up`,
          [ownerId, boxId, date, `{${cells.join(',')}}`, `{${counts.join(',')}}`],
        );
        maxCount = Number(rows[0]?.max ?? 0);
      }
      const { rows } = await tx.query<{ cols: number; rows: number }>(
        `INSERT INTO heatmap_days (owner_id, box_id, day, cols, rows, frame_width, frame_height, trajectory_count, point_count, max_count, last_sample_at)
         VALUES ($1, $2, $3::date, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (owner_id, box_id, day) DO UPDATE SET
           trajectory_count = heatmap_days.trajectory_count + EXCLUDED.trajectory_count,
           point_count = heatmap_days.point_count + EXCLUDED.point_count,
           max_count = GREATEST(heatmap_days.max_count, EXCLUDED.max_count),
           last_sample_at = GREATEST(heatmap_days.last_sample_at, EXCLUDED.last_sample_at),
           frame_width = EXCLUDED.frame_width,
           frame_height = EXCLUDED.frame_height,
           updated_at = now()
         RETURNING cols, rows`,
        [ownerId, boxId, date, grid.cols, grid.rows, delta.frame.width, delta.frame.height, binned.trajectories, binned.points, maxCount, delta.sampleAt],
      );
      const dayGrid = { cols: rows[0]!.cols, rows: rows[0]!.rows };
      if (dayGrid.cols !== grid.cols || dayGrid.rows !== grid.rows) throw new GridMismatchError(dayGrid);
      if (afterWrite) await afterWrite(tx);
      return true;
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
    const grid = new Float64Array(day.cols * day.rows);
    const { rows } = await this.db.query<{ cell: number; count: number }>('SELECT cell, count FROM heatmap_cells WHERE owner_id = $1 AND box_id = $2 AND day = $3', [
      day.ownerId,
      day.boxId,
      day.date,
    ]);
    for (const { cell, count } of rows) if (cell >= 0 && cell < grid.length) grid[cell] = Number(count);
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
