import { describe, expect, it } from 'vitest';
import { blitSprite, createFrame, drawShadow, type BlitOptions, type BgrFrame } from './raster.ts';
import { drawBeeSprites } from './sprites.ts';

const sprites = drawBeeSprites(40, 0);
const base: BlitOptions = {
  x: 50, y: 50, heading: 0, length: 40, clipTop: 0, darkFrom: 0, darkTo: 0, darkest: 1, blurX: 0, blurY: 0, gain: [1, 1, 1], low: 0, high: 255,
};

function grey(): BgrFrame {
  const frame = createFrame(100, 100);
  frame.data.fill(128);
  return frame;
}

/** Bounding box of the pixels that differ from plain grey. */
function changed(frame: BgrFrame): { x0: number; x1: number; y0: number; y1: number; count: number } {
  const box = { x0: Infinity, x1: -Infinity, y0: Infinity, y1: -Infinity, count: 0 };
  for (let y = 0; y < frame.height; y++) {
    for (let x = 0; x < frame.width; x++) {
      const i = (y * frame.width + x) * 3;
      if (frame.data[i] === 128 && frame.data[i + 1] === 128 && frame.data[i + 2] === 128) continue;
      box.count++;
      box.x0 = Math.min(box.x0, x);
      box.x1 = Math.max(box.x1, x);
      box.y0 = Math.min(box.y0, y);
      box.y1 = Math.max(box.y1, y);
    }
  }
  return box;
}

describe('bee sprites', () => {
  it('hold premultiplied colour with alpha in 0..1, yellow stripes and dark parts', () => {
    const { pixels } = sprites.folded;
    let yellow = 0;
    let dark = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      const a = pixels[i + 3] as number;
      expect(a).toBeGreaterThanOrEqual(0);
      expect(a).toBeLessThanOrEqual(1.0001);
      if (a < 0.9) continue;
      const [r, g, b] = [pixels[i] as number, pixels[i + 1] as number, pixels[i + 2] as number].map((c) => c / a) as [number, number, number];
      if (r > 150 && g > 100 && b < 90) yellow++;
      if (r < 70 && g < 60 && b < 50) dark++;
    }
    expect(yellow).toBeGreaterThan(20);
    expect(dark).toBeGreaterThan(20);
  });

  it('spread the wings when they beat', () => {
    const opaqueRows = (sprite: typeof sprites.folded) => sprite.maxV - sprite.minV;
    expect(opaqueRows(sprites.buzzA)).toBeGreaterThan(opaqueRows(sprites.folded) * 1.5);
  });
});

describe('blitSprite', () => {
  it('draws a bee along its heading, about as long as asked', () => {
    const across = grey();
    blitSprite(across, sprites.folded, base);
    const a = changed(across);
    expect(a.x1 - a.x0).toBeGreaterThan(36);
    expect(a.x1 - a.x0).toBeLessThan(60);
    expect(a.y1 - a.y0).toBeLessThan(a.x1 - a.x0);

    const down = grey();
    blitSprite(down, sprites.folded, { ...base, heading: Math.PI / 2 });
    const d = changed(down);
    expect(d.y1 - d.y0).toBeGreaterThan(d.x1 - d.x0);
  });

  it('hides what is above the wall and smears a moving bee', () => {
    const clipped = grey();
    blitSprite(clipped, sprites.folded, { ...base, heading: -Math.PI / 2, clipTop: 50 });
    expect(changed(clipped).y0).toBeGreaterThanOrEqual(50);

    const still = grey();
    blitSprite(still, sprites.folded, base);
    const moving = grey();
    blitSprite(moving, sprites.folded, { ...base, blurX: 16 });
    expect(changed(moving).x1 - changed(moving).x0).toBeGreaterThan(changed(still).x1 - changed(still).x0 + 10);
  });

  it('keeps written values within the sensor headroom', () => {
    const frame = grey();
    blitSprite(frame, sprites.folded, { ...base, gain: [3, 3, 3], low: 20, high: 235 });
    expect(Math.min(...frame.data)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...frame.data)).toBeLessThanOrEqual(235);
    expect(changed(frame).count).toBeGreaterThan(100);
  });
});

describe('drawShadow', () => {
  it('darkens an ellipse, most at its centre', () => {
    const frame = grey();
    drawShadow(frame, { x: 50, y: 50, heading: 0, halfLength: 20, halfWidth: 8, softness: 0.4, strength: 0.5, clipTop: 0, low: 0 });
    const at = (x: number, y: number) => frame.data[(y * 100 + x) * 3] as number;
    expect(at(50, 50)).toBe(64);
    expect(at(64, 50)).toBeLessThan(128);
    expect(at(50, 64)).toBe(128);
    expect(at(5, 5)).toBe(128);
  });
});
