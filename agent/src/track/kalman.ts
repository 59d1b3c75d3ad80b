import { add, get, identity, inverse2, matrix, multiply, subtract, transpose, type Matrix } from './matrix.ts';

export interface KalmanOptions {
  /** Standard deviation of the unmodelled acceleration, px/s². */
  accelerationStd: number;
  /** Standard deviation of a measured centre, px. */
  measurementStd: number;
  /** Standard deviation of the unknown initial speed, px/s. */
  initialSpeedStd: number;
}

const H = matrix(2, 4, [1, 0, 0, 0, 0, 1, 0, 0]);
const HT = transpose(H);

/**
 * Constant-velocity Kalman filter on state [x, y, vx, vy] (px, px/s). Time steps are real seconds, so a
 * gap of several frames (skipped by motion gating, or a missed detection) predicts as far as the bee flew.
 */
export class ConstantVelocityKalman {
  state: Matrix;
  covariance: Matrix;

  constructor(x: number, y: number, private readonly options: KalmanOptions) {
    this.state = matrix(4, 1, [x, y, 0, 0]);
    const r = options.measurementStd ** 2;
    const v = options.initialSpeedStd ** 2;
    this.covariance = matrix(4, 4, [r, 0, 0, 0, 0, r, 0, 0, 0, 0, v, 0, 0, 0, 0, v]);
  }

  get x(): number {
    return this.state.data[0]!;
  }
  get y(): number {
    return this.state.data[1]!;
  }
  get vx(): number {
    return this.state.data[2]!;
  }
  get vy(): number {
    return this.state.data[3]!;
  }

  predict(dt: number): void {
    if (dt <= 0) return;
    const f = matrix(4, 4, [1, 0, dt, 0, 0, 1, 0, dt, 0, 0, 1, 0, 0, 0, 0, 1]);
    // Piecewise white-noise acceleration model.
    const q = this.options.accelerationStd ** 2;
    const a = (dt ** 4 / 4) * q;
    const b = (dt ** 3 / 2) * q;
    const c = dt ** 2 * q;
    const noise = matrix(4, 4, [a, 0, b, 0, 0, a, 0, b, b, 0, c, 0, 0, b, 0, c]);
    this.state = multiply(f, this.state);
    this.covariance = add(multiply(multiply(f, this.covariance), transpose(f)), noise);
  }

  /** Innovation covariance S = H P Hᵀ + R: how far (px²) a measurement may plausibly land from the prediction. */
  innovationCovariance(): Matrix {
    return add(multiply(multiply(H, this.covariance), HT), identity(2, this.options.measurementStd ** 2));
  }

  /** Positional spread (px) of the prediction, for gating. */
  predictionSpread(): number {
    const s = this.innovationCovariance();
    return Math.sqrt((get(s, 0, 0) + get(s, 1, 1)) / 2);
  }

  update(mx: number, my: number): void {
    const s = this.innovationCovariance();
    const gain = multiply(multiply(this.covariance, HT), inverse2(s));
    const residual = matrix(2, 1, [mx - this.x, my - this.y]);
    this.state = add(this.state, multiply(gain, residual));
    this.covariance = multiply(subtract(identity(4), multiply(gain, H)), this.covariance);
  }
}
