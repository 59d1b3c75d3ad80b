import { describe, expect, it } from 'vitest';
import type { Frame } from '../capture/frame.ts';
import { labelComponents } from './components.ts';
import { dilate, erode, MotionDetector, sampleToGray, shrinkToGray } from './motion.ts';

const W = 640;
const H = 480;

function seeded(seed: number): () => number {
  return () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
}

/** A textured landing board (fixed noise) with dark elliptic bees drawn on it. */
function scene(bees: { x: number; y: number; length?: number; angle?: number }[], options: { brightness?: number; index?: number; noisePixels?: number } = {}): Frame {
  const random = seeded(7);
  const data = new Uint8Array(W * H);
  for (let i = 0; i < data.length; i++) data[i] = Math.min(255, 150 + Math.floor(random() * 20) + (options.brightness ?? 0));
  for (const bee of bees) {
    const a = (bee.length ?? 40) / 2;
    const b = a * 0.4;
    const angle = bee.angle ?? 0;
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    for (let y = Math.floor(bee.y - a); y <= bee.y + a; y++) {
      for (let x = Math.floor(bee.x - a); x <= bee.x + a; x++) {
        if (x < 0 || y < 0 || x >= W || y >= H) continue;
        const u = (x - bee.x) * cos + (y - bee.y) * sin;
        const v = -(x - bee.x) * sin + (y - bee.y) * cos;
        if ((u / a) ** 2 + (v / b) ** 2 <= 1) data[y * W + x] = 40;
      }
    }
  }
  const noise = seeded(99 + (options.index ?? 0));
  for (let k = 0; k < (options.noisePixels ?? 0); k++) data[Math.floor(noise() * W * H)] = 255;
  return { data, width: W, height: H, format: 'gray', index: options.index ?? 0, timestampMs: 0 };
}

function toRgb(frame: Frame): Frame {
  const rgb = new Uint8Array(frame.data.length * 3);
  for (let i = 0; i < frame.data.length; i++) rgb.fill(frame.data[i]!, i * 3, i * 3 + 3);
  return { ...frame, data: rgb, format: 'rgb24' };
}

describe('labelComponents', () => {
  it('joins 8-connected pixels, including a U shape that needs a label merge', () => {
    const mask = Uint8Array.from([
      1, 0, 1, 0, 0,
      1, 0, 1, 0, 1,
      1, 1, 1, 0, 0,
      0, 0, 0, 1, 0,
    ]);
    const components = labelComponents(mask, 5, 4);
    expect(components).toHaveLength(2);
    // The U and the pixel touching it diagonally at (3,3) form one blob; (4,1) stands alone.
    expect(components[0]).toMatchObject({ area: 8, minX: 0, maxX: 3, minY: 0, maxY: 3 });
    expect(components[1]).toMatchObject({ area: 1, minX: 4, maxX: 4, minY: 1, maxY: 1 });
  });
  it('returns nothing for an empty mask', () => {
    expect(labelComponents(new Uint8Array(12), 4, 3)).toEqual([]);
  });
});

describe('erode and dilate', () => {
  /** The 3×3 definition, pixel by pixel: outside the mask counts as empty. */
  function reference(mask: Uint8Array, width: number, height: number, isErode: boolean): Uint8Array {
    const at = (x: number, y: number) => (x < 0 || y < 0 || x >= width || y >= height ? 0 : mask[y * width + x]!);
    const out = new Uint8Array(mask.length);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        let all = 1;
        let any = 0;
        for (let dy = -1; dy <= 1; dy++) {
          for (let dx = -1; dx <= 1; dx++) {
            all &= at(x + dx, y + dy);
            any |= at(x + dx, y + dy);
          }
        }
        out[y * width + x] = isErode ? all : any;
      }
    }
    return out;
  }

  // Widths that are a multiple of 4 take the four-pixels-at-a-time path, the others the pixel path.
  for (const [width, height] of [[12, 7], [13, 7], [4, 1], [320, 240]] as const) {
    it(`match the 3×3 definition on a ${width}×${height} mask, borders included`, () => {
      let seed = width * 31 + height;
      const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) % 100;
      const mask = Uint8Array.from({ length: width * height }, () => (random() < 70 ? 1 : 0));
      const scratch = new Uint8Array(mask.length);
      const eroded = Uint8Array.from(mask);
      erode(eroded, scratch, width, height);
      expect(Array.from(eroded)).toEqual(Array.from(reference(mask, width, height, true)));
      const dilated = Uint8Array.from({ length: width * height }, () => (random() < 10 ? 1 : 0));
      const expected = reference(dilated, width, height, false);
      dilate(dilated, scratch, width, height);
      expect(Array.from(dilated)).toEqual(Array.from(expected));
    });
  }
});

