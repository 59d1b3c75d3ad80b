import { smoothNoise, type Prng } from '../random/prng.ts';
import type { Layout } from '../scene/layout.ts';
import type { BgrFrame } from './raster.ts';
import { createFrame } from './raster.ts';

/**
 * The static background, drawn once per clip: the painted hive front, the dark entrance slot and a
 * weathered wooden landing board with grain, plank seams, stains and specks, under a slight vignette.
 */

const WALL_PAINTS: ReadonlyArray<[number, number, number]> = [
  [168, 196, 214], // pale blue
  [226, 222, 206], // off-white
  [176, 206, 172], // mint
  [222, 196, 120], // ochre
  [190, 190, 184], // grey
];

/**
 * Two octaves of domain-warped value noise, for weathering. Its inner terms depend on only x or only y, so
 * they are computed once per column and once per row.
 */
class Weathering {
  private readonly columnWarp: Float64Array;
  private readonly rowWarp: Float64Array;

  constructor(
    private readonly seed: number,
    width: number,
    height: number,
    private readonly xScale = 1,
    private readonly yScale = 1,
  ) {
    this.columnWarp = Float64Array.from({ length: width }, (_, x) => smoothNoise(seed ^ 11, x * xScale * 0.027) * 1.5);
    this.rowWarp = Float64Array.from({ length: height }, (_, y) => smoothNoise(seed ^ 7, y * yScale * 0.02) * 2);
  }

  at(x: number, y: number): number {
    return (
      0.6 * smoothNoise(this.seed, x * this.xScale * 0.013 + (this.rowWarp[y] as number)) +
      0.4 * smoothNoise(this.seed ^ 0x1234, y * this.yScale * 0.031 + (this.columnWarp[x] as number))
    );
  }
}

