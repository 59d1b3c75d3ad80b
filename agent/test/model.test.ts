import { readFileSync } from 'node:fs';
import { findScenario, renderClip, withOverrides, type GroundTruth } from '@hivegate/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FfmpegCapture } from '../src/capture/capture.ts';
import { FLOAT_MODEL_PATH, INT8_MODEL_PATH, SLOT_DEFAULTS, SLOT_INT8_MODEL_PATH, SLOT_MODEL_PATH } from '../src/config/config.ts';
import { OnnxDetector } from '../src/detect/onnx.ts';
import { slotGeometry, trustedArea } from '../src/detect/slot.ts';
import { insideArea } from '../src/detect/types.ts';
import { DetectionAccumulator } from '../src/eval/mot.ts';
import { agreement, detectEveryFrame } from './helpers/agreement.ts';
import { tempDir } from './helpers/media.ts';

// The shipped model on a clip it was never trained on (a held-out scenario of the simulator), through the real
// capture and onnxruntime: it must find the bees where the ground truth has them.
describe('shipped bee detector', () => {
  const dir = tempDir('model');
  let truth: GroundTruth;
  let clip: string;

  beforeAll(async () => {
    const scenario = withOverrides(findScenario('heldout-evening-rush')!, { durationSeconds: 2 });
    const rendered = await renderClip({ scenario, outDir: dir.path, ids: { hiveId: 'h', boxId: 'b' } });
    truth = JSON.parse(readFileSync(rendered.truthPath, 'utf8')) as GroundTruth;
    clip = rendered.clipPath;
  }, 60_000);
  afterAll(() => dir.cleanup());

  it('is a two-frame CenterNet model with a 320×240 input that finds the bees of a held-out scene and how far they moved', async () => {
    const detector = await OnnxDetector.load(FLOAT_MODEL_PATH);
    expect(detector.layout).toBe('centernet');
    expect(detector.inputSize).toEqual({ width: 320, height: 240 });
    expect(detector.seesMovement).toBe(true);
    const gate = Math.max(10, truth.beeLengthPx / 2);
    const score = new DetectionAccumulator(gate);
    const movementErrors: number[] = [];
    const capture = new FfmpegCapture({ source: clip, width: truth.width, height: truth.height, fps: truth.fps, pixelFormat: 'rgb24' });
    await capture.start();
    for await (const frame of capture) {
      // Every frame goes in (the model pairs each with the one before); every fourth is scored.
      const detections = await detector.detect(frame);
      if (frame.index % 4 !== 0 || frame.index === 0) continue;
      const boxes = truth.frames[frame.index]!.boxes;
      score.update(boxes, detections);
      const before = new Map(truth.frames[frame.index - 1]!.boxes.map((b) => [b.trackId, b]));
      for (const box of boxes) {
        const was = before.get(box.trackId);
        const found = detections.find((d) => Math.hypot(d.x - box.x, d.y - box.y) < gate);
        if (was && found?.movement) movementErrors.push(Math.hypot(found.movement.dx - (box.x - was.x), found.movement.dy - (box.y - was.y)));
      }
    }
    await detector.release();
    expect(score.truePositives).toBeGreaterThan(100);
    expect(score.recall).toBeGreaterThan(0.85);
    expect(score.precision).toBeGreaterThan(0.9);
    movementErrors.sort((a, b) => a - b);
    expect(movementErrors.length).toBeGreaterThan(100);
    // Frame pixels; bees here walk 1–10 px a frame and fly faster.
    expect(movementErrors[Math.floor(movementErrors.length / 2)]).toBeLessThan(2);
  }, 60_000);

  it('has a slot model that finds the bees of the band around the entrance at full resolution', async () => {
    const { window, edgePx } = slotGeometry({ ...SLOT_DEFAULTS, zone: truth.entranceZone, beeLengthPx: truth.beeLengthPx }, { width: 320, height: 240 });
    const band = window(truth.width, truth.height);
    const area = trustedArea(band, truth.width, truth.height, edgePx);
    const detector = await OnnxDetector.load(SLOT_MODEL_PATH, { region: window });
    expect(detector.seesMovement).toBe(true);
    const inArea = (b: { x: number; y: number }) => insideArea(b, area);
    const score = new DetectionAccumulator(Math.max(10, truth.beeLengthPx / 2));
    const capture = new FfmpegCapture({ source: clip, width: truth.width, height: truth.height, fps: truth.fps, pixelFormat: 'rgb24' });
    await capture.start();
    for await (const frame of capture) {
      const detections = await detector.detect(frame);
      if (frame.index % 4 !== 0 || frame.index === 0) continue;
      score.update(truth.frames[frame.index]!.boxes.filter(inArea), detections.filter(inArea));
    }
    await detector.release();
    expect(score.truePositives).toBeGreaterThan(50);
    expect(score.recall).toBeGreaterThan(0.85);
    expect(score.precision).toBeGreaterThan(0.9);
  }, 60_000);

  it('ships 8-bit copies of both models that find the bees their float originals find, where they find them', async () => {
    const { window } = slotGeometry({ ...SLOT_DEFAULTS, zone: truth.entranceZone, beeLengthPx: truth.beeLengthPx }, { width: 320, height: 240 });
    const detectAll = (path: string, region?: typeof window) => detectEveryFrame(path, { path: clip, ...truth }, region);
    for (const [float, int8, region] of [[FLOAT_MODEL_PATH, INT8_MODEL_PATH, undefined], [SLOT_MODEL_PATH, SLOT_INT8_MODEL_PATH, window]] as const) {
      const { clear, matched, medianDistance } = agreement(await detectAll(float, region), await detectAll(int8, region));
      expect(clear).toBeGreaterThan(100);
      expect(matched).toBeGreaterThan(0.97);
      expect(medianDistance).toBeLessThan(0.5);
    }
  }, 60_000);

  it('gives, run on every other frame and shown the frames between, what it gives run on every frame', async () => {
    const everyFrame = await OnnxDetector.load(INT8_MODEL_PATH);
    const everyOther = await OnnxDetector.load(INT8_MODEL_PATH);
    const capture = new FfmpegCapture({ source: clip, width: truth.width, height: truth.height, fps: truth.fps, pixelFormat: 'rgb24' });
    await capture.start();
    let compared = 0;
    let moving = 0;
    for await (const frame of capture) {
      const expected = await everyFrame.detect(frame);
      if (frame.index % 2 === 1) {
        everyOther.remember(frame);
        continue;
      }
      // The same input bytes, so the same detections to the last bit, movements included.
      expect(await everyOther.detect(frame)).toEqual(expected);
      compared += expected.length;
      moving += expected.filter((d) => Math.hypot(d.movement!.dx, d.movement!.dy) > 2).length;
    }
    await Promise.all([everyFrame.release(), everyOther.release()]);
    expect(compared).toBeGreaterThan(100);
    expect(moving).toBeGreaterThan(20);
  }, 60_000);

  it('knows which of its files run 8-bit kernels (the start-up log names the kernel only for those)', async () => {
    const eightBit = async (path: string) => {
      const detector = await OnnxDetector.load(path, { inputWidth: 320, inputHeight: 240 });
      await detector.release();
      return detector.eightBit;
    };
    expect(await eightBit(FLOAT_MODEL_PATH)).toBe(false);
    expect(await eightBit(SLOT_MODEL_PATH)).toBe(false);
    expect(await eightBit(INT8_MODEL_PATH)).toBe(true);
    expect(await eightBit(SLOT_INT8_MODEL_PATH)).toBe(true);
  });
});
