/**
 * Bee sprites: drawn once per (size, wing state, colour) with supersampling, stored as premultiplied RGBA
 * floats with the head pointing along +x. The rasteriser rotates and scales them while blitting, so a few
 * dozen sprites cover every pose in a clip.
 */

export type WingState = 'folded' | 'buzzA' | 'buzzB';

export interface Sprite {
  size: number;
  /** Body length in pixels the sprite was drawn for. */
  length: number;
  /** Premultiplied RGBA: colour 0..255, alpha 0..1. */
  pixels: Float32Array;
  /** Radius (px, from the centre) that contains every non-transparent pixel. */
  radius: number;
  /** Tight bounds of the non-transparent texels (sprite pixel coordinates, inclusive). */
  minU: number;
  maxU: number;
  minV: number;
  maxV: number;
  /**
   * 1 where bilinear sampling from texel (u, v) (index v · size + u) reads only fully transparent texels (that one,
   * the next to the right and the two below them): the rasteriser skips such pixels without sampling them.
   */
  clear: Uint8Array;
}

interface Palette {
  amber: [number, number, number];
  band: [number, number, number];
  thorax: [number, number, number];
  hair: [number, number, number];
  head: [number, number, number];
}

export const PALETTES: readonly Palette[] = [
  // Golden (Italian-like) worker.
  { amber: [214, 156, 58], band: [58, 38, 20], thorax: [74, 52, 30], hair: [168, 128, 70], head: [42, 31, 24] },
  // Dark (Carniolan-like) worker: grey-brown bands, little yellow.
  { amber: [150, 112, 62], band: [38, 30, 22], thorax: [56, 44, 32], hair: [140, 120, 92], head: [34, 28, 22] },
];

type Rgba = [number, number, number, number];

/** Normalised radius of a point in an axis-aligned ellipse (< 1 inside). */
function ellipseRadius(x: number, y: number, cx: number, cy: number, rx: number, ry: number): number {
  const u = (x - cx) / rx;
  const v = (y - cy) / ry;
  return Math.sqrt(u * u + v * v);
}

/** Normalised radius in an ellipse turned by an angle given as its cosine and sine. */
function turnedEllipseRadius(x: number, y: number, cx: number, cy: number, rx: number, ry: number, cos: number, sin: number): number {
  const dx = x - cx;
  const dy = y - cy;
  const u = (dx * cos + dy * sin) / rx;
  const v = (-dx * sin + dy * cos) / ry;
  return Math.sqrt(u * u + v * v);
}

function distanceToSegment(x: number, y: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const u = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(x - ax - u * dx, y - ay - u * dy);
}

/** Paints `src` (straight alpha) over `dst` (premultiplied) in place. */
function over(dst: Rgba, r: number, g: number, b: number, a: number): void {
  if (a <= 0) return;
  const keep = 1 - a;
  dst[0] = dst[0] * keep + r * a;
  dst[1] = dst[1] * keep + g * a;
  dst[2] = dst[2] * keep + b * a;
  dst[3] = dst[3] * keep + a;
}

/** Fake sphere shading so bodies look round: lit from the upper left. */
function shade(radius: number, x: number, y: number, cx: number, cy: number): number {
  const nz = Math.sqrt(Math.max(0, 1 - radius * radius));
  const toward = (-(x - cx) - (y - cy)) * 2;
  return 0.62 + 0.38 * nz + Math.max(0, Math.min(0.18, toward * 0.6));
}

const LEGS: ReadonlyArray<readonly [number, number, number, number]> = [
  [0.24, 0.06, 0.36, 0.22],
  [0.18, 0.07, 0.16, 0.27],
  [0.12, 0.07, -0.06, 0.25],
];

