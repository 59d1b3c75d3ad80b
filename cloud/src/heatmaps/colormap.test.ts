import { describe, expect, it } from 'vitest';
import { COLORMAP_SIZE, colormapIndex, INFERNO, infernoRgb, logScale } from './colormap.ts';

const entry = (i: number): number[] => [INFERNO[i * 3]!, INFERNO[i * 3 + 1]!, INFERNO[i * 3 + 2]!];
const hex = (value: string): number[] => [0, 2, 4].map((at) => Number.parseInt(value.slice(at, at + 2), 16));
// CIE L* of an sRGB colour: inferno was designed to rise steadily in it.
function lightness(rgb: number[]): number {
  const [r, g, b] = rgb.map((byte) => {
    const v = byte / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  const y = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return y > 216 / 24389 ? 116 * Math.cbrt(y) - 16 : (24389 / 27) * y;
}

describe('inferno colormap', () => {
  it('has 256 RGB entries from near-black to pale yellow', () => {
    expect(INFERNO.length).toBe(COLORMAP_SIZE * 3);
    expect(entry(0)).toEqual(hex('000004'));
    expect(entry(255)).toEqual(hex('fcffa4'));
    expect(entry(128)).toEqual(hex('bc3754'));
  });

  it('stays within 2 steps of published inferno colours between its anchors', () => {
    // The ten-colour inferno palette, sampled at k/9 along the map.
    const published = ['000004', '1b0c42', '4b0c6b', '781c6d', 'a52c60', 'cf4446', 'ed6925', 'fb9a06', 'f7d03c', 'fcffa4'];
    published.forEach((colour, k) => {
      const ours = entry(Math.round((k * 255) / 9));
      const theirs = hex(colour);
      for (let c = 0; c < 3; c += 1) expect(Math.abs(ours[c]! - theirs[c]!), `${colour} channel ${c}`).toBeLessThanOrEqual(2);
    });
  });

  it('gets lighter from one end to the other', () => {
    for (let i = 1; i < COLORMAP_SIZE; i += 1) {
      expect(lightness(entry(i)), `entry ${i}`).toBeGreaterThan(lightness(entry(i - 1)));
    }
    expect(lightness(entry(255)) - lightness(entry(0))).toBeGreaterThan(95);
  });

  it('maps levels to entries, clamping out-of-range levels', () => {
    expect(colormapIndex(0)).toBe(0);
    expect(colormapIndex(1)).toBe(255);
    expect(colormapIndex(0.5)).toBe(128);
    expect(colormapIndex(-3)).toBe(0);
    expect(colormapIndex(7)).toBe(255);
    expect(colormapIndex(Number.NaN)).toBe(0);
    expect(infernoRgb(1)).toEqual([252, 255, 164]);
  });
});

describe('logScale', () => {
  it('spans 0..1 with log1p', () => {
    expect(logScale(0, 100)).toBe(0);
    expect(logScale(100, 100)).toBe(1);
    expect(logScale(3, 15)).toBeCloseTo(0.5, 12);
    expect(logScale(1, 1)).toBe(1);
  });

  it('is monotonic in the count', () => {
    let previous = -1;
    for (let count = 0; count <= 5000; count += 7) {
      const level = logScale(count, 5000);
      expect(level).toBeGreaterThan(previous);
      previous = level;
    }
  });

  it('gives 0 for empty grids and bad input, and caps counts above max', () => {
    expect(logScale(5, 0)).toBe(0);
    expect(logScale(-1, 10)).toBe(0);
    expect(logScale(Number.NaN, 10)).toBe(0);
    expect(logScale(20, 10)).toBe(1);
  });
});
