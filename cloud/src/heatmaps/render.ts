import pngjs from 'pngjs';
import { COLORMAP_SIZE, INFERNO, logScale } from './colormap.ts';

const { PNG } = pngjs;

const MAX_SIDE = 8192;

export interface RgbaImage {
  /** width × height × 4 bytes, rows top to bottom. */
  rgba: Buffer | Uint8Array;
  width: number;
  height: number;
}

export interface RenderHeatmapOptions {
  width: number;
  height: number;
  /** A still frame to draw the heat over; resampled to width × height when its size differs. */
  background?: RgbaImage;
  /** Opacity of the heat layer, 0..1: 1 by default, 0.65 over a background so the frame shows through. */
  alpha?: number;
  /** bilinear (default) looks smooth; nearest shows the grid cells exactly. */
  interpolation?: 'bilinear' | 'nearest';
}

/**
 * Renders a count grid (row-major, cols × rows) as an RGBA PNG. Counts are log-scaled against the
 * grid's maximum and coloured with inferno; empty cells are transparent (or show the background).
 *
 * Bilinear upscaling interpolates the colour level and the "has data" coverage separately and colours
 * by level / coverage: a path's edge fades out in opacity instead of darkening towards black, and a
 * cell with data keeps its own colour wherever it dominates.
 */
export function renderHeatmapPng(
  counts: Float64Array | Uint32Array,
  cols: number,
  rows: number,
  options: RenderHeatmapOptions,
): Buffer {
  assertSide(cols, 'cols', 4096);
  assertSide(rows, 'rows', 4096);
  if (!(counts instanceof Float64Array || counts instanceof Uint32Array)) {
    throw new TypeError('counts must be a Float64Array or Uint32Array');
  }
  if (counts.length !== cols * rows) {
    throw new RangeError(`counts has ${counts.length} cells but cols × rows is ${cols * rows}`);
  }
  const { width, height, background } = options;
  assertSide(width, 'options.width', MAX_SIDE);
  assertSide(height, 'options.height', MAX_SIDE);
  const alpha = options.alpha ?? (background ? 0.65 : 1);
  if (typeof alpha !== 'number' || !(alpha >= 0 && alpha <= 1)) {
    throw new RangeError(`options.alpha must be a number from 0 to 1, got ${String(alpha)}`);
  }
  const interpolation = options.interpolation ?? 'bilinear';
  if (interpolation !== 'bilinear' && interpolation !== 'nearest') {
    throw new RangeError(`options.interpolation must be "bilinear" or "nearest", got ${String(interpolation)}`);
  }
  const backdrop = background ? resampleRgba(background, width, height) : null;

  let max = 0;
  for (let i = 0; i < counts.length; i += 1) if (counts[i]! > max) max = counts[i]!;
  const level = new Float64Array(counts.length);
  const coverage = new Float64Array(counts.length);
  for (let i = 0; i < counts.length; i += 1) {
    const count = counts[i]!;
    if (count > 0) {
      level[i] = logScale(count, max);
      coverage[i] = 1;
    }
  }

  const xs = interpolation === 'bilinear' ? bilinearTaps(width, cols) : nearestTaps(width, cols);
  const ys = interpolation === 'bilinear' ? bilinearTaps(height, rows) : nearestTaps(height, rows);
  const out = Buffer.alloc(width * height * 4);
  for (let py = 0; py < height; py += 1) {
    const rowA = ys.first[py]! * cols;
    const rowB = ys.second[py]! * cols;
    const wy = ys.weight[py]!;
    for (let px = 0; px < width; px += 1) {
      const colA = xs.first[px]!;
      const colB = xs.second[px]!;
      const wx = xs.weight[px]!;
      const w00 = (1 - wx) * (1 - wy);
      const w01 = wx * (1 - wy);
      const w10 = (1 - wx) * wy;
      const w11 = wx * wy;
      const c00 = rowA + colA;
      const c01 = rowA + colB;
      const c10 = rowB + colA;
      const c11 = rowB + colB;
      const cover = coverage[c00]! * w00 + coverage[c01]! * w01 + coverage[c10]! * w10 + coverage[c11]! * w11;
      const o = (py * width + px) * 4;
      if (cover <= 0) {
        if (backdrop) backdrop.copy(out, o, o, o + 4);
        continue;
      }
      const value = (level[c00]! * w00 + level[c01]! * w01 + level[c10]! * w10 + level[c11]! * w11) / cover;
      const entry = Math.min(COLORMAP_SIZE - 1, Math.round(value * (COLORMAP_SIZE - 1))) * 3;
      const heatAlpha = cover * alpha;
      const r = INFERNO[entry]!;
      const g = INFERNO[entry + 1]!;
      const b = INFERNO[entry + 2]!;
      if (!backdrop) {
        out[o] = r;
        out[o + 1] = g;
        out[o + 2] = b;
        out[o + 3] = Math.round(heatAlpha * 255);
        continue;
      }
      // Porter-Duff "over": heat on top of the still.
      const backAlpha = backdrop[o + 3]! / 255;
      const below = backAlpha * (1 - heatAlpha);
      const outAlpha = heatAlpha + below;
      if (outAlpha <= 0) continue;
      out[o] = Math.round((r * heatAlpha + backdrop[o]! * below) / outAlpha);
      out[o + 1] = Math.round((g * heatAlpha + backdrop[o + 1]! * below) / outAlpha);
      out[o + 2] = Math.round((b * heatAlpha + backdrop[o + 2]! * below) / outAlpha);
      out[o + 3] = Math.round(outAlpha * 255);
    }
  }

  const png = new PNG({ width, height });
  out.copy(png.data);
  return PNG.sync.write(png, { colorType: 6 });
}

