/** Small dense row-major matrices, enough for a 4-state Kalman filter. */
export interface Matrix {
  rows: number;
  cols: number;
  data: Float64Array;
}

export function matrix(rows: number, cols: number, values?: readonly number[]): Matrix {
  const data = new Float64Array(rows * cols);
  if (values) {
    if (values.length !== rows * cols) throw new Error(`matrix ${rows}x${cols} needs ${rows * cols} values, got ${values.length}`);
    data.set(values);
  }
  return { rows, cols, data };
}

export function identity(n: number, scale = 1): Matrix {
  const m = matrix(n, n);
  for (let i = 0; i < n; i++) m.data[i * n + i] = scale;
  return m;
}

export function get(m: Matrix, r: number, c: number): number {
  return m.data[r * m.cols + c]!;
}

export function multiply(a: Matrix, b: Matrix): Matrix {
  if (a.cols !== b.rows) throw new Error(`cannot multiply ${a.rows}x${a.cols} by ${b.rows}x${b.cols}`);
  const out = matrix(a.rows, b.cols);
  for (let i = 0; i < a.rows; i++) {
    for (let k = 0; k < a.cols; k++) {
      const aik = a.data[i * a.cols + k]!;
      if (aik === 0) continue;
      for (let j = 0; j < b.cols; j++) out.data[i * b.cols + j]! += aik * b.data[k * b.cols + j]!;
    }
  }
  return out;
}

export function transpose(a: Matrix): Matrix {
  const out = matrix(a.cols, a.rows);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) out.data[j * a.rows + i] = a.data[i * a.cols + j]!;
  return out;
}

export function add(a: Matrix, b: Matrix): Matrix {
  sameShape(a, b);
  const out = matrix(a.rows, a.cols);
  for (let i = 0; i < a.data.length; i++) out.data[i] = a.data[i]! + b.data[i]!;
  return out;
}

export function subtract(a: Matrix, b: Matrix): Matrix {
  sameShape(a, b);
  const out = matrix(a.rows, a.cols);
  for (let i = 0; i < a.data.length; i++) out.data[i] = a.data[i]! - b.data[i]!;
  return out;
}

/** Inverse of a 2×2 matrix (the Kalman innovation covariance). */
export function inverse2(a: Matrix): Matrix {
  if (a.rows !== 2 || a.cols !== 2) throw new Error(`inverse2 needs a 2x2 matrix, got ${a.rows}x${a.cols}`);
  const [p, q, r, s] = a.data as unknown as [number, number, number, number];
  const det = p * s - q * r;
  if (Math.abs(det) < 1e-12) throw new Error('matrix is singular');
  return matrix(2, 2, [s / det, -q / det, -r / det, p / det]);
}

function sameShape(a: Matrix, b: Matrix): void {
  if (a.rows !== b.rows || a.cols !== b.cols) throw new Error(`shape mismatch ${a.rows}x${a.cols} vs ${b.rows}x${b.cols}`);
}