/** Colour of one point of a bee's body (no wings) in body units: length 1, head at +x, centre at 0. */
function bodyPoint(x: number, y: number, palette: Palette, out: Rgba): void {
  out[0] = out[1] = out[2] = out[3] = 0;
  const ay = Math.abs(y);

  // Legs: three thin pairs from under the thorax, bent back.
  if (x > -0.08 && x < 0.38 && ay > 0.04 && ay < 0.29) {
    for (const [ax, ayy, bx, by] of LEGS) {
      const d = distanceToSegment(x, ay, ax, ayy, bx, by);
      if (d < 0.016) over(out, 30, 24, 20, 0.85 * (1 - d / 0.016));
    }
  }
  if (ay > 0.2) return;

  // Abdomen with bands; its tip is dark.
  const abdomen = x < 0.14 ? ellipseRadius(x, y, -0.18, 0, 0.31, 0.185) : 2;
  if (abdomen < 1) {
    const along = (x + 0.49) / 0.62;
    const stripe = (along * 5.2 + 0.15) % 1;
    const dark = along < 0.14 || (stripe < 0.38 && along < 0.86);
    const base = dark ? palette.band : palette.amber;
    const light = shade(abdomen, x, y, -0.18, 0);
    over(out, base[0] * light, base[1] * light, base[2] * light, Math.min(1, (1 - abdomen) * 12));
  }
  // Waist.
  const waist = ellipseRadius(x, y, 0.06, 0, 0.05, 0.06);
  if (waist < 1) over(out, palette.band[0], palette.band[1], palette.band[2], Math.min(1, (1 - waist) * 8));

  // Thorax: dark under a fuzz of lighter hair that thins toward the rim.
  const thorax = ellipseRadius(x, y, 0.2, 0, 0.15, 0.14);
  if (thorax < 1.08) {
    const light = shade(Math.min(1, thorax), x, y, 0.2, 0);
    const hairMix = Math.max(0, Math.min(1, (thorax - 0.45) * 1.8));
    const r = (palette.thorax[0] * (1 - hairMix) + palette.hair[0] * hairMix) * light;
    const g = (palette.thorax[1] * (1 - hairMix) + palette.hair[1] * hairMix) * light;
    const b = (palette.thorax[2] * (1 - hairMix) + palette.hair[2] * hairMix) * light;
    over(out, r, g, b, thorax < 1 ? Math.min(1, (1 - thorax) * 10 + 0.3) : (1.08 - thorax) * 3);
  }

  // Head with two large dark eyes.
  const head = ellipseRadius(x, y, 0.405, 0, 0.085, 0.1);
  if (head < 1) {
    const light = shade(head, x, y, 0.405, 0);
    over(out, palette.head[0] * light, palette.head[1] * light, palette.head[2] * light, Math.min(1, (1 - head) * 10));
    const eye = ellipseRadius(x, ay, 0.41, 0.06, 0.055, 0.035);
    if (eye < 1) over(out, 18, 16, 16, 0.8 * Math.min(1, (1 - eye) * 6));
  }
  // Antennae.
  if (x > 0.44) {
    const antenna = distanceToSegment(x, ay, 0.46, 0.025, 0.6, 0.11);
    if (antenna < 0.012) over(out, 28, 22, 18, 0.9 * (1 - antenna / 0.012));
  }
}

/**
 * Paints the translucent wings over a body point: folded along the back, or a spread blur when beating
 * (two blurs alternate frame to frame so the wings flicker).
 */
function wingsOver(x: number, y: number, wings: WingState, out: Rgba): void {
  const side = y < 0 ? -1 : 1;
  if (wings === 'folded') {
    // The two folded wings overlap along the middle; each point takes the wing on its side plus, near the
    // midline, the other one.
    for (const s of side < 0 ? FOLDED_ORDER_NEGATIVE : FOLDED_ORDER_POSITIVE) {
      const wing = turnedEllipseRadius(x, y, -0.1, s * 0.06, 0.27, 0.07, FOLDED_COS, s * FOLDED_SIN);
      if (wing < 1) over(out, 214, 220, 228, 0.17 + (wing > 0.82 ? 0.14 : 0));
    }
    return;
  }
  const [cos, sin, strength] = wings === 'buzzA' ? BUZZ_A : BUZZ_B;
  const wing = turnedEllipseRadius(x, y, 0.02, side * 0.26, 0.2, 0.3, cos, side * sin);
  if (wing < 1) over(out, 235, 238, 242, strength * (1 - wing * wing));
}

const FOLDED_COS = Math.cos(0.2);
const FOLDED_SIN = Math.sin(0.2);
const FOLDED_ORDER_NEGATIVE = [1, -1] as const;
const FOLDED_ORDER_POSITIVE = [-1, 1] as const;
const BUZZ_A = [Math.cos(0.475), Math.sin(0.475), 0.24] as const;
const BUZZ_B = [Math.cos(0.625), Math.sin(0.625), 0.18] as const;

const SUPERSAMPLE = 3;
const WING_STATES: readonly WingState[] = ['folded', 'buzzA', 'buzzB'];

