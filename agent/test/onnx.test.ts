import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Frame } from '../src/capture/frame.ts';
import { MotionGatedDetector } from '../src/detect/gated.ts';
import { MotionDetector } from '../src/detect/motion.ts';
import { detectLayout, OnnxDetector, sessionOptions } from '../src/detect/onnx.ts';
import { centerNetModel, centerNetPairModel, yoloConstantModel } from './helpers/onnx-builder.ts';
import { tempDir } from './helpers/media.ts';

const dir = tempDir('onnx');
afterAll(() => dir.cleanup());

function save(name: string, bytes: Uint8Array): string {
  const path = join(dir.path, name);
  writeFileSync(path, bytes);
  return path;
}

function blackFrame(width: number, height: number, format: 'gray' | 'rgb24'): Frame {
  return { data: new Uint8Array(width * height * (format === 'gray' ? 1 : 3)), width, height, format, index: 0, timestampMs: 0 };
}

function dot(frame: Frame, x: number, y: number, rgb: [number, number, number], radius = 2): void {
  const channels = frame.format === 'gray' ? 1 : 3;
  for (let dy = -radius; dy <= radius; dy++) {
    for (let dx = -radius; dx <= radius; dx++) {
      const p = ((y + dy) * frame.width + (x + dx)) * channels;
      if (channels === 1) frame.data[p] = rgb[0];
      else frame.data.set(rgb, p);
    }
  }
}

/** A black 640×480 frame at that time with a red dot at each point. */
function dotsAt(timestampMs: number, ...dots: [number, number][]): Frame {
  const frame = { ...blackFrame(640, 480, 'rgb24'), timestampMs };
  for (const [x, y] of dots) dot(frame, x, y, [255, 0, 0]);
  return frame;
}

/** The movements a detector reports for a frame, left to right. */
const movesOf = async (detector: OnnxDetector, frame: Frame) => (await detector.detect(frame)).sort((a, b) => a.x - b.x).map((d) => d.movement);

/** The input layouts of a two-frame model: float, 8-bit bytes in rows, 8-bit bytes in 2×2 blocks. */
const PAIR_INPUTS = [
  ['float', undefined],
  ['byte (8-bit model)', 'rows'],
  ['2x2-block byte (8-bit model)', 'blocks'],
] as const;

