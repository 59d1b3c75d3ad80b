import { describe, expect, it } from 'vitest';
import { infernoRgb } from '../../../src/heatmaps/colormap.ts';
import { HEATMAP_GRADIENT, heatmapScaleTicks } from './heatmap-scale.ts';

describe('heatmap colour scale', () => {
  it('puts 1, the powers of ten and the busiest count where the renderer puts their colours', () => {
    const ticks = heatmapScaleTicks(1234);
    expect(ticks.map((t) => t.count)).toEqual([1, 10, 100, 1234]); // 1000 sits too close to 1234 to be labelled
    expect(ticks[0]!.position).toBeCloseTo(Math.log(2) / Math.log(1235), 6);
    expect(ticks.at(-1)!.position).toBe(1);
    expect(ticks.every((t, i) => i === 0 || t.position > ticks[i - 1]!.position)).toBe(true);
  });

  it('has a single tick for a day whose busiest spot had one sighting, and none without any', () => {
    expect(heatmapScaleTicks(1)).toEqual([{ count: 1, position: 1 }]);
    expect(heatmapScaleTicks(5).map((t) => t.count)).toEqual([1, 5]);
    expect(heatmapScaleTicks(0)).toEqual([]);
    expect(heatmapScaleTicks(Number.NaN)).toEqual([]);
  });

  it('runs through the colours of the rendered pictures, faintest first', () => {
    const hex = (rgb: number[]) => `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
    expect(HEATMAP_GRADIENT.startsWith(`linear-gradient(to right, ${hex(infernoRgb(0))} 0.0%,`)).toBe(true);
    expect(HEATMAP_GRADIENT.endsWith(`${hex(infernoRgb(1))} 100.0%)`)).toBe(true);
    expect(HEATMAP_GRADIENT).toContain(`${hex(infernoRgb(128 / 255))} 50.2%`);
  });
});