/** Draws the three wing variants of one bee size and colour together (the body is shared). */
export function drawBeeSprites(length: number, paletteIndex: number): Record<WingState, Sprite> {
  const palette = PALETTES[paletteIndex % PALETTES.length] as Palette;
  const size = Math.ceil(length * 1.45) + 4;
  const centre = size / 2;
  const samples = SUPERSAMPLE * SUPERSAMPLE;
  const layers = WING_STATES.map(() => new Float32Array(size * size * 4));
  const body: Rgba = [0, 0, 0, 0];
  const point: Rgba = [0, 0, 0, 0];
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const i = (py * size + px) * 4;
      for (let sy = 0; sy < SUPERSAMPLE; sy++) {
        for (let sx = 0; sx < SUPERSAMPLE; sx++) {
          const x = (px + (sx + 0.5) / SUPERSAMPLE - centre) / length;
          const y = (py + (sy + 0.5) / SUPERSAMPLE - centre) / length;
          if (x * x + y * y > 0.45) continue;
          bodyPoint(x, y, palette, body);
          for (let w = 0; w < WING_STATES.length; w++) {
            point[0] = body[0];
            point[1] = body[1];
            point[2] = body[2];
            point[3] = body[3];
            wingsOver(x, y, WING_STATES[w] as WingState, point);
            const layer = layers[w] as Float32Array;
            layer[i] = (layer[i] as number) + point[0] / samples;
            layer[i + 1] = (layer[i + 1] as number) + point[1] / samples;
            layer[i + 2] = (layer[i + 2] as number) + point[2] / samples;
            layer[i + 3] = (layer[i + 3] as number) + point[3] / samples;
          }
        }
      }
    }
  }
  const sprites = WING_STATES.map((_, w) => finishSprite(layers[w] as Float32Array, size, length));
  return { folded: sprites[0] as Sprite, buzzA: sprites[1] as Sprite, buzzB: sprites[2] as Sprite };
}

function finishSprite(pixels: Float32Array, size: number, length: number): Sprite {
  const centre = size / 2;
  let radius = 0;
  let minU = size;
  let maxU = 0;
  let minV = size;
  let maxV = 0;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      if ((pixels[(py * size + px) * 4 + 3] as number) <= 0.002) continue;
      radius = Math.max(radius, Math.hypot(px + 0.5 - centre, py + 0.5 - centre) + 1);
      minU = Math.min(minU, px);
      maxU = Math.max(maxU, px);
      minV = Math.min(minV, py);
      maxV = Math.max(maxV, py);
    }
  }
  return { size, length, pixels, radius, minU: Math.max(0, minU - 1), maxU: Math.min(size - 1, maxU + 1), minV: Math.max(0, minV - 1), maxV: Math.min(size - 1, maxV + 1), clear: clearFootprints(pixels, size) };
}

function clearFootprints(pixels: Float32Array, size: number): Uint8Array {
  const clear = new Uint8Array(size * size);
  const alpha = (u: number, v: number) => pixels[(v * size + u) * 4 + 3] as number;
  for (let v = 0; v + 1 < size; v++) {
    for (let u = 0; u + 1 < size; u++) {
      if (alpha(u, v) === 0 && alpha(u + 1, v) === 0 && alpha(u, v + 1) === 0 && alpha(u + 1, v + 1) === 0) clear[v * size + u] = 1;
    }
  }
  return clear;
}

/** Sprite lengths grow geometrically, so any bee is drawn by shrinking a sprite by at most 15 %. */
const LEVEL_RATIO = 1.15;
const SMALLEST = 8;

export class SpriteBank {
  private readonly cache = new Map<string, Record<WingState, Sprite>>();

  /** The sprite to shrink for a bee `length` pixels long. */
  spriteFor(length: number, wings: WingState, palette: number): Sprite {
    const level = Math.max(0, Math.ceil(Math.log(Math.max(length, SMALLEST) / SMALLEST) / Math.log(LEVEL_RATIO) - 1e-9));
    const key = `${level}:${palette}`;
    let set = this.cache.get(key);
    if (!set) {
      set = drawBeeSprites(SMALLEST * LEVEL_RATIO ** level, palette);
      this.cache.set(key, set);
    }
    return set[wings];
  }

  /** Number of (size, colour) sets drawn so far. */
  get count(): number {
    return this.cache.size;
  }
}
