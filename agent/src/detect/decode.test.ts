import { describe, expect, it } from 'vitest';
import type { Frame } from '../capture/frame.ts';
import { decodeCenterNet, decodeCenterNetHeads, decodeYolo } from './decode.ts';
import { iou, nonMaxSuppression } from './nms.ts';
import { axisTaps, letterbox, stretch, toFramePixels, toInputBytes, toInputTensor, type ByteLayout, type InputMapping } from './preprocess.ts';

describe('letterbox and stretch', () => {
  it('fits a 4:3 frame into a square input with bars above and below', () => {
    expect(letterbox(640, 480, 640, 640)).toEqual({ scaleX: 1, scaleY: 1, padX: 0, padY: 80 });
    expect(letterbox(1280, 720, 640, 640)).toEqual({ scaleX: 0.5, scaleY: 0.5, padX: 0, padY: 140 });
    expect(stretch(640, 480, 320, 240)).toEqual({ scaleX: 0.5, scaleY: 0.5, padX: 0, padY: 0 });
  });
  it('maps boxes back to frame pixels', () => {
    expect(toFramePixels({ x: 320, y: 280, w: 40, h: 16 }, letterbox(1280, 720, 640, 640))).toEqual({ x: 640, y: 280, w: 80, h: 32 });
  });
});

