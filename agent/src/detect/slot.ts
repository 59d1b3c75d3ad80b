import type { Frame } from '../capture/frame.ts';
import type { InputRegion } from './onnx.ts';
import { insideArea, type Area, type Detection, type Detector } from './types.ts';

/**
 * The slot pass: a second model looks at a band around the entrance zone at a larger scale than the whole-frame
 * model, because that is where bees crowd, meet and swap, and where telling two close bees apart decides the
 * count. Inside the band its detections replace the whole-frame model's.
 */

export interface SlotWindowOptions {
  /** The counting zone, frame px. */
  zone: readonly (readonly number[])[];
  frameWidth: number;
  frameHeight: number;
  /** How far beyond the zone's bounding box the band reaches, frame px. */
  marginPx: number;
  /** Model input px per frame px: the whole-frame model's scale times the slot model's zoom. */
  scaleX: number;
  scaleY: number;
  /** The model's input sides must be multiples of this (its deepest stride). */
  multiple: number;
}

/**
 * The band the slot model sees, and its input size: the zone's bounding box grown by the margin, widened until
 * its input sides are whole multiples of the model's stride at exactly the requested scale, started on a whole frame
 * pixel and kept inside the frame (a band that would be wider than the frame is the frame's width, rounded down to
 * the multiple).
 */
export function slotWindow(options: SlotWindowOptions): InputRegion {
  const { zone, frameWidth, frameHeight, marginPx, scaleX, scaleY, multiple } = options;
  if (zone.length === 0) throw new Error('the slot pass needs an entrance zone');
  const xs = zone.map((p) => p[0]!);
  const ys = zone.map((p) => p[1]!);
  const axis = (low: number, high: number, frameSize: number, scale: number) => {
    const from = Math.max(0, low - marginPx);
    const to = Math.min(frameSize, high + marginPx);
    const fit = Math.max(multiple, Math.floor((frameSize * scale) / multiple) * multiple);
    const input = Math.min(fit, Math.max(multiple, Math.ceil(((to - from) * scale) / multiple) * multiple));
    const size = input / scale;
    // On whole frame pixels: at scale 1 the crop is then a copy, not an interpolation that blurs every pixel by half.
    const start = Math.min(Math.max(0, Math.round((from + to) / 2 - size / 2)), Math.max(0, Math.floor(frameSize - size)));
    return { start, size, input };
  };
  const x = axis(Math.min(...xs), Math.max(...xs), frameWidth, scaleX);
  const y = axis(Math.min(...ys), Math.max(...ys), frameHeight, scaleY);
  return { x: x.start, y: y.start, width: x.size, height: y.size, inputWidth: x.input, inputHeight: y.input };
}

/** The slot pass's settings, as the agent's config gives them. */
export interface SlotSettings {
  zone: readonly (readonly number[])[];
  /** Band margin beyond the zone, in bee lengths. */
  marginLengths: number;
  /** The slot model's scale against the whole-frame model's. */
  zoom: number;
  beeLengthPx: number;
}

/**
 * The band for each frame size, for a whole-frame model of input size `base`, and the strip along the band's
 * inner edges where the slot model is not trusted: half a bee, as a bee centred closer to the edge shows the
 * slot model less than half of itself.
 */
export function slotGeometry(settings: SlotSettings, base: { width: number; height: number }) {
  const { zone, marginLengths, zoom, beeLengthPx } = settings;
  // The shipped network halves its features four times, so its input sides must be multiples of 16.
  const window = (frameWidth: number, frameHeight: number) =>
    slotWindow({ zone, frameWidth, frameHeight, marginPx: marginLengths * beeLengthPx, scaleX: (zoom * base.width) / frameWidth, scaleY: (zoom * base.height) / frameHeight, multiple: 16 });
  return { window, edgePx: beeLengthPx / 2 };
}

/**
 * Where the slot model's detections are trusted: the band less a strip along each side that lies inside the
 * frame (the model sees only part of a bee there). At the frame's own edges nothing is lost by cropping.
 */
export function trustedArea(window: InputRegion, frameWidth: number, frameHeight: number, edgePx: number): Area {
  const inset = (start: number, end: number, frameSize: number) => [start > 0 ? start + edgePx : start, end < frameSize ? end - edgePx : end] as const;
  const [left, right] = inset(window.x, window.x + window.width, frameWidth);
  const [top, bottom] = inset(window.y, window.y + window.height, frameHeight);
  return { left, right, top, bottom };
}

/**
 * The whole-frame detections outside the trusted area, and the slot detections inside it. A whole-frame detection
 * just outside the area that the slot model also found just inside it would be one bee twice: it is dropped when a
 * kept slot detection at least half as confident is closer than `duplicatePx` (a faint slot peak does not hide a
 * clear bee).
 */
export function mergeSlotDetections(frame: readonly Detection[], slot: readonly Detection[], area: Area, duplicatePx: number): Detection[] {
  const kept = slot.filter((d) => insideArea(d, area));
  const limit = duplicatePx * duplicatePx;
  const duplicated = (d: Detection) => kept.some((k) => k.score >= d.score / 2 && (k.x - d.x) ** 2 + (k.y - d.y) ** 2 < limit);
  const outside = frame.filter((d) => !insideArea(d, area) && !duplicated(d));
  return [...outside, ...kept].sort((a, b) => b.score - a.score);
}

/** A whole-frame model that can take a frame without looking at it: a two-frame model keeps it as the next one's previous frame. */
export type WholeFrameDetector = Detector & { remember?(frame: Frame): void };

/**
 * The slot model on every frame; the whole-frame model on every `wholeEvery`th frame (1: every frame), its
 * detections merged in outside the band. Counts are decided in the band, which is looked at on every frame; each frame
 * skipped saves a run of the whole-frame model (about what the slot model costs), for bees followed a little less well
 * away from the entrance (`docs/benchmarks.md`). On the frames between, only the trusted area was looked at (`lastLooked`).
 */
export class SlotRefinedDetector implements Detector {
  private area: Area | undefined;
  private areaKey = '';
  private frames = 0;
  private wholeLooked = true;

  constructor(
    private readonly whole: WholeFrameDetector,
    private readonly slot: Detector,
    private readonly window: (frameWidth: number, frameHeight: number) => InputRegion,
    /** Strip along the band's inner edges where the slot model is not trusted, and the duplicate distance: frame px. */
    private readonly edgePx: number,
    private readonly wholeEvery = 1,
  ) {
    if (!Number.isInteger(wholeEvery) || wholeEvery < 1) throw new Error(`wholeEvery must be a whole number ≥ 1, got ${wholeEvery}`);
  }

  async detect(frame: Frame): Promise<Detection[]> {
    const key = `${frame.width}x${frame.height}`;
    if (key !== this.areaKey) {
      this.areaKey = key;
      this.area = trustedArea(this.window(frame.width, frame.height), frame.width, frame.height, this.edgePx);
      this.frames = 0;
    }
    const area = this.area!;
    this.wholeLooked = this.frames++ % this.wholeEvery === 0;
    if (!this.wholeLooked) {
      this.whole.remember?.(frame);
      return mergeSlotDetections([], await this.slot.detect(frame), area, this.edgePx);
    }
    // One after the other: each model already uses the cores it is given.
    const whole = await this.whole.detect(frame);
    const slot = await this.slot.detect(frame);
    return mergeSlotDetections(whole, slot, area, this.edgePx);
  }

  lastLooked(): Area | undefined {
    return this.wholeLooked ? undefined : this.area;
  }

  async release(): Promise<void> {
    await Promise.all([this.whole.release?.(), this.slot.release?.()]);
  }
}
