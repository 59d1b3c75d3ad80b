/** Frame the device measured its track points in (pixels). */
export interface FrameSize {
  width: number;
  height: number;
}

export interface GridSize {
  cols: number;
  rows: number;
}

/** Heatmaps use one grid whatever the camera resolution, so days from different cameras compare. */
export const DEFAULT_GRID: GridSize = { cols: 160, rows: 120 };

const MAX_GRID_SIDE = 4096;

export interface BinnedTrajectories {
  /**
   * Cell index (row * cols + col) → count to add, only for cells that got something, in ascending
   * index order: concurrent writers that apply deltas in this order lock rows in the same order.
   */
  cells: Map<number, number>;
  /** Track points read (all tracks). */
  points: number;
  /** Segments between consecutive points (a track of n points has n - 1). */
  segments: number;
  /** Tracks with at least one point. */
  trajectories: number;
  /** Points outside the frame, counted in the nearest border cell. */
  clampedPoints: number;
}

/**
 * Adds trajectories to a grid; the result holds deltas for an atomic `count = count + delta` update.
 *
 * Counting rule, per track:
 *  - each track point adds 1 to its own cell (a bee resting for 10 frames adds 10 there);
 *  - each segment between consecutive points adds 1 to every cell strictly between its two end cells
 *    on the segment's Bresenham line (8-connected, traced from the earlier point to the later one).
 * So a cell shared by two segments (the point between them) counts once per track point, never once per
 * segment, and a fast bee that moved many cells between two frames still leaves an unbroken path.
 *
 * Points map to cell floor(x * cols / width), floor(y * rows / height); the frame's right and bottom
 * edges (x = width, y = height) belong to the last column and row. Points outside the frame are clamped
 * to the border (reported in clampedPoints): a tracker may extrapolate a bee slightly past the edge,
 * and dropping the point would break its path.
 */
export function binTrajectories(
  tracks: readonly (readonly (readonly number[])[])[],
  frame: FrameSize,
  grid: GridSize = DEFAULT_GRID,
): BinnedTrajectories {
  assertPositiveFinite(frame?.width, 'frame.width');
  assertPositiveFinite(frame?.height, 'frame.height');
  assertGridSide(grid?.cols, 'grid.cols');
  assertGridSide(grid?.rows, 'grid.rows');
  if (!Array.isArray(tracks)) throw new TypeError('tracks must be an array of tracks ([[x, y], …] each)');

  const { cols, rows } = grid;
  const lastCol = cols - 1;
  const lastRow = rows - 1;
  const scaleX = cols / frame.width;
  const scaleY = rows / frame.height;
  // Dense scratch counts are cheaper than a Map in the loop; touched lists the cells to return.
  const counts = new Uint32Array(cols * rows);
  const touched: number[] = [];
  let points = 0;
  let segments = 0;
  let trajectories = 0;
  let clampedPoints = 0;

  for (let t = 0; t < tracks.length; t += 1) {
    const track = tracks[t];
    if (!Array.isArray(track)) throw new TypeError(`tracks[${t}] must be an array of [x, y] points`);
    const length = track.length;
    if (length === 0) continue;
    trajectories += 1;
    points += length;
    segments += length - 1;
    let prevCol = 0;
    let prevRow = 0;
    for (let i = 0; i < length; i += 1) {
      const point = track[i];
      if (!Array.isArray(point) || point.length !== 2) {
        throw new TypeError(`tracks[${t}][${i}] must be an [x, y] pair`);
      }
      const x: unknown = point[0];
      const y: unknown = point[1];
      if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y)) {
        throw new TypeError(`tracks[${t}][${i}] must hold finite numbers, got [${String(x)}, ${String(y)}]`);
      }
      let col = Math.floor(x * scaleX);
      let row = Math.floor(y * scaleY);
      if (x < 0 || y < 0 || x > frame.width || y > frame.height) clampedPoints += 1;
      if (col < 0) col = 0;
      else if (col > lastCol) col = lastCol;
      if (row < 0) row = 0;
      else if (row > lastRow) row = lastRow;

      const cell = row * cols + col;
      const before = counts[cell]!;
      counts[cell] = before + 1;
      if (before === 0) touched.push(cell);

      if (i > 0) {
        const dx = col > prevCol ? col - prevCol : prevCol - col;
        const dy = row > prevRow ? row - prevRow : prevRow - row;
        // Neighbouring or equal cells have nothing in between.
        if (dx > 1 || dy > 1) {
          const stepX = col > prevCol ? 1 : -1;
          const stepY = row > prevRow ? 1 : -1;
          let cx = prevCol;
          let cy = prevRow;
          let error = dx - dy;
          const steps = (dx > dy ? dx : dy) - 1;
          for (let s = 0; s < steps; s += 1) {
            const twice = 2 * error;
            if (twice >= -dy) {
              error -= dy;
              cx += stepX;
            }
            if (twice <= dx) {
              error += dx;
              cy += stepY;
            }
            const between = cy * cols + cx;
            const count = counts[between]!;
            counts[between] = count + 1;
            if (count === 0) touched.push(between);
          }
        }
      }
      prevCol = col;
      prevRow = row;
    }
  }

  touched.sort((a, b) => a - b);
  const cells = new Map<number, number>();
  for (const cell of touched) cells.set(cell, counts[cell]!);
  return { cells, points, segments, trajectories, clampedPoints };
}

function assertPositiveFinite(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${field} must be a positive number, got ${String(value)}`);
  }
}

function assertGridSide(value: unknown, field: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_GRID_SIDE) {
    throw new RangeError(`${field} must be an integer from 1 to ${MAX_GRID_SIDE}, got ${String(value)}`);
  }
}