describe('ONNX detector on onnxruntime-node', () => {
  // The same boxes as in the pure decoder test, now produced by a real model run; zero-score anchors pad N
  // beyond the row count, as in real exports (8400 anchors).
  const padding = new Array<number>(20).fill(0);
  const yoloRows = [
    [320, 324, 100, 500, 500, ...padding],
    [280, 282, 400, 300, 40, ...padding],
    [40, 40, 30, 30, 30, ...padding],
    [16, 16, 12, 12, 12, ...padding],
    [0.9, 0.8, 0.1, 0.2, 0.9, ...padding],
    [0.05, 0.1, 0.95, 0.1, 0.1, ...padding],
  ];

  it('recognises a YOLO export and decodes it with letterbox mapping and NMS', async () => {
    const detector = await OnnxDetector.load(save('yolo.onnx', yoloConstantModel({ width: 640, height: 640 }, yoloRows)), { scoreThreshold: 0.35, iouThreshold: 0.45 });
    expect(detector.layout).toBe('yolo');
    expect(detector.inputSize).toEqual({ width: 640, height: 640 });
    const detections = await detector.detect(blackFrame(640, 480, 'rgb24'));
    expect(detections.map((d) => [Math.round(d.x), Math.round(d.y), Math.round(d.w), Math.round(d.h)])).toEqual([
      [100, 320, 30, 12],
      [320, 200, 40, 16],
    ]);
    // A 1280×720 frame is letterboxed at scale 0.5 with 140 px bars: the same outputs land elsewhere.
    const wide = await detector.detect(blackFrame(1280, 720, 'gray'));
    expect(wide.find((d) => d.score > 0.85 && d.score < 0.91)).toMatchObject({ x: 640, y: 280, w: 80, h: 32 });
    await detector.release();
  });

  it('filters YOLO classes', async () => {
    const detector = await OnnxDetector.load(save('yolo-classes.onnx', yoloConstantModel({ width: 640, height: 640 }, yoloRows)), { classes: [1] });
    expect((await detector.detect(blackFrame(640, 480, 'gray'))).map((d) => Math.round(d.x))).toEqual([100]);
  });

  it('recognises the CenterNet layout and finds bees where the frame has them', async () => {
    const detector = await OnnxDetector.load(save('centernet.onnx', centerNetModel({ width: 320, height: 240 }, { w: 20, h: 8 })), { scoreThreshold: 0.5 });
    expect(detector.layout).toBe('centernet');
    const frame = blackFrame(640, 480, 'rgb24');
    dot(frame, 100, 60, [255, 0, 0]);
    dot(frame, 500, 400, [255, 0, 0]);
    dot(frame, 300, 300, [0, 255, 0]); // green: not in the channel the model reads, so RGB order matters
    const detections = await detector.detect(frame);
    expect(detections).toHaveLength(2);
    const sorted = [...detections].sort((a, b) => a.x - b.x);
    expect(Math.abs(sorted[0]!.x - 100)).toBeLessThanOrEqual(8);
    expect(Math.abs(sorted[0]!.y - 60)).toBeLessThanOrEqual(8);
    expect(Math.abs(sorted[1]!.x - 500)).toBeLessThanOrEqual(8);
    expect(Math.abs(sorted[1]!.y - 400)).toBeLessThanOrEqual(8);
    expect(sorted[0]).toMatchObject({ w: 40, h: 16 }); // input pixels × 2 (stretched 640→320)
  });

  it.each(PAIR_INPUTS)('feeds a two-frame %s model this frame and the one before, a first frame or one after a long gap paired with itself', async (_kind, bytes) => {
    const model = centerNetPairModel({ width: 320, height: 240 }, { w: 20, h: 8 }, 10, { bytes });
    const detector = await OnnxDetector.load(save(`centernet-pair-${bytes}.onnx`, model), { scoreThreshold: 0.5 });
    expect(detector.seesMovement).toBe(true);
    const moves = (frame: Frame) => movesOf(detector, frame);
    // Input pixels × 2 (stretched 640→320): a dot new since the previous frame reads 20 frame px, an old one 0.
    expect(await moves(dotsAt(0, [100, 60]))).toEqual([{ dx: 0, dy: 0 }]);
    expect(await moves(dotsAt(33, [100, 60], [500, 400]))).toEqual([{ dx: 0, dy: 0 }, { dx: 20, dy: 20 }]);
    expect(await moves(dotsAt(67, [100, 60], [500, 400]))).toEqual([{ dx: 0, dy: 0 }, { dx: 0, dy: 0 }]);
    expect(await moves(dotsAt(100, [300, 300]))).toEqual([{ dx: 20, dy: 20 }]);
    // Three seconds later (a reconnect): nothing before it is trusted.
    expect(await moves(dotsAt(3100, [100, 60]))).toEqual([{ dx: 0, dy: 0 }]);
  });

  it.each(PAIR_INPUTS)('pairs a two-frame %s model with a frame it was only shown, not run on', async (_kind, bytes) => {
    const model = centerNetPairModel({ width: 320, height: 240 }, { w: 20, h: 8 }, 10, { bytes });
    const detector = await OnnxDetector.load(save(`centernet-pair-remember-${bytes}.onnx`, model), { scoreThreshold: 0.5 });
    const moves = (frame: Frame) => movesOf(detector, frame);
    expect(await moves(dotsAt(0, [100, 60]))).toEqual([{ dx: 0, dy: 0 }]);
    // The dot at 500,400 arrives in a frame the model is only shown: by the next frame it is old.
    detector.remember(dotsAt(33, [100, 60], [500, 400]));
    expect(await moves(dotsAt(67, [100, 60], [500, 400]))).toEqual([{ dx: 0, dy: 0 }, { dx: 0, dy: 0 }]);
    detector.remember(dotsAt(100, [100, 60]));
    expect(await moves(dotsAt(133, [100, 60], [300, 300]))).toEqual([{ dx: 0, dy: 0 }, { dx: 20, dy: 20 }]);
  });

  it.each([
    ['float', undefined],
    ['byte', 'rows'],
    ['2x2-block byte', 'blocks'],
  ] as const)('looks at a region of the frame at the scale it is given, and maps detections and movements back to frame px (%s input)', async (_kind, bytes) => {
    // 320×160 frame px into a 640×320 input: twice the scale, as a zoom-2 slot model on a 640×480 camera with a
    // 320×240 whole-frame model.
    const region = { x: 100, y: 40, width: 320, height: 160, inputWidth: 640, inputHeight: 320 };
    const detector = await OnnxDetector.load(save(`any-size-${bytes}.onnx`, centerNetPairModel('any', { w: 20, h: 8 }, 10, { bytes })), { scoreThreshold: 0.5, region: () => region });
    const first = blackFrame(640, 480, 'rgb24');
    dot(first, 200, 100, [255, 0, 0]);
    dot(first, 500, 400, [255, 0, 0]); // outside the region: never seen
    dot(first, 60, 100, [255, 0, 0]); // left of the region: never seen
    const found = await detector.detect(first);
    expect(found).toHaveLength(1);
    expect(Math.abs(found[0]!.x - 200)).toBeLessThanOrEqual(4);
    expect(Math.abs(found[0]!.y - 100)).toBeLessThanOrEqual(4);
    expect(found[0]).toMatchObject({ w: 10, h: 4, movement: { dx: 0, dy: 0 } }); // input px ÷ 2
    const second = { ...first, data: first.data.slice(), timestampMs: 33 };
    dot(second, 300, 150, [255, 0, 0]);
    const moved = (await detector.detect(second)).sort((a, b) => a.x - b.x);
    expect(moved.map((d) => d.movement)).toEqual([{ dx: 0, dy: 0 }, { dx: 5, dy: 5 }]); // 10 input px ÷ 2
  });

  it('crops a region at the frame\'s corner instead of shrinking the whole frame into the input', async () => {
    // The input is as large as the frame, but it holds the top-left quarter at twice the scale.
    const region = { x: 0, y: 0, width: 320, height: 240, inputWidth: 640, inputHeight: 480 };
    const detector = await OnnxDetector.load(save('any-size-corner.onnx', centerNetPairModel('any', { w: 20, h: 8 }, 10)), { scoreThreshold: 0.5, region: () => region });
    const frame = blackFrame(640, 480, 'rgb24');
    dot(frame, 200, 100, [255, 0, 0]);
    const found = await detector.detect(frame);
    expect(found).toHaveLength(1);
    expect(Math.abs(found[0]!.x - 200)).toBeLessThanOrEqual(4);
    expect(Math.abs(found[0]!.y - 100)).toBeLessThanOrEqual(4);
  });

  it('explains that a model of fixed input size cannot look at a region of another size', async () => {
    const region = { x: 0, y: 40, width: 640, height: 160, inputWidth: 640, inputHeight: 160 };
    const detector = await OnnxDetector.load(save('fixed-pair.onnx', centerNetPairModel({ width: 320, height: 240 }, { w: 20, h: 8 }, 10)), { region: () => region });
    await expect(detector.detect(blackFrame(640, 480, 'rgb24'))).rejects.toThrow('the model takes only 320x240 inputs, but its region needs 640x160');
  });

  it('refuses a model with a movement output but a three-channel input', () => {
    const io = (name: string, shape: number[]) => ({ name, isTensor: true as const, type: 'float32' as const, shape });
    expect(() => detectLayout([io('images', [1, 3, 240, 320])], [io('heatmap', [1, 1, 120, 160]), io('size', [1, 2, 120, 160]), io('movement', [1, 2, 120, 160])])).toThrow(
      'model input images must be [1, 6, H, W] (this frame and the previous one, for its movement output), got [1, 3, 240, 320]',
    );
  });

  it('reads a uint8 input as channels last, and says so when its shape is not', () => {
    const io = (name: string, shape: (number | string)[], type: 'float32' | 'uint8' = 'float32') => ({ name, isTensor: true as const, type, shape });
    const outputs = [io('heatmap', [1, 1, 'h', 'w']), io('size', [1, 2, 'h', 'w']), io('movement', [1, 2, 'h', 'w'])];
    expect(detectLayout([io('images', [1, 240, 320, 6], 'uint8')], outputs)).toMatchObject({ pixels: 'bytes', block: 1, inputWidth: 320, inputHeight: 240, frames: 2, fixedSize: true });
    expect(detectLayout([io('images', [1, 120, 160, 24], 'uint8')], outputs)).toMatchObject({ pixels: 'bytes', block: 2, inputWidth: 320, inputHeight: 240, fixedSize: true });
    expect(detectLayout([io('images', [1, 'height', 'width', 6], 'uint8')], outputs, { width: 608, height: 176 })).toMatchObject({ pixels: 'bytes', block: 1, inputWidth: 608, inputHeight: 176, fixedSize: false });
    expect(() => detectLayout([io('images', [1, 6, 240, 320], 'uint8')], outputs)).toThrow('model input images must be [1, H, W, 6] or, in 2x2 blocks, [1, H/2, W/2, 24] (uint8) (this frame and the previous one, for its movement output), got [1, 6, 240, 320]');
    // An 8-bit copy's one `heads` output holds the movement planes too: a two-frame model.
    expect(detectLayout([io('images', [1, 120, 160, 24], 'uint8')], [io('heads', [1, 28, 60, 80])])).toMatchObject({ layout: 'centernet', heads: true, frames: 2, block: 2 });
    expect(() => detectLayout([io('images', [1, 640, 640, 3], 'uint8')], [io('output0', [1, 5, 8400])])).toThrow('model input images takes bytes: only CenterNet models are read that way (a YOLO export takes float32)');
  });

  it('reports a skipped frame of a two-frame model as standing still', async () => {
    const model = await OnnxDetector.load(save('centernet-pair-gated.onnx', centerNetPairModel({ width: 320, height: 240 }, { w: 20, h: 8 }, 10)), { scoreThreshold: 0.5 });
    // The gate's motion measure is scripted (moving, moving, still); the real one is exercised in the test above.
    const foreground = [0.1, 0.1, 0];
    const scripted = { measureGray: () => ({ foregroundFraction: foreground.shift() ?? 0 }) } as unknown as MotionDetector;
    const gated = new MotionGatedDetector(model, scripted, 0.0005);
    const empty = blackFrame(640, 480, 'rgb24');
    expect(await gated.detect(empty)).toEqual([]);
    const arrived = { ...blackFrame(640, 480, 'rgb24'), timestampMs: 33 };
    dot(arrived, 100, 60, [255, 0, 0], 8);
    expect((await gated.detect(arrived)).map((d) => d.movement)).toEqual([{ dx: 20, dy: 20 }]);
    const still = await gated.detect({ ...arrived, timestampMs: 67 });
    expect(gated.skippedFrames).toBe(1);
    expect(still.map((d) => d.movement)).toEqual([{ dx: 0, dy: 0 }]);
  });

  it('skips inference on still frames when motion-gated, reusing the last detections', async () => {
    const model = await OnnxDetector.load(save('centernet-gated.onnx', centerNetModel({ width: 320, height: 240 }, { w: 20, h: 8 })), { scoreThreshold: 0.5 });
    const gated = new MotionGatedDetector(model, new MotionDetector(), 0.0005);
    const still = blackFrame(640, 480, 'rgb24');
    dot(still, 100, 60, [255, 0, 0], 8);
    const first = await gated.detect(still);
    expect(first).toHaveLength(1);
    for (let i = 0; i < 5; i++) expect(await gated.detect(still)).toEqual(first);
    expect(gated.skippedFrames).toBe(5);
    const moved = blackFrame(640, 480, 'rgb24');
    dot(moved, 140, 60, [255, 0, 0], 8);
    const after = await gated.detect(moved);
    expect(gated.inferredFrames).toBe(2);
    expect(Math.abs(after[0]!.x - 140)).toBeLessThanOrEqual(8);
  });

  it('explains a model it cannot use', async () => {
    const tensor = (name: string, shape: number[]) => ({ name, isTensor: true as const, type: 'float32' as const, shape });
    const input = [tensor('images', [1, 3, 640, 640])];
    expect(() => detectLayout(input, [tensor('output0', [1, 8400, 84])])).toThrow(/looks transposed/);
    expect(() => detectLayout(input, [tensor('a', [1, 10]), tensor('b', [1, 10])])).toThrow(/unrecognised model outputs a \[1, 10\], b \[1, 10\]/);
    expect(() => detectLayout([{ name: 'images', isTensor: true, type: 'float32', shape: [1, 3, 'h', 'w'] }], [tensor('output0', [1, 5, 10])])).toThrow(/dynamic size/);
    await expect(OnnxDetector.load(join(dir.path, 'missing.onnx'))).rejects.toThrow(/cannot load ONNX model .*missing\.onnx/);
  });

  // The exact kernel is slower, and onnxruntime would take it on CPUs with VNNI too (onnx-x86-overflow.test.ts).
  it('has onnxruntime take its exact 8-bit kernel only on x86 without VNNI', () => {
    const exact = { session: { x64quantprecision: '1' } };
    expect(sessionOptions(1, { arch: 'x64', flags: new Set(['avx2']) })).toMatchObject({ intraOpNumThreads: 1, extra: exact });
    expect(sessionOptions(1, { arch: 'x64', flags: new Set(['avx2', 'avx512_vnni']) }).extra).toBeUndefined();
    expect(sessionOptions(undefined, { arch: 'arm64', flags: undefined })).toEqual({ executionProviders: ['cpu'], graphOptimizationLevel: 'all' });
  });
});