interface Taps {
  first: Int32Array;
  second: Int32Array;
  /** Weight of `second`; `first` gets 1 - weight. */
  weight: Float64Array;
}

/** For each output pixel, the two source cells around its centre and the blend between them. */
function bilinearTaps(outSize: number, inSize: number): Taps {
  const taps: Taps = { first: new Int32Array(outSize), second: new Int32Array(outSize), weight: new Float64Array(outSize) };
  const scale = inSize / outSize;
  for (let p = 0; p < outSize; p += 1) {
    const position = (p + 0.5) * scale - 0.5;
    const lower = Math.floor(position);
    const first = Math.min(inSize - 1, Math.max(0, lower));
    const second = Math.min(inSize - 1, Math.max(0, lower + 1));
    taps.first[p] = first;
    taps.second[p] = second;
    taps.weight[p] = first === second ? 0 : position - lower;
  }
  return taps;
}

function nearestTaps(outSize: number, inSize: number): Taps {
  const taps: Taps = { first: new Int32Array(outSize), second: new Int32Array(outSize), weight: new Float64Array(outSize) };
  for (let p = 0; p < outSize; p += 1) {
    const cell = Math.min(inSize - 1, Math.floor(((p + 0.5) * inSize) / outSize));
    taps.first[p] = cell;
    taps.second[p] = cell;
  }
  return taps;
}

function resampleRgba(image: RgbaImage, width: number, height: number): Buffer {
  assertSide(image.width, 'options.background.width', MAX_SIDE);
  assertSide(image.height, 'options.background.height', MAX_SIDE);
  const source = image.rgba;
  if (!(source instanceof Uint8Array) || source.length !== image.width * image.height * 4) {
    throw new RangeError(
      `options.background.rgba must hold width × height × 4 = ${image.width * image.height * 4} bytes`,
    );
  }
  if (image.width === width && image.height === height) return Buffer.from(source);
  const xs = bilinearTaps(width, image.width);
  const ys = bilinearTaps(height, image.height);
  const out = Buffer.alloc(width * height * 4);
  for (let py = 0; py < height; py += 1) {
    const rowA = ys.first[py]! * image.width;
    const rowB = ys.second[py]! * image.width;
    const wy = ys.weight[py]!;
    for (let px = 0; px < width; px += 1) {
      const wx = xs.weight[px]!;
      const i00 = (rowA + xs.first[px]!) * 4;
      const i01 = (rowA + xs.second[px]!) * 4;
      const i10 = (rowB + xs.first[px]!) * 4;
      const i11 = (rowB + xs.second[px]!) * 4;
      const o = (py * width + px) * 4;
      for (let c = 0; c < 4; c += 1) {
        const top = source[i00 + c]! * (1 - wx) + source[i01 + c]! * wx;
        const bottom = source[i10 + c]! * (1 - wx) + source[i11 + c]! * wx;
        out[o + c] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return out;
}

function assertSide(value: unknown, field: string, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${field} must be an integer from 1 to ${max}, got ${String(value)}`);
  }
}
