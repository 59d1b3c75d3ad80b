/**
 * Minimum-cost assignment (Hungarian / Kuhn–Munkres with potentials, O(n²·m)) for a rectangular cost matrix.
 * `Infinity` marks a forbidden pair. Returns [row, col] pairs; each row and column is used at most once and
 * forbidden pairs are never returned, so with more rows than columns (or gated pairs) some rows stay free.
 */
export function assign(costs: readonly (readonly number[])[]): [number, number][] {
  const rows = costs.length;
  const cols = rows === 0 ? 0 : costs[0]!.length;
  if (rows === 0 || cols === 0) return [];
  for (const [i, row] of costs.entries()) {
    if (row.length !== cols) throw new Error(`cost matrix row ${i} has ${row.length} columns, expected ${cols}`);
  }
  const transposed = rows > cols;
  const n = transposed ? cols : rows;
  const m = transposed ? rows : cols;
  const at = transposed ? (i: number, j: number) => costs[j]![i]! : (i: number, j: number) => costs[i]![j]!;

  // Forbidden pairs get a cost larger than any complete assignment of allowed ones, then are dropped.
  let maxFinite = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) {
    const c = at(i, j);
    if (Number.isFinite(c)) maxFinite = Math.max(maxFinite, Math.abs(c));
  }
  const forbidden = (maxFinite + 1) * (n + 1) * 2;
  const cost = (i: number, j: number) => {
    const c = at(i, j);
    return Number.isFinite(c) ? c : forbidden;
  };

  // 1-based arrays; column 0 is the virtual start.
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const rowOfCol = new Int32Array(m + 1);
  const way = new Int32Array(m + 1);
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    rowOfCol[0] = i;
    let j0 = 0;
    minv.fill(Infinity);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = rowOfCol[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const current = cost(i0 - 1, j - 1) - u[i0]! - v[j]!;
        if (current < minv[j]!) {
          minv[j] = current;
          way[j] = j0;
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[rowOfCol[j]!]! += delta;
          v[j]! -= delta;
        } else {
          minv[j]! -= delta;
        }
      }
      j0 = j1;
    } while (rowOfCol[j0] !== 0);
    do {
      const j1 = way[j0]!;
      rowOfCol[j0] = rowOfCol[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }

  const pairs: [number, number][] = [];
  for (let j = 1; j <= m; j++) {
    const i = rowOfCol[j]!;
    if (i === 0) continue;
    const [r, c] = transposed ? [j - 1, i - 1] : [i - 1, j - 1];
    if (Number.isFinite(costs[r]![c]!)) pairs.push([r, c]);
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}