export function drawBackground(layout: Layout, rng: Prng): BgrFrame {
  const { width, height, slotTop, slotBottom, slotLeft, slotRight } = layout;
  const frame = createFrame(width, height);
  const data = frame.data;
  const seed = rng.nextUint32();
  const paint = rng.pick(WALL_PAINTS);
  const wood: [number, number, number] = [rng.range(138, 168), rng.range(110, 132), rng.range(78, 96)];
  const plankHeight = height * rng.range(0.1, 0.16);
  const plankPhase = rng.range(0, plankHeight);
  const grainScale = rng.range(0.7, 1.3) * (480 / height);
  const unit = height / 480;

  // A few stains (propolis, old wax, damp patches) and pollen specks.
  const stains: Array<{ x: number; y: number; r: number; dark: number }> = [];
  for (let i = 0; i < 10; i++) {
    stains.push({ x: rng.range(0, width), y: rng.range(slotBottom, height), r: rng.range(2, 9) * unit, dark: rng.range(0.08, 0.22) });
  }
  const specks: Array<{ x: number; y: number; r: number; colour: [number, number, number] }> = [];
  for (let i = 0; i < 60; i++) {
    const pollen = rng.chance(0.35);
    specks.push({
      x: rng.range(0, width),
      y: rng.range(slotBottom, height),
      r: rng.range(0.6, 1.8) * unit,
      colour: pollen ? [224, 176, 60] : [70, 52, 36],
    });
  }

  const slotWeathering = new Weathering(seed ^ 99, width, height);
  const wallWeathering = new Weathering(seed ^ 3, width, height, 3, 0.4);
  const boardWeathering = new Weathering(seed ^ 41, width, height);
  const wallStreaks = Float64Array.from({ length: width }, (_, x) => smoothNoise(seed ^ 5, x * 0.9));
  // Grain lines follow the planks but wander a little along them.
  const warps = Float64Array.from({ length: width }, (_, x) => smoothNoise(seed ^ 21, x * 0.008) * 7 * unit + smoothNoise(seed ^ 23, x * 0.05) * 1.2 * unit);
  const cx = width / 2;
  const cy = height / 2;
  const maxRadius = Math.hypot(cx, cy);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let r: number;
      let g: number;
      let b: number;
      const inOpening = y >= slotTop && y < slotBottom && x >= slotLeft && x < slotRight;
      if (inOpening) {
        // Dark opening; a little light reaches the hive floor near the lip.
        const depth = (y - slotTop) / (slotBottom - slotTop);
        const glow = 10 + 26 * depth * depth + 4 * slotWeathering.at(x, y);
        r = glow * 1.05;
        g = glow * 0.95;
        b = glow * 0.8;
      } else if (y < slotBottom) {
        // Painted wall: brush texture, darker under its lower edge where it overhangs the slot.
        const texture = 1 + 0.05 * wallWeathering.at(x, y) + 0.02 * (wallStreaks[x] as number);
        const edge = y >= slotTop - 3 * unit && y < slotTop ? 0.72 : 1;
        const board = Math.floor(y / (height * 0.075)) !== Math.floor((y + 1) / (height * 0.075)) ? 0.88 : 1;
        const shade = texture * edge * board;
        r = paint[0] * shade;
        g = paint[1] * shade;
        b = paint[2] * shade;
      } else {
        // Landing board: grain runs along the planks (x); seams between planks; weathering.
        const warp = warps[x] as number;
        const grain = Math.sin((y + warp) * 0.9 * grainScale) * 0.5 + Math.sin((y + warp * 1.7) * 2.3 * grainScale) * 0.25;
        const plankPosition = (y - slotBottom + plankPhase) % plankHeight;
        const seam = plankPosition < 1.6 * unit ? 0.55 : plankPosition < 3 * unit ? 0.85 : 1;
        const plankIndex = Math.floor((y - slotBottom + plankPhase) / plankHeight);
        const plankTone = 1 + 0.08 * smoothNoise(seed ^ 31, plankIndex * 1.7);
        const weather = 1 + 0.1 * boardWeathering.at(x, y);
        // Soft shadow on the board right under the slot, where the wall blocks part of the sky.
        const under = y - slotBottom < 8 * unit ? 0.75 + 0.25 * ((y - slotBottom) / (8 * unit)) : 1;
        const shade = (1 + 0.07 * grain) * seam * plankTone * weather * under;
        r = wood[0] * shade;
        g = wood[1] * shade;
        b = wood[2] * shade;
      }
      const vignette = 1 - 0.22 * ((x - cx) ** 2 + (y - cy) ** 2) / (maxRadius * maxRadius);
      const i = (y * width + x) * 3;
      data[i] = b * vignette;
      data[i + 1] = g * vignette;
      data[i + 2] = r * vignette;
    }
  }

  for (const stain of stains) {
    forDisc(frame, stain.x, stain.y, stain.r * 1.6, (i, cover) => {
      const keep = 1 - stain.dark * cover;
      data[i] = (data[i] as number) * keep * 0.95;
      data[i + 1] = (data[i + 1] as number) * keep * 0.98;
      data[i + 2] = (data[i + 2] as number) * keep;
    }, slotBottom);
  }
  for (const speck of specks) {
    forDisc(frame, speck.x, speck.y, speck.r, (i, cover) => {
      data[i] = (data[i] as number) * (1 - cover) + speck.colour[2] * cover;
      data[i + 1] = (data[i + 1] as number) * (1 - cover) + speck.colour[1] * cover;
      data[i + 2] = (data[i + 2] as number) * (1 - cover) + speck.colour[0] * cover;
    }, slotBottom);
  }
  return frame;
}

function forDisc(frame: BgrFrame, cx: number, cy: number, radius: number, paint: (index: number, cover: number) => void, top: number): void {
  const y0 = Math.max(Math.ceil(top), Math.floor(cy - radius));
  const y1 = Math.min(frame.height - 1, Math.ceil(cy + radius));
  const x0 = Math.max(0, Math.floor(cx - radius));
  const x1 = Math.min(frame.width - 1, Math.ceil(cx + radius));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy) / radius;
      if (d >= 1) continue;
      paint((y * frame.width + x) * 3, Math.min(1, (1 - d) * 2.5));
    }
  }
}