describe('toInputTensor', () => {
  it('writes planar RGB in 0..1 and pads with gray', () => {
    const data = new Uint8Array(4 * 2 * 3);
    for (let i = 0; i < 8; i++) data.set([255, 0, 51], i * 3); // red with a little blue
    const frame: Frame = { data, width: 4, height: 2, format: 'rgb24', index: 0, timestampMs: 0 };
    const tensor = toInputTensor(frame, 4, 4, letterbox(4, 2, 4, 4));
    const plane = 16;
    expect(tensor[0]).toBeCloseTo(114 / 255); // top bar
    expect(tensor[4 + 1]).toBeCloseTo(1); // row 1 is frame row 0: red
    expect(tensor[plane + 5]).toBeCloseTo(0); // green
    expect(tensor[2 * plane + 5]).toBeCloseTo(0.2); // blue
    expect(tensor[3 * 4]).toBeCloseTo(114 / 255); // bottom bar
  });
  it('replicates gray into three channels', () => {
    const frame: Frame = { data: new Uint8Array([0, 255, 0, 255]), width: 2, height: 2, format: 'gray', index: 0, timestampMs: 0 };
    const tensor = toInputTensor(frame, 2, 2, stretch(2, 2, 2, 2));
    expect(Array.from(tensor)).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
  });
  it('shrinks by averaging every frame pixel an input pixel covers', () => {
    // 12×6 gray frame into 4×2 (a 3×3 block per input pixel), each block holding 0..8 in some order.
    const data = new Uint8Array(12 * 6);
    for (let y = 0; y < 6; y++) for (let x = 0; x < 12; x++) data[y * 12 + x] = ((y % 3) * 3 + (x % 3)) * 10 + (x >= 6 ? 100 : 0);
    const frame: Frame = { data, width: 12, height: 6, format: 'gray', index: 0, timestampMs: 0 };
    const tensor = toInputTensor(frame, 4, 2, stretch(12, 6, 4, 2));
    expect(Array.from(tensor.subarray(0, 8)).map((v) => Math.round(v * 255 * 1000) / 1000)).toEqual([40, 40, 140, 140, 40, 40, 140, 140]);
  });
  it('weights partly covered frame pixels by their share (non-integer factors)', () => {
    // 3 pixels into 2: the first input pixel covers pixel 0 and half of pixel 1.
    expect(axisTaps(3, 2 / 3, 0, 0, 2)).toEqual({ first: Int32Array.from([0, 2, 4]), index: Int32Array.from([0, 1, 1, 2]), weight: Float32Array.from([2 / 3, 1 / 3, 1 / 3, 2 / 3]) });
    // Enlarging interpolates between the two nearest pixels.
    expect(axisTaps(2, 2, 0, 0, 4)).toEqual({ first: Int32Array.from([0, 1, 3, 5, 6]), index: Int32Array.from([0, 0, 1, 0, 1, 1]), weight: Float32Array.from([1, 0.75, 0.25, 0.25, 0.75, 1]) });
  });
  it('takes a shortcut for whole-block shrinks that gives the same values as the general path', () => {
    const random = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7919 + ((i * i) % 251)) % 256);
    for (const [width, height, format] of [[8, 6, 'rgb24'], [8, 4, 'rgb24'], [16, 6, 'rgb24'], [8, 6, 'gray']] as const) {
      const frame: Frame = { data: random(width * height * (format === 'gray' ? 1 : 3)), width, height, format, index: 0, timestampMs: 0 };
      const fast = toInputTensor(frame, 4, 2, stretch(width, height, 4, 2));
      // A negligible pad rules the shortcut out: the general path on the same pixels.
      const general = toInputTensor(frame, 4, 2, { ...stretch(width, height, 4, 2), padX: 1e-12 });
      expect(Array.from(fast).map((v) => v.toFixed(5))).toEqual(Array.from(general).map((v) => v.toFixed(5)));
    }
  });
  it('copies a crop at full resolution, and averages blocks of a crop, as the general path does', () => {
    const random = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7919 + ((i * i) % 251)) % 256);
    const frame: Frame = { data: random(16 * 12 * 3), width: 16, height: 12, format: 'rgb24', index: 0, timestampMs: 0 };
    // A 6×4 crop whose top-left is frame pixel (3, 5), at scale 1 and at scale 1/2.
    for (const scale of [1, 0.5]) {
      const mapping = { scaleX: scale, scaleY: scale, padX: -3 * scale, padY: -5 * scale };
      const fast = toInputTensor(frame, 6 * scale, 4 * scale, mapping);
      const general = toInputTensor(frame, 6 * scale, 4 * scale, { ...mapping, padX: mapping.padX + 1e-12 });
      expect(Array.from(fast).map((v) => v.toFixed(5))).toEqual(Array.from(general).map((v) => v.toFixed(5)));
    }
    const copy = toInputTensor(frame, 6, 4, { scaleX: 1, scaleY: 1, padX: -3, padY: -5 });
    const p = (5 * 16 + 3) * 3;
    expect([copy[0], copy[24], copy[48]].map((v) => Math.round(v! * 255))).toEqual([frame.data[p], frame.data[p + 1], frame.data[p + 2]]);
  });
  it('takes the general path for a crop that reaches past the frame', () => {
    const frame: Frame = { data: new Uint8Array(4 * 4 * 3).fill(200), width: 4, height: 4, format: 'rgb24', index: 0, timestampMs: 0 };
    const tensor = toInputTensor(frame, 4, 4, { scaleX: 1, scaleY: 1, padX: -2, padY: 0 });
    expect(tensor[1]).toBeCloseTo(200 / 255);
    expect(tensor[2]).toBeCloseTo(114 / 255); // past the right edge: padding, not the next row's pixels
  });
  it('treats an RGB frame channel by channel', () => {
    const data = new Uint8Array(2 * 2 * 3);
    for (let i = 0; i < 4; i++) data.set([i * 60, 255, 0], i * 3);
    const tensor = toInputTensor({ data, width: 2, height: 2, format: 'rgb24', index: 0, timestampMs: 0 }, 1, 1, stretch(2, 2, 1, 1));
    expect(Array.from(tensor).map((v) => Math.round(v * 255))).toEqual([90, 255, 0]);
  });
});

