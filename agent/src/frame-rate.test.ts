import { describe, expect, it } from 'vitest';
import { FrameRate } from './frame-rate.ts';

describe('FrameRate', () => {
  // status showed "76 fps / 41.8 / 56.6 (source read at 30)" while frames came at 30 a second, in bursts.
  it('gives frames over elapsed time, also for frames that come in bursts', () => {
    const rate = new FrameRate(5000);
    // 30 frames a second, arriving three at a time 2 ms apart every 100 ms.
    for (let burst = 0; burst < 100; burst++) for (let k = 0; k < 3; k++) rate.add(burst * 100 + k * 2);
    expect(rate.rate(9904)).toBeCloseTo(30, 0);
  });

  it('reads 0 once no frame has come for a window, and before two have', () => {
    const rate = new FrameRate(5000);
    expect(rate.rate(0)).toBe(0);
    rate.add(0);
    expect(rate.rate(10)).toBe(0);
    for (let i = 1; i <= 30; i++) rate.add(i * 100);
    expect(rate.rate(3000)).toBeCloseTo(10, 5);
    expect(rate.rate(3000 + 2000)).toBeCloseTo(6, 5); // quiet for 2 s: 30 frames over 5 s
    expect(rate.rate(3000 + 5001)).toBe(0);
  });

  it('keeps only the window', () => {
    const rate = new FrameRate(1000);
    for (let i = 0; i < 5000; i++) rate.add(i * 10);
    expect(rate.rate(49_990)).toBeCloseTo(100, 0);
    expect((rate as unknown as { times: number[] }).times.length).toBeLessThan(1200);
  });
});
