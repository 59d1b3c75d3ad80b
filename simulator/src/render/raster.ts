import type { Sprite } from './sprites.ts';

/**
 * The rasteriser: draws onto a frame held in a Uint8ClampedArray (3 bytes a pixel in blue, green, red
 * order, rows top to bottom). Sprites are blitted with rotation and scale by inverse mapping with bilinear sampling, visiting
 * only the pixels whose inverse image falls inside the sprite's opaque rectangle; motion blur averages
 * several shifted samples along the bee's motion during the exposure.
 */

/**
 * Pixels are stored blue first (ffmpeg's bgr24) because ffmpeg turns that into the encoder's yuv420p with a
 * dedicated converter, in half the time its generic path takes for rgb24; colours everywhere else (gains,
 * paints, sprites) stay in R, G, B order.
 */
export interface BgrFrame {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

export function createFrame(width: number, height: number): BgrFrame {
  return { width, height, data: new Uint8ClampedArray(width * height * 3) };
}

export interface BlitOptions {
  /** Centre of the bee in the frame. */
  x: number;
  y: number;
  /** Direction the head points (radians). */
  heading: number;
  /** Wanted body length in pixels. */
  length: number;
  /** Rows above this are not drawn (the bee is behind the hive wall there). */
  clipTop: number;
  /** Rows in [darkFrom, darkTo) are shaded from `darkest` (at darkFrom) up to full light (at darkTo). */
  darkFrom: number;
  darkTo: number;
  darkest: number;
  /** Displacement over the exposure (px); zero for no motion blur. */
  blurX: number;
  blurY: number;
  /** Light on the bee, per colour channel. */
  gain: readonly [number, number, number];
  /** Written values are kept within [low, high] (the sensor's noise headroom). */
  low: number;
  high: number;
}

const MAX_TAPS = 9;

/** The range of t where lo <= base + slope * t <= hi, intersected with [from, to]. */
function solveSpan(base: number, slope: number, lo: number, hi: number, from: number, to: number): [number, number] {
  if (Math.abs(slope) < 1e-9) return base >= lo && base <= hi ? [from, to] : [1, 0];
  let a = (lo - base) / slope;
  let b = (hi - base) / slope;
  if (a > b) [a, b] = [b, a];
  return [Math.max(from, a), Math.min(to, b)];
}

export function blitSprite(frame: BgrFrame, sprite: Sprite, options: BlitOptions): void {
  const { width, height, data } = frame;
  const scale = options.length / sprite.length;
  const blurLength = Math.hypot(options.blurX, options.blurY);
  const taps = Math.min(MAX_TAPS, Math.max(1, Math.ceil(blurLength / 1.5)));
  const reach = sprite.radius * scale + blurLength / 2 + 1;
  const x0 = Math.max(0, Math.floor(options.x - reach));
  const x1 = Math.min(width - 1, Math.ceil(options.x + reach));
  const y0 = Math.max(0, Math.floor(options.y - reach), Math.ceil(options.clipTop));
  const y1 = Math.min(height - 1, Math.ceil(options.y + reach));
  if (x0 > x1 || y0 > y1) return;

  const cos = Math.cos(options.heading) / scale;
  const sin = Math.sin(options.heading) / scale;
  const size = sprite.size;
  const pixels = sprite.pixels;
  const clear = sprite.clear;
  const half = size / 2 - 0.5;
  // Bilinear reads texel (iu + 1, iv + 1), so sample coordinates stay below the last texel.
  const minU = sprite.minU;
  const maxU = Math.min(sprite.maxU, size - 1.001);
  const minV = sprite.minV;
  const maxV = Math.min(sprite.maxV, size - 1.001);
  const darkSpan = options.darkTo - options.darkFrom;
  const weight = 1 / taps;
  const { low, high } = options;
  const [gainR, gainG, gainB] = options.gain;

  for (let py = y0; py <= y1; py++) {
    let shadeRow = 1;
    if (py < options.darkTo && darkSpan > 0) {
      const u = Math.max(0, (py + 0.5 - options.darkFrom) / darkSpan);
      shadeRow = options.darkest + (1 - options.darkest) * Math.min(1, u);
    }
    for (let k = 0; k < taps; k++) {
      const f = taps === 1 ? 0 : k / (taps - 1) - 0.5;
      const cx = options.x + options.blurX * f;
      const cy = options.y + options.blurY * f;
      const dy = py + 0.5 - cy;
      // u and v are linear in the column; find the columns that land inside the sprite's opaque box.
      const baseDx = x0 + 0.5 - cx;
      const uAt0 = baseDx * cos + dy * sin + half;
      const vAt0 = -baseDx * sin + dy * cos + half;
      const [ua, ub] = solveSpan(uAt0, cos, minU, maxU, 0, x1 - x0);
      const [va, vb] = solveSpan(vAt0, -sin, minV, maxV, ua, ub);
      const first = Math.ceil(va);
      const last = Math.floor(vb);
      if (first > last) continue;
      let u = uAt0 + first * cos;
      let v = vAt0 - first * sin;
      let offset = (py * width + x0 + first) * 3;
      const colour = weight * shadeRow;
      const colourR = colour * gainR;
      const colourG = colour * gainG;
      const colourB = colour * gainB;
      for (let i = first; i <= last; i++, u += cos, v -= sin, offset += 3) {
        if (u < 0 || v < 0) continue;
        const iu = u | 0;
        const iv = v | 0;
        // Nearly half the pixels visited lie beside the bee's body, where there is nothing to sample.
        if (clear[iv * size + iu] === 1) continue;
        const fu = u - iu;
        const fv = v - iv;
        const i00 = (iv * size + iu) * 4;
        const i01 = i00 + size * 4;
        const w00 = (1 - fu) * (1 - fv);
        const w10 = fu * (1 - fv);
        const w01 = (1 - fu) * fv;
        const w11 = fu * fv;
        const a =
          ((pixels[i00 + 3] as number) * w00 + (pixels[i00 + 7] as number) * w10 + (pixels[i01 + 3] as number) * w01 + (pixels[i01 + 7] as number) * w11) * weight;
        if (a <= 0.0005) continue;
        const r = (pixels[i00] as number) * w00 + (pixels[i00 + 4] as number) * w10 + (pixels[i01] as number) * w01 + (pixels[i01 + 4] as number) * w11;
        const g = (pixels[i00 + 1] as number) * w00 + (pixels[i00 + 5] as number) * w10 + (pixels[i01 + 1] as number) * w01 + (pixels[i01 + 5] as number) * w11;
        const b = (pixels[i00 + 2] as number) * w00 + (pixels[i00 + 6] as number) * w10 + (pixels[i01 + 2] as number) * w01 + (pixels[i01 + 6] as number) * w11;
        const keep = 1 - a;
        const nb = (data[offset] as number) * keep + b * colourB;
        const ng = (data[offset + 1] as number) * keep + g * colourG;
        const nr = (data[offset + 2] as number) * keep + r * colourR;
        data[offset] = nb < low ? low : nb > high ? high : nb;
        data[offset + 1] = ng < low ? low : ng > high ? high : ng;
        data[offset + 2] = nr < low ? low : nr > high ? high : nr;
      }
    }
  }
}

export interface ShadowOptions {
  x: number;
  y: number;
  heading: number;
  /** Half-length and half-width of the shadow ellipse (px). */
  halfLength: number;
  halfWidth: number;
  /** Width of the soft rim relative to the ellipse (0.1 sharp .. 1 very soft). */
  softness: number;
  /** Darkening at the centre (0..1). */
  strength: number;
  clipTop: number;
  /** Darkened values do not go below this (the sensor's noise headroom). */
  low: number;
}

/** Darkens a soft ellipse: the bee's shadow on the board. */
export function drawShadow(frame: BgrFrame, options: ShadowOptions): void {
  if (options.strength <= 0.005) return;
  const { width, height, data } = frame;
  const outer = 1 + options.softness;
  const reach = options.halfLength * outer + 1;
  const y0 = Math.max(0, Math.floor(options.y - reach), Math.ceil(options.clipTop));
  const y1 = Math.min(height - 1, Math.ceil(options.y + reach));
  const cos = Math.cos(options.heading);
  const sin = Math.sin(options.heading);
  const inner = Math.max(0, 1 - options.softness);
  const innerSquared = inner * inner;
  const outerSquared = outer * outer;
  const span = outer - inner;
  const low = options.low;
  // Normalised radius² = A dx² + B dx dy + C dy²: solve it per row for the columns inside the outer rim.
  const a1 = cos / options.halfLength;
  const b1 = sin / options.halfLength;
  const a2 = -sin / options.halfWidth;
  const b2 = cos / options.halfWidth;
  const A = a1 * a1 + a2 * a2;
  for (let py = y0; py <= y1; py++) {
    const dy = py + 0.5 - options.y;
    const B = 2 * (a1 * b1 + a2 * b2) * dy;
    const C = (b1 * b1 + b2 * b2) * dy * dy - outerSquared;
    const discriminant = B * B - 4 * A * C;
    if (discriminant <= 0) continue;
    const root = Math.sqrt(discriminant);
    const first = Math.max(0, Math.ceil((-B - root) / (2 * A) + options.x - 0.5));
    const last = Math.min(width - 1, Math.floor((-B + root) / (2 * A) + options.x - 0.5));
    let offset = (py * width + first) * 3;
    for (let px = first; px <= last; px++, offset += 3) {
      const dx = px + 0.5 - options.x;
      const u = dx * a1 + dy * b1;
      const v = dx * a2 + dy * b2;
      const radiusSquared = u * u + v * v;
      if (radiusSquared >= outerSquared) continue;
      let cover = 1;
      if (radiusSquared > innerSquared) {
        cover = 1 - (Math.sqrt(radiusSquared) - inner) / span;
        cover = cover * cover * (3 - 2 * cover);
      }
      const keep = 1 - options.strength * cover;
      data[offset] = Math.max(low, (data[offset] as number) * keep);
      data[offset + 1] = Math.max(low, (data[offset + 1] as number) * keep);
      data[offset + 2] = Math.max(low, (data[offset + 2] as number) * keep);
    }
  }
}