describe('toInputBytes', () => {
  const random = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7919 + ((i * i) % 251)) % 256);
  /** The float path's values times 255, pixel by pixel in rows (RGB each). */
  const floatValues = (frame: Frame, width: number, height: number, mapping: InputMapping) => {
    const tensor = toInputTensor(frame, width, height, mapping);
    const plane = width * height;
    return Array.from({ length: plane * 3 }, (_, k) => tensor[(k % 3) * plane + Math.floor(k / 3)]! * 255);
  };
  /** Frame `slot`'s RGB out of a byte input, pixel by pixel in rows, whatever its layout. */
  const readBack = (data: Uint8Array, width: number, height: number, layout: ByteLayout, slot: number) => {
    const values: number[] = [];
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const { frames, block: b } = layout;
        const blockIndex = Math.floor(y / b) * (width / b) + Math.floor(x / b);
        const o = (blockIndex * frames + slot) * b * b * 3 + ((y % b) * b + (x % b)) * 3;
        values.push(data[o]!, data[o + 1]!, data[o + 2]!);
      }
    }
    return values;
  };
  // Halfway values may go either way here (the float path's own rounding decides which side of .5 they land on);
  // the last test pins the integer paths' exact halves to even.
  const expectNearest = (bytes: number[], values: number[]) => {
    expect(bytes).toHaveLength(values.length);
    expect(bytes.map((b, k) => ({ k, b, v: values[k]! })).filter(({ b, v }) => Math.abs(b - v) > 0.5 + 1e-4)).toEqual([]);
  };
  const cases = () => {
    const list: [Frame, number, number, InputMapping][] = [];
    for (const format of ['rgb24', 'gray'] as const) {
      const frame: Frame = { data: random(16 * 12 * (format === 'gray' ? 1 : 3)), width: 16, height: 12, format, index: 0, timestampMs: 0 };
      list.push(
        [frame, 6, 4, { scaleX: 1, scaleY: 1, padX: -3, padY: -5 }], // a crop copied (the slot pass)
        [frame, 8, 6, stretch(16, 12, 8, 6)], // 2×2 blocks (640×480 into 320×240)
        [frame, 4, 4, stretch(16, 12, 4, 4)], // 4×3 blocks (1280×720 into 320×240)
        [frame, 6, 6, stretch(16, 12, 6, 6)], // shrinks by whole ratios (8/3 and 2), not whole blocks
        [frame, 8, 8, { scaleX: 1 / 2, scaleY: 2 / 3, padX: -1, padY: -2 }], // a 1280×720 frame's slot band: 2 and 3/2 from (2, 3)
        [frame, 8, 8, { scaleX: 1 / 2, scaleY: 1, padX: 0, padY: -2 }], // one frame row per input row
        [frame, 8, 4, { scaleX: 1 / 2, scaleY: 2 / 5, padX: 0, padY: 0 }], // three frame rows per input row (5/2)
        [frame, 18, 6, stretch(16, 12, 18, 6)], // enlarged across: the general resampler
        [frame, 16, 16, letterbox(16, 12, 16, 16)], // letterbox bars
      );
    }
    return list;
  };

  it('gives the float path\'s values as the nearest bytes, in rows or in 2×2 blocks, on every path', () => {
    for (const block of [1, 2] as const) {
      for (const [frame, width, height, mapping] of cases()) {
        const layout: ByteLayout = { frames: 1, block };
        const into = { data: new Uint8Array(width * height * 3), slot: 0 };
        toInputBytes(frame, width, height, mapping, layout, into);
        expectNearest(readBack(into.data, width, height, layout, 0), floatValues(frame, width, height, mapping));
      }
    }
  });

  it('writes a two-frame model\'s input: this frame first in one target and last in the other, nothing else touched', () => {
    for (const block of [1, 2] as const) {
      for (const [frame, width, height, mapping] of cases()) {
        const layout: ByteLayout = { frames: 2, block };
        const current = new Uint8Array(width * height * 6).fill(7);
        const next = new Uint8Array(width * height * 6).fill(9);
        toInputBytes(frame, width, height, mapping, layout, { data: current, slot: 0 }, { data: next, slot: 1 });
        const written = readBack(current, width, height, layout, 0);
        expectNearest(written, floatValues(frame, width, height, mapping));
        expect(readBack(next, width, height, layout, 1)).toEqual(written);
        expect(readBack(current, width, height, layout, 1).every((v) => v === 7)).toBe(true);
        expect(readBack(next, width, height, layout, 0).every((v) => v === 9)).toBe(true);
      }
    }
  });

  /** The same bytes one byte into a buffer: not on a 4-byte boundary, so they are read (or written) byte by byte. */
  const offWordBoundary = (bytes: Uint8Array) => {
    const shifted = new Uint8Array(bytes.length + 1).subarray(1);
    shifted.set(bytes);
    return shifted;
  };

  it.each([
    ['halves a frame (2x2 blocks)', 32, 8, 16, 4],
    ['averages 4x3 blocks', 32, 12, 8, 4],
  ] as const)('%s four bytes at a time where the frame allows, as byte by byte', (_case, frameWidth, frameHeight, width, height) => {
    for (const block of [1, 2] as const) {
      const layout: ByteLayout = { frames: 2, block };
      const data = random(frameWidth * frameHeight * 3);
      const frameOf = (pixels: Uint8Array): Frame => ({ data: pixels, width: frameWidth, height: frameHeight, format: 'rgb24', index: 0, timestampMs: 0 });
      const shrink = (pixels: Uint8Array, out = new Uint8Array(width * height * 6)) => {
        toInputBytes(frameOf(pixels), width, height, stretch(frameWidth, frameHeight, width, height), layout, { data: out, slot: 1 });
        return Array.from(out);
      };
      const words = shrink(data);
      expect(words).toEqual(shrink(offWordBoundary(data)));
      // Targets off word boundaries: the frame is still read four bytes at a time, the bytes written one by one.
      // (The 2×2-block layout once took the next pixel to lie a whole block further on there.)
      expect(shrink(data, offWordBoundary(new Uint8Array(width * height * 6)))).toEqual(words);
      expectNearest(readBack(new Uint8Array(words), width, height, layout, 1), floatValues(frameOf(data), width, height, stretch(frameWidth, frameHeight, width, height)));
    }
  });

  it('averages a shrink by whole ratios exactly, halves to even', () => {
    // Two columns into one, three rows into two: input row 0 is 2/3 of frame row 0 and 1/3 of row 1, input row 1
    // the rest of row 1 and 2/3 of row 2. Column pairs sum to 0, 2, 3 (row 0), 0, 3, 3 (row 1) and 3, 6, 1 (row 2).
    const gray = Uint8Array.from([0, 0, 1, 1, 1, 2, 0, 0, 1, 2, 2, 1, 2, 1, 3, 3, 0, 1]);
    const frame: Frame = { data: gray, width: 6, height: 3, format: 'gray', index: 0, timestampMs: 0 };
    const into = { data: new Uint8Array(3 * 2 * 3), slot: 0 };
    toInputBytes(frame, 3, 2, { scaleX: 1 / 2, scaleY: 2 / 3, padX: 0, padY: 0 }, { frames: 1, block: 1 }, into);
    // Row 0: 0/6, (2·2 + 3)/6 = 1.17, (2·3 + 3)/6 = 1.5 (up to 2); row 1: (0 + 2·3)/6, (3 + 2·6)/6 = 2.5 (down to 2), 5/6.
    expect(Array.from(into.data).filter((_, k) => k % 3 === 0)).toEqual([0, 1, 2, 1, 2, 1]);
  });

  it('refuses odd sides for an input in 2×2 blocks', () => {
    const frame: Frame = { data: random(6 * 4 * 3), width: 6, height: 4, format: 'rgb24', index: 0, timestampMs: 0 };
    expect(() => toInputBytes(frame, 3, 2, stretch(6, 4, 3, 2), { frames: 1, block: 2 }, { data: new Uint8Array(18), slot: 0 })).toThrow('an input in 2x2 blocks needs even sides, got 3x2');
  });

  it('copies a crop in 2x2 blocks four bytes at a time where it lies on word boundaries, with the bytes of one at a time', () => {
    const layout: ByteLayout = { frames: 2, block: 2 };
    const data = random(16 * 12 * 3);
    const shifted = offWordBoundary(data);
    // 8 wide from (4, 2): frame byte 108, on a word boundary. 6 wide: not two whole blocks at a time, so bytes.
    for (const width of [8, 6]) {
      const copy = (pixels: Uint8Array) => {
        const current = new Uint8Array(width * 4 * 6).fill(7);
        const next = new Uint8Array(width * 4 * 6).fill(9);
        toInputBytes({ data: pixels, width: 16, height: 12, format: 'rgb24', index: 0, timestampMs: 0 }, width, 4, { scaleX: 1, scaleY: 1, padX: -4, padY: -2 }, layout, { data: current, slot: 0 }, { data: next, slot: 1 });
        return [Array.from(current), Array.from(next)];
      };
      const [current, next] = copy(data);
      expect([current, next]).toEqual(copy(shifted));
      const crop = Array.from({ length: 4 }, (_, y) => Array.from(data.subarray(((2 + y) * 16 + 4) * 3, ((2 + y) * 16 + 4 + width) * 3))).flat();
      expect(readBack(new Uint8Array(current!), width, 4, layout, 0)).toEqual(crop);
      expect(readBack(new Uint8Array(next!), width, 4, layout, 1)).toEqual(crop);
      expect(readBack(new Uint8Array(current!), width, 4, layout, 1).every((v) => v === 7)).toBe(true);
      expect(readBack(new Uint8Array(next!), width, 4, layout, 0).every((v) => v === 9)).toBe(true);
    }
  });

  it('rounds a block mean that falls halfway to the even byte', () => {
    // 2×2 blocks of gray-ish RGB summing to 2, 6, 10 and 7: means 0.5, 1.5, 2.5 and 1.75.
    const sums = [2, 6, 10, 7];
    const data = new Uint8Array(8 * 2 * 3);
    sums.forEach((sum, block) => {
      const parts = [Math.floor(sum / 2), sum - Math.floor(sum / 2), 0, 0];
      parts.forEach((v, k) => data.fill(v, ((k >> 1) * 8 + block * 2 + (k & 1)) * 3, ((k >> 1) * 8 + block * 2 + (k & 1)) * 3 + 3));
    });
    const into = { data: new Uint8Array(4 * 3), slot: 0 };
    toInputBytes({ data, width: 8, height: 2, format: 'rgb24', index: 0, timestampMs: 0 }, 4, 1, stretch(8, 2, 4, 1), { frames: 1, block: 1 }, into);
    expect(Array.from(into.data)).toEqual([0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    // The same rows twice, into 2×2 blocks: the word path that writes a block's twelve bytes at once.
    const twice = new Uint8Array(data.length * 2);
    twice.set(data);
    twice.set(data, data.length);
    const blocks = { data: new Uint8Array(4 * 2 * 3), slot: 0 };
    toInputBytes({ data: twice, width: 8, height: 4, format: 'rgb24', index: 0, timestampMs: 0 }, 4, 2, stretch(8, 4, 4, 2), { frames: 1, block: 2 }, blocks);
    expect(readBack(blocks.data, 4, 2, { frames: 1, block: 2 }, 0)).toEqual([0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    // The same through the generic whole-block path (gray, 2×2 blocks).
    const gray = new Uint8Array(8 * 2);
    sums.forEach((sum, block) => [Math.floor(sum / 2), sum - Math.floor(sum / 2), 0, 0].forEach((v, k) => (gray[(k >> 1) * 8 + block * 2 + (k & 1)] = v)));
    toInputBytes({ data: gray, width: 8, height: 2, format: 'gray', index: 0, timestampMs: 0 }, 4, 1, stretch(8, 2, 4, 1), { frames: 1, block: 1 }, into);
    expect(Array.from(into.data)).toEqual([0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
  });
});

describe('nonMaxSuppression', () => {
  const box = (x: number, score: number, classId = 0) => ({ x, y: 0, w: 10, h: 10, score, classId });
  it('keeps the best of overlapping boxes and all separate ones', () => {
    const kept = nonMaxSuppression([box(0, 0.8), box(1, 0.9), box(50, 0.5)], 0.45);
    expect(kept.map((b) => b.score)).toEqual([0.9, 0.5]);
  });
  it('does not let different classes suppress each other when asked', () => {
    expect(nonMaxSuppression([box(0, 0.8, 0), box(1, 0.9, 1)], 0.45, (b) => b.classId)).toHaveLength(2);
  });
  it('computes IoU of centre-based boxes', () => {
    expect(iou(box(0, 1), box(5, 1))).toBeCloseTo(50 / 150);
    expect(iou(box(0, 1), box(20, 1))).toBe(0);
  });
});

describe('decodeYolo', () => {
  // Columns are anchors; rows cx, cy, w, h, class 0, class 1 (input pixels of a 640×640 letterboxed input).
  const rows = [
    [320, 324, 100, 500, 500],
    [280, 282, 400, 300, 40],
    [40, 40, 30, 30, 30],
    [16, 16, 12, 12, 12],
    [0.9, 0.8, 0.1, 0.2, 0.9],
    [0.05, 0.1, 0.95, 0.1, 0.1],
  ];
  const flat = Float32Array.from(rows.flat());
  const options = { scoreThreshold: 0.35, iouThreshold: 0.45, mapping: letterbox(640, 480, 640, 640), frameWidth: 640, frameHeight: 480 };
  it('thresholds, suppresses duplicates, drops centres in the padding and maps to frame pixels', () => {
    const detections = decodeYolo(flat, [1, 6, 5], options);
    expect(detections).toEqual([
      { x: 100, y: 320, w: 30, h: 12, score: expect.closeTo(0.95, 5) },
      { x: 320, y: 200, w: 40, h: 16, score: expect.closeTo(0.9, 5) },
    ]);
  });
  it('keeps only the wanted classes', () => {
    expect(decodeYolo(flat, [1, 6, 5], { ...options, classes: [0] }).map((d) => d.x)).toEqual([320]);
  });
  it('rejects a tensor of the wrong rank', () => {
    expect(() => decodeYolo(flat, [6, 5], options)).toThrow('YOLO output must be [1, 4+classes, N], got [6, 5]');
  });
});

describe('decodeCenterNet', () => {
  const w = 8;
  const h = 4;
  const size = new Float32Array(2 * w * h);
  size.fill(20, 0, w * h);
  size.fill(8, w * h);
  const options = { threshold: 0.5, inputWidth: 32, inputHeight: 16, mapping: stretch(64, 32, 32, 16) };
  it('finds 3×3 local maxima above the threshold and maps them to frame pixels', () => {
    const heatmap = new Float32Array(w * h);
    heatmap[1 * w + 2] = 0.9;
    heatmap[1 * w + 3] = 0.7; // shoulder of the same peak
    heatmap[3 * w + 6] = 0.6;
    heatmap[0 * w + 7] = 0.4; // below threshold
    const detections = decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], options);
    expect(detections).toEqual([
      { x: ((2 + 0.5) * 4) / 0.5, y: ((1 + 0.5) * 4) / 0.5, w: 40, h: 16, score: expect.closeTo(0.9, 5) },
      { x: ((6 + 0.5) * 4) / 0.5, y: ((3 + 0.5) * 4) / 0.5, w: 40, h: 16, score: expect.closeTo(0.6, 5) },
    ]);
  });
  it('gives one detection for a flat-topped peak', () => {
    const heatmap = new Float32Array(w * h);
    heatmap[1 * w + 2] = 0.8;
    heatmap[1 * w + 3] = 0.8;
    heatmap[2 * w + 2] = 0.8;
    expect(decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], options)).toHaveLength(1);
  });
  it('checks the size tensor matches the heatmap', () => {
    expect(() => decodeCenterNet(new Float32Array(w * h), [1, 1, h, w], size, [1, 2, h, w + 1], options)).toThrow(/size must be \[1, 2, 4, 8\]/);
  });
  /** A heatmap with one bee, at row 1, column 2, and a two-plane output with (x, y) at that cell. */
  const oneBee = () => {
    const heatmap = new Float32Array(w * h);
    heatmap[1 * w + 2] = 0.9;
    return heatmap;
  };
  const atTheBee = (x: number, y: number) => {
    const planes = new Float32Array(2 * w * h);
    planes[1 * w + 2] = x;
    planes[w * h + 1 * w + 2] = y;
    return planes;
  };

  it('moves each centre by the offset output when the model has one', () => {
    const heatmap = oneBee();
    const offset = atTheBee(1.5, -0.75); // input pixels
    const [bee] = decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], { ...options, offset: { data: offset, dims: [1, 2, h, w] } });
    expect(bee).toMatchObject({ x: ((2 + 0.5) * 4 + 1.5) / 0.5, y: ((1 + 0.5) * 4 - 0.75) / 0.5 });
    expect(() => decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], { ...options, offset: { data: offset, dims: [1, 1, h, w] } })).toThrow(/offset must be \[1, 2, 4, 8\]/);
  });

  it('reports the movement of each bee in frame pixels when the model has a movement output, none otherwise', () => {
    const heatmap = oneBee();
    const movement = atTheBee(3, -2); // input pixels
    const [bee] = decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], { ...options, movement: { data: movement, dims: [1, 2, h, w] } });
    expect(bee!.movement).toEqual({ dx: 6, dy: -4 }); // the mapping halves frame pixels
    expect(decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], options)[0]).not.toHaveProperty('movement');
    expect(() => decodeCenterNet(heatmap, [1, 1, h, w], size, [1, 2, h, w], { ...options, movement: { data: movement, dims: [1, 2, h, 4] } })).toThrow(/movement must be \[1, 2, 4, 8\]/);
  });
});