describe('MotionDetector', () => {
  it('finds moving bees at their positions and ignores single-pixel noise', () => {
    const detector = new MotionDetector({ beeLengthPx: 40 });
    detector.analyse(scene([], { noisePixels: 200 }));
    const result = detector.analyse(scene([{ x: 200, y: 150 }, { x: 450, y: 300, angle: Math.PI / 2 }], { noisePixels: 200, index: 1 }));
    expect(result.detections).toHaveLength(2);
    const [a, b] = [...result.detections].sort((p, q) => p.x - q.x);
    expect(a!.x).toBeCloseTo(200, -0.5);
    expect(a!.y).toBeCloseTo(150, -0.5);
    expect(a!.w).toBeGreaterThan(a!.h); // lying horizontally
    expect(b!.x).toBeCloseTo(450, -0.5);
    expect(b!.y).toBeCloseTo(300, -0.5);
    expect(b!.h).toBeGreaterThan(b!.w);
    expect(a!.score).toBeGreaterThan(0.8);
    expect(result.foregroundFraction).toBeGreaterThan(0);
    expect(result.foregroundFraction).toBeLessThan(0.02);
  });

  it('works on RGB frames the same as on gray ones', () => {
    const detector = new MotionDetector();
    detector.analyse(toRgb(scene([])));
    const detections = detector.analyse(toRgb(scene([{ x: 320, y: 240 }], { index: 1 }))).detections;
    expect(detections).toHaveLength(1);
    expect(detections[0]!.x).toBeCloseTo(320, -0.5);
  });

  it('drops blobs far below bee size', () => {
    const detector = new MotionDetector({ beeLengthPx: 40 });
    detector.analyse(scene([]));
    expect(detector.analyse(scene([{ x: 300, y: 200, length: 8 }], { index: 1 })).detections).toEqual([]);
  });

  it('splits two touching bees into two detections', () => {
    const detector = new MotionDetector({ beeLengthPx: 40 });
    detector.analyse(scene([]));
    const detections = detector.analyse(scene([{ x: 300, y: 200 }, { x: 338, y: 200 }], { index: 1 })).detections;
    expect(detections).toHaveLength(2);
    const xs = detections.map((d) => d.x).sort((p, q) => p - q);
    expect(xs[0]).toBeCloseTo(300, -1);
    expect(xs[1]).toBeCloseTo(338, -1);
  });

  it('relearns the background on a sudden global light change instead of reporting motion everywhere', () => {
    const detector = new MotionDetector();
    detector.analyse(scene([]));
    const flash = detector.analyse(scene([{ x: 100, y: 100 }], { brightness: 60, index: 1 }));
    expect(flash.recalibrated).toBe(true);
    expect(flash.detections).toEqual([]);
    expect(detector.recalibrations).toBe(1);
    // In the new light, a bee that moves is found again right away.
    const after = detector.analyse(scene([{ x: 400, y: 300 }], { brightness: 60, index: 2 }));
    expect(after.recalibrated).toBe(false);
    expect(after.detections.map((d) => Math.round(d.x / 10))).toContain(40);
  });

  it('measures a gray picture given by the caller like its own, restarting when its size changes', () => {
    const detector = new MotionDetector();
    const still = new Uint8Array(160 * 120).fill(90);
    expect(detector.measureGray(still, 160, 120)).toEqual({ foregroundFraction: 0, settled: false });
    expect(detector.measureGray(still, 160, 120)).toEqual({ foregroundFraction: 0, settled: true });
    const moved = Uint8Array.from(still);
    moved.fill(200, 0, 160 * 6);
    expect(detector.measureGray(moved, 160, 120).foregroundFraction).toBeCloseTo(0.05, 5);
    expect(detector.measureGray(new Uint8Array(80 * 60), 80, 60).settled).toBe(false);
    expect(() => detector.measureGray(still, 80, 60)).toThrow('gray picture must be 80×60 bytes, got 19200');
  });

  // Regression: a fixed threshold of 25 took bees walking on a dim board (dusk) for still frames, so the motion gate
  // skipped the model for seconds and tracks froze while the bees walked into the hive.
  it('lowers the threshold in proportion to a dark picture, down to minThreshold', () => {
    const dusk = new Uint8Array(160 * 120).fill(50);
    const walked = Uint8Array.from(dusk);
    walked.fill(32, 60 * 160 + 40, 60 * 160 + 52); // a bee 18 levels darker than the board
    const fixed = new MotionDetector({ referenceLuma: 0 });
    const scaled = new MotionDetector();
    for (const detector of [fixed, scaled]) detector.measureGray(dusk, 160, 120);
    expect(fixed.threshold).toBe(25);
    expect(scaled.threshold).toBeCloseTo((25 * 50) / 128, 5);
    expect(fixed.measureGray(walked, 160, 120).foregroundFraction).toBe(0);
    expect(scaled.measureGray(walked, 160, 120).foregroundFraction).toBeCloseTo(12 / (160 * 120), 5);

    const night = new MotionDetector();
    night.measureGray(new Uint8Array(160 * 120).fill(5), 160, 120);
    expect(night.threshold).toBe(8);
    const daylight = new MotionDetector();
    daylight.measureGray(new Uint8Array(160 * 120).fill(200), 160, 120);
    expect(daylight.threshold).toBe(25);
  });

  it('lets a still scene fade into the background', () => {
    const detector = new MotionDetector({ learningRate: 0.2, foregroundLearningRate: 0.2 });
    detector.analyse(scene([]));
    let last = detector.analyse(scene([{ x: 300, y: 200 }]));
    expect(last.detections).toHaveLength(1);
    for (let i = 0; i < 30; i++) last = detector.analyse(scene([{ x: 300, y: 200 }]));
    expect(last.detections).toEqual([]);
  });

  it('rejects a negative option by name', () => {
    expect(() => new MotionDetector({ threshold: -1 })).toThrow('motion.threshold must be a non-negative number');
  });
});

