/**
 * Inferno (matplotlib's perceptually uniform map, dark purple → yellow), rebuilt as 256 sRGB entries
 * by linear interpolation between 33 samples of the published table (every 8th entry, plus the last).
 * The curve is smooth at that spacing: spot checks against published colours stay within 2 steps.
 * The web app draws its colour scale from the same samples.
 */
export const INFERNO_ANCHORS: readonly (readonly [index: number, rgbHex: string])[] = [
  [0, '000004'], [8, '040312'], [16, '0b0724'], [24, '150b37'], [32, '210c4a'], [40, '2f0a5b'],
  [48, '3d0965'], [56, '4a0c6b'], [64, '57106e'], [72, '64156e'], [80, '71196e'], [88, '7d1e6d'],
  [96, '8a226a'], [104, '972766'], [112, 'a32c61'], [120, 'b0315b'], [128, 'bc3754'], [136, 'c73e4c'],
  [144, 'd24644'], [152, 'db503b'], [160, 'e45a31'], [168, 'eb6628'], [176, 'f1731d'], [184, 'f68013'],
  [192, 'f98e09'], [200, 'fb9d07'], [208, 'fcac11'], [216, 'fbbc21'], [224, 'f9cb35'], [232, 'f5db4c'],
  [240, 'f2ea69'], [248, 'f3f68a'], [255, 'fcffa4'],
];

export const COLORMAP_SIZE = 256;

function buildColormap(anchors: readonly (readonly [number, string])[]): Uint8Array {
  const table = new Uint8Array(COLORMAP_SIZE * 3);
  for (let a = 0; a + 1 < anchors.length; a += 1) {
    const [fromIndex, fromHex] = anchors[a]!;
    const [toIndex, toHex] = anchors[a + 1]!;
    const from = parseHex(fromHex);
    const to = parseHex(toHex);
    for (let i = fromIndex; i <= toIndex; i += 1) {
      const f = (i - fromIndex) / (toIndex - fromIndex);
      for (let c = 0; c < 3; c += 1) table[i * 3 + c] = Math.round(from[c]! + (to[c]! - from[c]!) * f);
    }
  }
  return table;
}

function parseHex(hex: string): [number, number, number] {
  const value = Number.parseInt(hex, 16);
  return [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
}

/** 256 RGB triplets, index 0 = coldest. */
export const INFERNO: Uint8Array = buildColormap(INFERNO_ANCHORS);

/** Colormap entry for a level in 0..1 (clamped; NaN counts as 0). */
export function colormapIndex(level: number): number {
  if (!(level > 0)) return 0;
  if (level >= 1) return COLORMAP_SIZE - 1;
  return Math.round(level * (COLORMAP_SIZE - 1));
}

export function infernoRgb(level: number): [number, number, number] {
  const i = colormapIndex(level) * 3;
  return [INFERNO[i]!, INFERNO[i + 1]!, INFERNO[i + 2]!];
}

/**
 * log1p(count) / log1p(max), in 0..1: bee paths concentrate at the entrance by orders of magnitude, and
 * a linear scale would show only that spot. Zero, negative or NaN counts (or max) give 0.
 */
export function logScale(count: number, max: number): number {
  if (!(count > 0) || !(max > 0)) return 0;
  if (count >= max) return 1;
  return Math.log1p(count) / Math.log1p(max);
}