describe('decodeCenterNetHeads', () => {
  // A 16×8 output grid (heads at 8×4) over a 64×32 input, for a 128×64 frame.
  const gridW = 16;
  const gridH = 8;
  const options = { threshold: 0.5, inputWidth: 64, inputHeight: 32, mapping: stretch(128, 64, 64, 32) };
  const random = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => (((i + seed) * 7919 + ((i * i) % 251)) % 200) / 20 - 5);
  /** Seven planes on the output grid, packed as the last convolution gives them before DepthToSpace (CRD). */
  const pack = (planes: Float32Array[]) => {
    const heads = new Float32Array(28 * (gridW / 2) * (gridH / 2));
    const plane = (gridW / 2) * (gridH / 2);
    planes.forEach((values, p) => {
      for (let y = 0; y < gridH; y++) {
        for (let x = 0; x < gridW; x++) heads[(4 * p + 2 * (y % 2) + (x % 2)) * plane + Math.floor(y / 2) * (gridW / 2) + Math.floor(x / 2)] = values[y * gridW + x]!;
      }
    });
    return heads;
  };

  it('finds the bees the shuffled outputs give, with their sizes, offsets and movements, without shuffling', () => {
    const cells = gridW * gridH;
    const logits = random(cells, 1);
    const planes = [logits, ...[2, 3, 4, 5, 6, 7].map((seed) => random(cells, seed))];
    const sigmoid = Float32Array.from(logits, (v) => 1 / (1 + Math.exp(-v)));
    // The float graph: sigmoid heatmap, rectified size, and the other planes as they are.
    const size = new Float32Array([...planes[1]!, ...planes[2]!].map((v) => Math.max(0, v)));
    const expected = decodeCenterNet(sigmoid, [1, 1, gridH, gridW], size, [1, 2, gridH, gridW], {
      ...options,
      offset: { data: new Float32Array([...planes[3]!, ...planes[4]!]), dims: [1, 2, gridH, gridW] },
      movement: { data: new Float32Array([...planes[5]!, ...planes[6]!]), dims: [1, 2, gridH, gridW] },
    });
    const found = decodeCenterNetHeads(pack(planes), [1, 28, gridH / 2, gridW / 2], options);
    expect(expected.length).toBeGreaterThan(5);
    expect(found.map(({ score, ...rest }) => ({ ...rest, score: Number(score.toFixed(6)) }))).toEqual(expected.map(({ score, ...rest }) => ({ ...rest, score: Number(score.toFixed(6)) })));
    expect(found.every((d) => d.w >= 0 && d.h >= 0)).toBe(true);
  });

  it('reuses a scratch heatmap of the right size, and names the shape it needs', () => {
    const planes = Array.from({ length: 7 }, (_, p) => random(gridW * gridH, p));
    const kept = new Float32Array(gridW * gridH);
    const scratch = { heat: kept };
    expect(decodeCenterNetHeads(pack(planes), [1, 28, gridH / 2, gridW / 2], options, scratch)).toEqual(decodeCenterNetHeads(pack(planes), [1, 28, gridH / 2, gridW / 2], options));
    expect(scratch.heat).toBe(kept);
    const small = { heat: new Float32Array(4) };
    decodeCenterNetHeads(pack(planes), [1, 28, gridH / 2, gridW / 2], options, small);
    expect(small.heat).toHaveLength(gridW * gridH);
    expect(() => decodeCenterNetHeads(new Float32Array(20 * 32), [1, 20, 4, 8], options)).toThrow('heads must be [1, 28, H, W], got [1, 20, 4, 8]');
  });
});
