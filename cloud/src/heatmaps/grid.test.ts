import { describe, expect, it } from 'vitest';
import { binTrajectories, DEFAULT_GRID } from './grid.ts';

// 640 × 480 on the default 160 × 120 grid: every cell is 4 × 4 px, so pixel (4c + 2, 4r + 2) is the
// centre of cell (c, r).
const frame = { width: 640, height: 480 };
const cols = DEFAULT_GRID.cols;
const at = (col: number, row: number): [number, number] => [4 * col + 2, 4 * row + 2];
const cell = (col: number, row: number): number => row * cols + col;

function countsOf(result: { cells: Map<number, number> }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [index, count] of result.cells) out[`${index % cols},${Math.floor(index / cols)}`] = count;
  return out;
}

describe('binTrajectories', () => {
  it('draws a horizontal segment through every cell once', () => {
    const result = binTrajectories([[at(0, 0), at(5, 0)]], frame);
    expect(countsOf(result)).toEqual({ '0,0': 1, '1,0': 1, '2,0': 1, '3,0': 1, '4,0': 1, '5,0': 1 });
    expect(result).toMatchObject({ points: 2, segments: 1, trajectories: 1, clampedPoints: 0 });
  });

  it('draws a vertical segment, upwards', () => {
    const result = binTrajectories([[at(7, 9), at(7, 5)]], frame);
    expect(countsOf(result)).toEqual({ '7,5': 1, '7,6': 1, '7,7': 1, '7,8': 1, '7,9': 1 });
  });

  it('draws a 45° diagonal as one cell per step', () => {
    const result = binTrajectories([[at(2, 2), at(6, 6)]], frame);
    expect(countsOf(result)).toEqual({ '2,2': 1, '3,3': 1, '4,4': 1, '5,5': 1, '6,6': 1 });
  });

  it('traces shallow lines with Bresenham steps', () => {
    const result = binTrajectories([[at(0, 0), at(4, 2)]], frame);
    expect(countsOf(result)).toEqual({ '0,0': 1, '1,1': 1, '2,1': 1, '3,2': 1, '4,2': 1 });
  });

  it('counts a single-point track once', () => {
    const result = binTrajectories([[at(10, 20)]], frame);
    expect(countsOf(result)).toEqual({ '10,20': 1 });
    expect(result).toMatchObject({ points: 1, segments: 0, trajectories: 1 });
  });

  it('counts the point shared by two segments once, not once per segment', () => {
    const result = binTrajectories([[at(0, 0), at(5, 0), at(10, 0)]], frame);
    const counts = countsOf(result);
    expect(Object.keys(counts)).toHaveLength(11);
    expect(Object.values(counts).every((count) => count === 1)).toBe(true);
    expect(result.segments).toBe(2);
  });

  it('counts every track point, so resting and back-and-forth add up', () => {
    const resting = binTrajectories([[at(3, 3), [13, 13], at(3, 3), at(3, 3)]], frame);
    expect(countsOf(resting)).toEqual({ '3,3': 4 });
    const backAndForth = binTrajectories([[at(0, 0), at(3, 0), at(0, 0)]], frame);
    // points: (0,0) twice and (3,0) once; the cells between are crossed by both segments.
    expect(countsOf(backAndForth)).toEqual({ '0,0': 2, '1,0': 2, '2,0': 2, '3,0': 1 });
  });

  it('leaves a continuous path for a fast bee jumping 50 cells in one frame', () => {
    const result = binTrajectories([[at(10, 60), at(60, 60), at(60, 10)]], frame);
    const counts = countsOf(result);
    for (let col = 10; col <= 60; col += 1) expect(counts[`${col},60`], `col ${col}`).toBe(1);
    for (let row = 10; row < 60; row += 1) expect(counts[`60,${row}`], `row ${row}`).toBe(1);
    expect(result.cells.size).toBe(101);
  });

  it('maps the right and bottom frame edges into the last cells', () => {
    const result = binTrajectories([[[640, 480]], [[0, 0]], [[639.9999, 479.9999]], [[640, 0]]], frame);
    expect(countsOf(result)).toEqual({ '159,119': 2, '0,0': 1, '159,0': 1 });
    expect(result.clampedPoints).toBe(0);
    for (const index of result.cells.keys()) expect(index).toBeLessThan(cols * DEFAULT_GRID.rows);
  });

  it('clamps points outside the frame to the border and reports them', () => {
    const result = binTrajectories([[[-30, 2], [700, 2]], [[2, 500]]], frame);
    expect(result.clampedPoints).toBe(3);
    expect(result.cells.get(cell(0, 0))).toBe(1);
    expect(result.cells.get(cell(159, 0))).toBe(1);
    expect(result.cells.get(cell(0, 119))).toBe(1);
    expect(result.cells.size).toBe(161);
  });

  it('scales to any grid independently of the camera resolution', () => {
    const hd = binTrajectories([[[1279, 719], [0, 0]]], { width: 1280, height: 720 }, { cols: 4, rows: 3 });
    // (1279, 719) → cell (3, 2); its line back to (0, 0) passes (2, 1) and (1, 1).
    expect([...hd.cells.keys()]).toEqual([0, 1 * 4 + 1, 1 * 4 + 2, 2 * 4 + 3]);
  });

  it('adds tracks together, skips empty ones and returns cells in ascending order', () => {
    const result = binTrajectories([[at(9, 9), at(7, 9)], [], [at(8, 9)], [at(1, 0)]], frame);
    expect(countsOf(result)).toEqual({ '7,9': 1, '8,9': 2, '9,9': 1, '1,0': 1 });
    expect(result).toMatchObject({ points: 4, segments: 1, trajectories: 3 });
    const keys = [...result.cells.keys()];
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
  });

  it('follows its counting rule on random walks: total = points + cells strictly inside segments', () => {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const tracks: number[][][] = [];
    let expected = 0;
    for (let t = 0; t < 50; t += 1) {
      const track: number[][] = [];
      let x = random() * 640;
      let y = random() * 480;
      for (let i = 0; i < 40; i += 1) {
        track.push([x, y]);
        const speed = random() < 0.2 ? 120 : 6;
        x = Math.min(640, Math.max(0, x + (random() - 0.5) * speed));
        y = Math.min(480, Math.max(0, y + (random() - 0.5) * speed));
      }
      for (let i = 0; i < track.length; i += 1) {
        expected += 1;
        if (i === 0) continue;
        const [x0, y0] = track[i - 1]!;
        const [x1, y1] = track[i]!;
        const steps = Math.max(
          Math.abs(Math.min(159, Math.floor(x1! / 4)) - Math.min(159, Math.floor(x0! / 4))),
          Math.abs(Math.min(119, Math.floor(y1! / 4)) - Math.min(119, Math.floor(y0! / 4))),
        );
        expected += Math.max(0, steps - 1);
      }
      tracks.push(track);
    }
    const result = binTrajectories(tracks, frame);
    let total = 0;
    for (const count of result.cells.values()) total += count;
    expect(total).toBe(expected);
    expect(result.points).toBe(2000);
  });

  it('traces every single segment as an unbroken 8-connected line ending at both points', () => {
    const ends: [number, number, number, number][] = [
      [0, 0, 37, 11],
      [37, 11, 0, 0],
      [5, 100, 9, 3],
      [150, 2, 3, 118],
      [80, 60, 80, 61],
      [1, 1, 2, 2],
    ];
    for (const [c0, r0, c1, r1] of ends) {
      const result = binTrajectories([[at(c0, r0), at(c1, r1)]], frame);
      const cells = [...result.cells.keys()].map((index) => [index % cols, Math.floor(index / cols)] as const);
      expect(result.cells.size).toBe(Math.max(Math.abs(c1 - c0), Math.abs(r1 - r0)) + 1);
      expect([...result.cells.values()].every((count) => count === 1)).toBe(true);
      expect(result.cells.has(cell(c0, r0)) && result.cells.has(cell(c1, r1))).toBe(true);
      // Sorted along the major axis, consecutive cells touch (8-neighbours).
      const major = Math.abs(c1 - c0) >= Math.abs(r1 - r0) ? 0 : 1;
      cells.sort((a, b) => a[major] - b[major]);
      for (let i = 1; i < cells.length; i += 1) {
        expect(Math.abs(cells[i]![0] - cells[i - 1]![0])).toBeLessThanOrEqual(1);
        expect(Math.abs(cells[i]![1] - cells[i - 1]![1])).toBeLessThanOrEqual(1);
      }
    }
  });

  it('rejects bad input with errors naming the field', () => {
    expect(() => binTrajectories([[[1, Number.NaN]]], frame)).toThrow('tracks[0][0] must hold finite numbers');
    expect(() => binTrajectories([[[1, 2], [3]]], frame)).toThrow('tracks[0][1] must be an [x, y] pair');
    expect(() => binTrajectories([[[1, 2]], [[1, '2' as unknown as number]]], frame)).toThrow('tracks[1][0]');
    expect(() => binTrajectories([{} as unknown as number[][]], frame)).toThrow('tracks[0] must be an array');
    expect(() => binTrajectories([], { width: 0, height: 480 })).toThrow('frame.width must be a positive number');
    expect(() => binTrajectories([], { width: 640, height: Number.POSITIVE_INFINITY })).toThrow('frame.height');
    expect(() => binTrajectories([], frame, { cols: 1.5, rows: 10 })).toThrow('grid.cols must be an integer');
    expect(() => binTrajectories([], frame, { cols: 10, rows: 0 })).toThrow('grid.rows');
  });
});
