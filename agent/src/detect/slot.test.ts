import { describe, expect, it } from 'vitest';
import type { Frame } from '../capture/frame.ts';
import { MotionGatedDetector } from './gated.ts';
import { MotionDetector } from './motion.ts';
import { mergeSlotDetections, SlotRefinedDetector, slotWindow, trustedArea } from './slot.ts';
import type { Detection, Detector } from './types.ts';

const zone = [[70, 84], [570, 84], [570, 166], [70, 166]];
const bee = (x: number, y: number, score = 0.9): Detection => ({ x, y, w: 40, h: 20, score });

describe('slotWindow', () => {
  it('grows the zone by the margin and rounds the input to the stride at the exact scale', () => {
    const window = slotWindow({ zone, frameWidth: 640, frameHeight: 480, marginPx: 40, scaleX: 1, scaleY: 1, multiple: 16 });
    // 30..610 is 580 px wide and 44..206 is 162 tall: 592 by 176 at scale 1, centred on the same middle.
    expect(window).toEqual({ x: 24, y: 37, width: 592, height: 176, inputWidth: 592, inputHeight: 176 });
  });

  it('starts the band on a whole frame pixel, so that a crop at scale 1 copies pixels', () => {
    // 44..207 is 163 tall: 176 at scale 1 would start at 37.5 when centred.
    const window = slotWindow({ zone: [[70, 84], [570, 84], [570, 167], [70, 167]], frameWidth: 640, frameHeight: 480, marginPx: 40, scaleX: 1, scaleY: 1, multiple: 16 });
    expect(window.y).toBe(38);
    expect(window.height).toBe(176);
  });

  it('keeps the band inside the frame, and no wider than the frame rounded down to the stride', () => {
    const window = slotWindow({ zone: [[0, 0], [640, 0], [640, 30], [0, 30]], frameWidth: 640, frameHeight: 480, marginPx: 40, scaleX: 1, scaleY: 1, multiple: 16 });
    expect(window.x).toBe(0);
    expect(window.width).toBe(640);
    expect(window.y).toBe(0);
    expect(window.inputHeight).toBe(80);
  });

  it('works in frame px at scales other than 1 (a 1280x720 camera into a zoom-2 model of a 320x240 one)', () => {
    const window = slotWindow({ zone: [[200, 150], [1000, 150], [1000, 260], [200, 260]], frameWidth: 1280, frameHeight: 720, marginPx: 60, scaleX: 0.5, scaleY: 480 / 720, multiple: 16 });
    expect(window.inputWidth % 16).toBe(0);
    expect(window.inputHeight % 16).toBe(0);
    expect(window.width * 0.5).toBeCloseTo(window.inputWidth, 9);
    expect(window.height * (480 / 720)).toBeCloseTo(window.inputHeight, 9);
    expect(window.x).toBeLessThanOrEqual(140);
    expect(window.x + window.width).toBeGreaterThanOrEqual(1060);
    expect(window.y).toBeLessThanOrEqual(90);
    expect(window.y + window.height).toBeGreaterThanOrEqual(320);
  });
});

describe('trustedArea', () => {
  it('insets the band where it lies inside the frame, not at the frame edges', () => {
    expect(trustedArea({ x: 0, y: 44, width: 640, height: 176, inputWidth: 640, inputHeight: 176 }, 640, 480, 20)).toEqual({ left: 0, right: 640, top: 64, bottom: 200 });
  });
});

describe('mergeSlotDetections', () => {
  const area = { left: 0, right: 640, top: 64, bottom: 200 };

  it('takes the slot model inside the area and the whole-frame model outside it', () => {
    const merged = mergeSlotDetections([bee(100, 100, 0.8), bee(300, 400, 0.7)], [bee(98, 101, 0.9), bee(120, 100, 0.6), bee(300, 300, 0.99)], area, 20);
    expect(merged).toEqual([bee(98, 101, 0.9), bee(300, 400, 0.7), bee(120, 100, 0.6)]);
  });

  it('drops a whole-frame bee just outside the area that the slot model found just inside it', () => {
    const merged = mergeSlotDetections([bee(200, 204, 0.8)], [bee(200, 197, 0.7)], area, 20);
    expect(merged).toEqual([bee(200, 197, 0.7)]);
  });

  it('keeps a clear whole-frame bee beside a faint slot peak', () => {
    const merged = mergeSlotDetections([bee(200, 204, 0.9)], [bee(200, 197, 0.2)], area, 20);
    expect(merged).toHaveLength(2);
  });

  it('passes an empty frame through', () => {
    expect(mergeSlotDetections([], [], area, 20)).toEqual([]);
  });
});

