import pngjs from 'pngjs';
import { describe, expect, it } from 'vitest';
import { infernoRgb, logScale } from './colormap.ts';
import { renderHeatmapPng } from './render.ts';

const { PNG } = pngjs;

function decode(png: Buffer): { width: number; height: number; data: Buffer } {
  return PNG.sync.read(png);
}

function pixel(image: { width: number; data: Buffer }, x: number, y: number): number[] {
  const o = (y * image.width + x) * 4;
  return [...image.data.subarray(o, o + 4)];
}

const TOP = [...infernoRgb(1), 255];

describe('renderHeatmapPng', () => {
  it('writes a PNG of the requested size', () => {
    const image = decode(renderHeatmapPng(new Uint32Array(160 * 120), 160, 120, { width: 640, height: 480 }));
    expect(image.width).toBe(640);
    expect(image.height).toBe(480);
  });

  it('leaves an empty grid fully transparent', () => {
    const image = decode(renderHeatmapPng(new Float64Array(8 * 6), 8, 6, { width: 40, height: 30 }));
    for (let i = 3; i < image.data.length; i += 4) expect(image.data[i]).toBe(0);
  });

  it('paints the hottest cell in the colormap top colour', () => {
    const counts = new Uint32Array(5 * 5);
    counts[2 * 5 + 2] = 900;
    counts[0] = 3;
    // 5 px per cell: pixel (12, 12) is the exact centre of cell (2, 2).
    const bilinear = decode(renderHeatmapPng(counts, 5, 5, { width: 25, height: 25 }));
    expect(pixel(bilinear, 12, 12)).toEqual(TOP);
    // Its neighbours are empty, so around the centre it keeps its colour and fades out in opacity.
    const edge = pixel(bilinear, 14, 12);
    expect(edge.slice(0, 3)).toEqual(TOP.slice(0, 3));
    expect(edge[3]).toBeGreaterThan(0);
    expect(edge[3]).toBeLessThan(255);
    // Far from any data: transparent.
    expect(pixel(bilinear, 24, 24)[3]).toBe(0);

    const nearest = decode(renderHeatmapPng(counts, 5, 5, { width: 25, height: 25, interpolation: 'nearest' }));
    for (const [x, y] of [[10, 10], [14, 14], [12, 10]] as const) expect(pixel(nearest, x, y)).toEqual(TOP);
    expect(pixel(nearest, 15, 12)[3]).toBe(0);
    const cold = infernoRgb(logScale(3, 900));
    expect(pixel(nearest, 0, 0)).toEqual([...cold, 255]);
  });

  it('colours larger counts lighter, on a log scale', () => {
    const counts = new Float64Array([1, 10, 100, 1000]);
    const image = decode(renderHeatmapPng(counts, 4, 1, { width: 4, height: 1, interpolation: 'nearest' }));
    const brightness = [0, 1, 2, 3].map((x) => pixel(image, x, 0).slice(0, 3).reduce((a, b) => a + b, 0));
    expect(brightness[0]).toBeLessThan(brightness[1]!);
    expect(brightness[1]).toBeLessThan(brightness[2]!);
    expect(brightness[2]).toBeLessThan(brightness[3]!);
    // log1p(10) / log1p(1000) ≈ 0.347: the 10 sits a third of the way along the colormap, not at 1 %.
    expect(pixel(image, 1, 0).slice(0, 3)).toEqual(infernoRgb(Math.log1p(10) / Math.log1p(1000)));
  });

  it('upscales by cells with nearest interpolation', () => {
    const counts = new Uint32Array([5, 0]);
    const image = decode(renderHeatmapPng(counts, 2, 1, { width: 20, height: 10, interpolation: 'nearest' }));
    for (let x = 0; x < 20; x += 1) {
      for (let y = 0; y < 10; y += 1) expect(pixel(image, x, y)[3], `${x},${y}`).toBe(x < 10 ? 255 : 0);
    }
  });

  it('blends over a background still, which shows untouched where there is no data', () => {
    const gray = { rgba: Buffer.alloc(10 * 10 * 4, 128), width: 10, height: 10 };
    for (let i = 3; i < gray.rgba.length; i += 4) gray.rgba[i] = 255;
    const counts = new Uint32Array([7, 0]);
    const image = decode(
      renderHeatmapPng(counts, 2, 1, { width: 10, height: 10, background: gray, alpha: 0.5, interpolation: 'nearest' }),
    );
    expect(pixel(image, 9, 5)).toEqual([128, 128, 128, 255]);
    const [r, g, b] = infernoRgb(1);
    expect(pixel(image, 2, 5)).toEqual([Math.round((r + 128) / 2), Math.round((g + 128) / 2), Math.round((b + 128) / 2), 255]);
  });

  it('resamples a background of another size to the output', () => {
    const still = { rgba: Buffer.alloc(2 * 2 * 4), width: 2, height: 2 };
    for (let i = 0; i < 4; i += 1) still.rgba.set([i * 60, 0, 0, 255], i * 4);
    const image = decode(renderHeatmapPng(new Uint32Array(1), 1, 1, { width: 8, height: 8, background: still }));
    expect(pixel(image, 0, 0)).toEqual([0, 0, 0, 255]);
    expect(pixel(image, 7, 7)).toEqual([180, 0, 0, 255]);
    expect(pixel(image, 7, 0)).toEqual([60, 0, 0, 255]);
  });

  it('rejects inconsistent input naming the field', () => {
    expect(() => renderHeatmapPng(new Uint32Array(5), 2, 3, { width: 10, height: 10 })).toThrow(
      'counts has 5 cells but cols × rows is 6',
    );
    expect(() => renderHeatmapPng(new Uint32Array(6), 2, 3, { width: 0, height: 10 })).toThrow('options.width');
    expect(() => renderHeatmapPng(new Uint32Array(6), 2, 3, { width: 10, height: 10, alpha: 2 })).toThrow(
      'options.alpha',
    );
    const short = { rgba: Buffer.alloc(12), width: 2, height: 2 };
    expect(() => renderHeatmapPng(new Uint32Array(6), 2, 3, { width: 10, height: 10, background: short })).toThrow(
      'options.background.rgba',
    );
    expect(() => renderHeatmapPng([1, 2] as unknown as Uint32Array, 2, 1, { width: 2, height: 1 })).toThrow(
      'counts must be',
    );
  });
});
