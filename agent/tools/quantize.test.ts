import { describe, expect, it } from 'vitest';
import { RangeRecorder } from './quantize.ts';

const frame = (values: Record<string, number[]>) => Object.fromEntries(Object.entries(values).map(([name, data]) => [name, { data: Float32Array.from(data) }]));

describe('RangeRecorder', () => {
  it('bounds each tensor by a percentile of its per-frame extremes, so one outlier frame does not widen every step', () => {
    const recorder = new RangeRecorder(['a', 'b']);
    for (let i = 1; i <= 99; i++) recorder.record(frame({ a: [0, i / 10], b: [-1, 1] }));
    recorder.record(frame({ a: [-50, 1000], b: [-2, 3] }));
    expect(recorder.frames).toBe(100);
    expect(recorder.ranges(100)).toEqual({ a: [-50, 1000], b: [-2, 3] });
    const p99 = recorder.ranges(99);
    expect(p99.a![0]).toBe(0);
    expect(p99.a![1]).toBeCloseTo(9.9, 5);
    expect(p99.b).toEqual([-1, 1]);
  });

  it('names a tensor the model did not give and refuses to make ranges from no frames', () => {
    const recorder = new RangeRecorder(['missing']);
    expect(() => recorder.ranges(99)).toThrow('no frames were recorded');
    expect(() => recorder.record(frame({ other: [1] }))).toThrow('the calibrated model has no output "missing"');
  });
});
