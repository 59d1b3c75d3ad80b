import { describe, expect, it } from 'vitest';
import { ConstantVelocityKalman } from './kalman.ts';
import { inverse2, matrix, multiply } from './matrix.ts';

describe('matrix helpers', () => {
  it('inverts a 2x2 matrix', () => {
    const a = matrix(2, 2, [4, 7, 2, 6]);
    expect(Array.from(multiply(a, inverse2(a)).data).map((v) => Math.round(v * 1e9) / 1e9 + 0)).toEqual([1, 0, 0, 1]);
    expect(() => inverse2(matrix(2, 2, [1, 2, 2, 4]))).toThrow('singular');
  });
  it('refuses mismatched shapes', () => {
    expect(() => multiply(matrix(2, 3), matrix(2, 3))).toThrow('cannot multiply 2x3 by 2x3');
  });
});

describe('ConstantVelocityKalman', () => {
  const options = { accelerationStd: 500, measurementStd: 2, initialSpeedStd: 600 };
  it('learns a constant velocity and predicts across an uneven gap', () => {
    const filter = new ConstantVelocityKalman(0, 0, options);
    for (let k = 1; k <= 15; k++) {
      filter.predict(0.1);
      filter.update(30 * k, -10 * k); // 300 px/s right, 100 px/s up
    }
    expect(filter.vx).toBeCloseTo(300, -1);
    expect(filter.vy).toBeCloseTo(-100, -1);
    filter.predict(0.3); // three frames skipped
    expect(filter.x).toBeCloseTo(450 + 90, -1);
    expect(filter.y).toBeCloseTo(-150 - 30, -1);
  });
  it('grows its uncertainty while it only predicts', () => {
    const filter = new ConstantVelocityKalman(0, 0, options);
    filter.update(0, 0);
    const before = filter.predictionSpread();
    filter.predict(0.5);
    expect(filter.predictionSpread()).toBeGreaterThan(before * 5);
  });
});
