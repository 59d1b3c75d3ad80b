import { describe, expect, it } from 'vitest';
import { assign } from './hungarian.ts';

function bruteForce(costs: number[][]): number {
  const rows = costs.length;
  const cols = costs[0]!.length;
  let best = Infinity;
  let bestCount = -1;
  const used = new Array<boolean>(cols).fill(false);
  const walk = (row: number, total: number, count: number) => {
    if (row === rows) {
      if (count > bestCount || (count === bestCount && total < best)) {
        bestCount = count;
        best = total;
      }
      return;
    }
    walk(row + 1, total, count); // leave this row free
    for (let c = 0; c < cols; c++) {
      if (used[c] || !Number.isFinite(costs[row]![c]!)) continue;
      used[c] = true;
      walk(row + 1, total + costs[row]![c]!, count + 1);
      used[c] = false;
    }
  };
  walk(0, 0, 0);
  return best;
}

const total = (costs: number[][], pairs: [number, number][]) => pairs.reduce((s, [r, c]) => s + costs[r]![c]!, 0);

describe('assign', () => {
  it('solves a square problem where greedy would be wrong', () => {
    const costs = [
      [1, 2],
      [1, 10],
    ];
    // Greedy takes (0,0)=1 then (1,1)=10; the optimum is (0,1)+(1,0)=3.
    expect(assign(costs)).toEqual([[0, 1], [1, 0]]);
  });
  it('handles more columns than rows and more rows than columns', () => {
    expect(assign([[5, 1, 3]])).toEqual([[0, 1]]);
    expect(assign([[5], [1], [3]])).toEqual([[1, 0]]);
  });
  it('never returns a forbidden pair', () => {
    const costs = [
      [Infinity, Infinity],
      [Infinity, 2],
    ];
    expect(assign(costs)).toEqual([[1, 1]]);
  });
  it('matches brute force on random rectangular matrices with forbidden cells', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let trial = 0; trial < 200; trial++) {
      const rows = 1 + Math.floor(random() * 5);
      const cols = 1 + Math.floor(random() * 5);
      const costs = Array.from({ length: rows }, () => Array.from({ length: cols }, () => (random() < 0.25 ? Infinity : Math.round(random() * 100) / 10)));
      const pairs = assign(costs);
      const rowsUsed = new Set(pairs.map((p) => p[0]));
      const colsUsed = new Set(pairs.map((p) => p[1]));
      expect(rowsUsed.size).toBe(pairs.length);
      expect(colsUsed.size).toBe(pairs.length);
      expect(total(costs, pairs)).toBeCloseTo(bruteForce(costs), 6);
    }
  });
  it('returns nothing for empty input and rejects ragged rows', () => {
    expect(assign([])).toEqual([]);
    expect(assign([[]])).toEqual([]);
    expect(() => assign([[1, 2], [3]])).toThrow(/row 1 has 1 columns, expected 2/);
  });
});