describe('createDetector', () => {
  it('builds a motion-gated ONNX detector from the config', async () => {
    const { createDetector } = await import('../src/detect/factory.ts');
    const { resolveConfig } = await import('../src/config/config.ts');
    const model = save('factory.onnx', centerNetModel({ width: 320, height: 240 }, { w: 20, h: 8 }));
    const config = resolveConfig({
      file: { hiveId: 1, boxId: 2, source: { url: 'clip.mp4' }, cloud: { url: 'http://127.0.0.1:1', token: 't' }, detector: { kind: 'onnx', model } },
      env: {},
    });
    const detector = await createDetector(config);
    expect(detector.describe()).toBe(`onnx centernet (${model}), motion-gated`);
    expect(detector).toBeInstanceOf(MotionGatedDetector);
  });

  it('adds the slot pass when the config names a slot model, and takes its bees inside the band', async () => {
    const { createDetector } = await import('../src/detect/factory.ts');
    const { resolveConfig } = await import('../src/config/config.ts');
    const whole = save('whole-pair.onnx', centerNetPairModel({ width: 320, height: 240 }, { w: 20, h: 8 }, 10));
    const slot = save('slot-pair.onnx', centerNetPairModel('any', { w: 30, h: 12 }, 10));
    const zone = [[100, 100], [540, 100], [540, 160], [100, 160]];
    const config = resolveConfig({
      file: { hiveId: 1, boxId: 2, source: { url: 'clip.mp4' }, cloud: { url: 'http://127.0.0.1:1', token: 't' }, counting: { zone }, detector: { kind: 'onnx', model: whole, motionGate: false, slot: { model: slot } } },
      env: {},
    });
    expect(config.detector.slot).toEqual({ model: slot, zoom: 2, marginLengths: 1.5, wholeEvery: 1 });
    const detector = await createDetector(config);
    expect(detector.describe()).toBe(`onnx centernet (${whole}), slot pass ×2 (${slot})`);
    const frame = blackFrame(640, 480, 'rgb24');
    dot(frame, 300, 130, [255, 0, 0], 3); // in the zone: the slot model's box (30×12 input px at scale 1)
    dot(frame, 300, 400, [255, 0, 0], 3); // far below it: the whole-frame model's (20×8 input px at scale 0.5)
    const found = (await detector.detect(frame)).sort((a, b) => a.y - b.y);
    expect(found.map((d) => [d.w, d.h])).toEqual([[30, 12], [40, 16]]);
    expect(Math.abs(found[0]!.x - 300)).toBeLessThanOrEqual(4);
    expect(Math.abs(found[1]!.y - 400)).toBeLessThanOrEqual(8);
  });
});