describe('SlotRefinedDetector', () => {
  it('runs both detectors on each frame and merges their detections', async () => {
    const frame = { width: 640, height: 480 } as Frame;
    const seen: string[] = [];
    const fixed = (name: string, found: Detection[]): Detector => ({
      detect: async () => {
        seen.push(name);
        return found;
      },
    });
    const window = () => ({ x: 0, y: 44, width: 640, height: 176, inputWidth: 640, inputHeight: 176 });
    const detector = new SlotRefinedDetector(fixed('whole', [bee(100, 100), bee(100, 300)]), fixed('slot', [bee(102, 99, 0.95)]), window, 20);
    expect(await detector.detect(frame)).toEqual([bee(102, 99, 0.95), bee(100, 300)]);
    expect(seen).toEqual(['whole', 'slot']);
  });

  it('with wholeEvery 2, runs the whole-frame model on every other frame, shows it the frames between and says where it looked', async () => {
    const frame = (timestampMs: number) => ({ width: 640, height: 480, timestampMs }) as Frame;
    const calls: string[] = [];
    const whole = {
      detect: async (f: Frame) => {
        calls.push(`whole ${f.timestampMs}`);
        return [bee(100, 300), bee(300, 62)];
      },
      remember: (f: Frame) => void calls.push(`remember ${f.timestampMs}`),
    };
    const slot: Detector = { detect: async () => [bee(102, 99, 0.95), bee(300, 60, 0.8)] };
    const window = () => ({ x: 0, y: 44, width: 640, height: 176, inputWidth: 640, inputHeight: 176 });
    const detector = new SlotRefinedDetector(whole, slot, window, 20, 2);
    const area = { left: 0, right: 640, top: 64, bottom: 200 };
    const results = [];
    for (const t of [0, 33, 67, 100]) results.push({ found: await detector.detect(frame(t)), looked: detector.lastLooked() });
    expect(calls).toEqual(['whole 0', 'remember 33', 'whole 67', 'remember 100']);
    // Whole frames: merged, as with every frame. Between them: the slot model's bees inside its trusted area only.
    expect(results[0]).toEqual({ found: [bee(102, 99, 0.95), bee(100, 300), bee(300, 62)], looked: undefined });
    expect(results[1]).toEqual({ found: [bee(102, 99, 0.95)], looked: area });
    expect(results[2]!.looked).toBeUndefined();
    expect(results[3]!.looked).toEqual(area);
    expect(() => new SlotRefinedDetector(whole, slot, window, 20, 0)).toThrow('wholeEvery must be a whole number ≥ 1, got 0');
  });

  it('behind the motion gate, a still frame repeats where the last inference looked', async () => {
    // The gate's motion measure is scripted (moving, moving, still).
    const foreground = [0.1, 0.1, 0];
    const scripted = { measureGray: () => ({ foregroundFraction: foreground.shift() ?? 0 }) } as unknown as MotionDetector;
    const window = () => ({ x: 0, y: 44, width: 640, height: 176, inputWidth: 640, inputHeight: 176 });
    const model = (found: Detection[]): Detector => ({ detect: async () => found });
    const gated = new MotionGatedDetector(new SlotRefinedDetector(model([bee(100, 300)]), model([bee(102, 99)]), window, 20, 2), scripted, 0.001);
    const frame = { width: 640, height: 480, format: 'rgb24', data: new Uint8Array(640 * 480 * 3) } as Frame;
    await gated.detect(frame);
    expect(gated.lastLooked()).toBeUndefined();
    await gated.detect(frame);
    const looked = { left: 0, right: 640, top: 64, bottom: 200 };
    expect(gated.lastLooked()).toEqual(looked);
    expect(await gated.detect(frame)).toEqual([bee(102, 99)]);
    expect(gated.skippedFrames).toBe(1);
    expect(gated.lastLooked()).toEqual(looked);
  });

  it('releases both models, behind the motion gate too', async () => {
    const released: string[] = [];
    const model = (name: string): Detector => ({ detect: async () => [], release: async () => void released.push(name) });
    const window = () => ({ x: 0, y: 44, width: 640, height: 176, inputWidth: 640, inputHeight: 176 });
    const gated = new MotionGatedDetector(new SlotRefinedDetector(model('whole'), model('slot'), window, 20), new MotionDetector(), 0.001);
    await gated.release();
    expect(released.sort()).toEqual(['slot', 'whole']);
    // A detector without anything to free (the motion detector) is passed over.
    await expect(new MotionGatedDetector({ detect: async () => [] }, new MotionDetector(), 0.001).release()).resolves.toBeUndefined();
  });
});