describe('shrinkToGray', () => {
  const pixels = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + ((i * i) % 97)) % 256);
  /** Luma of the block mean, in the detector's fixed-point weights. */
  const expected = (frame: Frame, factor: number, ox: number, oy: number) => {
    let sum = 0;
    for (let dy = 0; dy < factor; dy++) {
      for (let dx = 0; dx < factor; dx++) {
        const p = ((oy * factor + dy) * frame.width + ox * factor + dx) * 3;
        sum += 77 * frame.data[p]! + 150 * frame.data[p + 1]! + 29 * frame.data[p + 2]!;
      }
    }
    return Math.floor(sum / (factor * factor * 256));
  };

  it.each([2, 3])('averages %i×%i colour blocks to luma', (factor) => {
    const frame: Frame = { data: pixels(12 * 6 * 3), width: 12, height: 6, format: 'rgb24', index: 0, timestampMs: 0 };
    const out = new Uint8Array((12 / factor) * (6 / factor));
    shrinkToGray(frame, factor, out, 12 / factor, 6 / factor);
    const want = Array.from(out, (_, i) => expected(frame, factor, i % (12 / factor), Math.floor(i / (12 / factor))));
    expect(Array.from(out)).toEqual(want);
  });

  it('samples each 4×4 colour block by its centre 2×2 for the motion gate, and box-averages odd factors', () => {
    const frame: Frame = { data: pixels(16 * 8 * 3), width: 16, height: 8, format: 'rgb24', index: 0, timestampMs: 0 };
    const out = new Uint8Array(4 * 2);
    sampleToGray(frame, 4, out, 4, 2);
    const centre = (ox: number, oy: number) => {
      let sum = 0;
      for (const [dx, dy] of [[1, 1], [2, 1], [1, 2], [2, 2]] as const) {
        const p = ((oy * 4 + dy) * 16 + ox * 4 + dx) * 3;
        sum += 77 * frame.data[p]! + 150 * frame.data[p + 1]! + 29 * frame.data[p + 2]!;
      }
      return sum >> 10;
    };
    expect(Array.from(out)).toEqual(Array.from(out, (_, i) => centre(i % 4, Math.floor(i / 4))));
    const odd = new Uint8Array(4 * 2);
    const box = new Uint8Array(4 * 2);
    const wide: Frame = { ...frame, data: pixels(12 * 6 * 3), width: 12, height: 6 };
    sampleToGray(wide, 3, odd, 4, 2);
    shrinkToGray(wide, 3, box, 4, 2);
    expect(odd).toEqual(box);
  });

  it('samples gray frames too', () => {
    const frame: Frame = { data: Uint8Array.from({ length: 8 * 4 }, (_, i) => i), width: 8, height: 4, format: 'gray', index: 0, timestampMs: 0 };
    const out = new Uint8Array(2);
    sampleToGray(frame, 4, out, 2, 1);
    // Centre 2×2 of the first block: pixels 9, 10, 17, 18.
    expect(Array.from(out)).toEqual([(9 + 10 + 17 + 18) >> 2, (13 + 14 + 21 + 22) >> 2]);
  });

  it('averages gray blocks', () => {
    const frame: Frame = { data: Uint8Array.from([0, 10, 20, 30, 40, 50, 60, 70]), width: 4, height: 2, format: 'gray', index: 0, timestampMs: 0 };
    const out = new Uint8Array(2);
    shrinkToGray(frame, 2, out, 2, 1);
    expect(Array.from(out)).toEqual([25, 45]);
  });
});
