import { channelsOf, LITTLE_ENDIAN, type Frame } from '../capture/frame.ts';
import { labelComponents, type Component } from './components.ts';
import type { Detection, Detector } from './types.ts';

export interface MotionOptions {
  /** The work image is the frame shrunk by an integer factor so its width is about this. */
  workWidth?: number;
  /** Gray-level difference from the background that counts as motion, in a picture whose mean is `referenceLuma`. */
  threshold?: number;
  /**
   * The mean gray level `threshold` is meant for. A darker picture gets a proportionally lower threshold (a bee's
   * contrast against the board falls with the light), never below `minThreshold`. 0 keeps `threshold` fixed.
   */
  referenceLuma?: number;
  /** The lowest threshold a dark picture gets: above the sensor noise that remains after shrinking. */
  minThreshold?: number;
  /** Background learning rate per frame where nothing moves. */
  learningRate?: number;
  /** Learning rate where something moves, so a bee that settles fades into the background slowly. */
  foregroundLearningRate?: number;
  /** Length of a bee in frame pixels: sets the area range of blobs accepted as bees. */
  beeLengthPx?: number;
  /** Blobs smaller than this fraction of a bee's area are noise. */
  minAreaRatio?: number;
  /** Blobs larger than this many bee areas are split (merged bees) up to `maxSplit` parts, or dropped beyond. */
  mergeAreaRatio?: number;
  maxSplit?: number;
  /** Above this foreground fraction the change is global (cloud, sun, exposure): relearn instead of detecting. */
  lightChangeFraction?: number;
}

export interface MotionResult {
  detections: Detection[];
  /** Share of work pixels that differ from the background (0 on the first frame and after a relearn). */
  foregroundFraction: number;
  recalibrated: boolean;
}

const DEFAULTS: Required<MotionOptions> = {
  workWidth: 320,
  threshold: 25,
  referenceLuma: 128,
  minThreshold: 8,
  learningRate: 0.05,
  foregroundLearningRate: 0.005,
  beeLengthPx: 40,
  minAreaRatio: 0.15,
  mergeAreaRatio: 1.8,
  maxSplit: 4,
  lightChangeFraction: 0.35,
};

/** A bee seen from above is roughly an ellipse about 0.4 of its length wide. */
const BEE_AREA_PER_LENGTH_SQUARED = Math.PI / 4 * 0.4;

/**
 * Classical motion detector: running-average background on a shrunk gray frame, absolute difference,
 * threshold, 3×3 opening then closing, connected components, bee-sized blobs. No model, a few ms per frame.
 */
export class MotionDetector implements Detector {
  private readonly options: Required<MotionOptions>;
  private background: Float32Array | undefined;
  /** Mean gray level of the background, which sets the threshold (see `referenceLuma`). */
  private backgroundMean = 0;
  private work = new Uint8Array(0);
  private mask = new Uint8Array(0);
  private scratch = new Uint8Array(0);
  private factor = 1;
  private workWidth = 0;
  private workHeight = 0;
  private frameKey = '';
  recalibrations = 0;
  framesSeen = 0;

  constructor(options: MotionOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    for (const [key, value] of Object.entries(this.options)) {
      if (!Number.isFinite(value) || value < 0) throw new Error(`motion.${key} must be a non-negative number, got ${String(value)}`);
    }
  }

  detect(frame: Frame): Promise<Detection[]> {
    return Promise.resolve(this.analyse(frame).detections);
  }

  analyse(frame: Frame): MotionResult {
    const { foregroundFraction, settled } = this.measure(frame);
    if (!settled) return { detections: [], foregroundFraction, recalibrated: this.framesSeen > 1 };
    const { mask } = this;
    // Opening removes speckle, closing fills the gaps between a bee's body and its blurred wings.
    erode(mask, this.scratch, this.workWidth, this.workHeight);
    dilate(mask, this.scratch, this.workWidth, this.workHeight);
    dilate(mask, this.scratch, this.workWidth, this.workHeight);
    erode(mask, this.scratch, this.workWidth, this.workHeight);
    const components = labelComponents(mask, this.workWidth, this.workHeight);
    return { detections: this.toDetections(components), foregroundFraction, recalibrated: false };
  }

  /**
   * How much of the frame moved, updating the background, without finding blobs (all the motion gate needs).
   * `settled` is false on the first frame and when a light change made the frame the new background.
   */
  measure(frame: Frame): { foregroundFraction: number; settled: boolean } {
    this.prepare(frame);
    return this.update();
  }

  /**
   * measure() on a gray work picture the caller made itself: the motion gate samples a coarser one than blob
   * finding needs. The background restarts when the picture's size changes.
   */
  measureGray(gray: Uint8Array, width: number, height: number): { foregroundFraction: number; settled: boolean } {
    if (gray.length !== width * height) throw new Error(`gray picture must be ${width}×${height} bytes, got ${gray.length}`);
    this.resize(`${width}x${height}:work`, 1, width, height);
    this.work.set(gray);
    return this.update();
  }

  private update(): { foregroundFraction: number; settled: boolean } {
    this.framesSeen++;
    const { work, mask } = this;
    const background = this.background!;
    const total = work.length;
    if (this.framesSeen === 1) {
      this.adopt();
      return { foregroundFraction: 0, settled: false };
    }
    const threshold = this.threshold;
    let foreground = 0;
    for (let i = 0; i < total; i++) {
      const moving = Math.abs(work[i]! - background[i]!) > threshold ? 1 : 0;
      mask[i] = moving;
      foreground += moving;
    }
    const foregroundFraction = foreground / total;
    if (foregroundFraction > this.options.lightChangeFraction) {
      // Frigate's trick: a sudden global change is lighting, not bees; adopt the new picture as background.
      this.adopt();
      this.recalibrations++;
      return { foregroundFraction, settled: false };
    }
    const still = this.options.learningRate;
    const moving = this.options.foregroundLearningRate;
    let sum = 0;
    for (let i = 0; i < total; i++) {
      const rate = mask[i] === 1 ? moving : still;
      const value = background[i]! + rate * (work[i]! - background[i]!);
      background[i] = value;
      sum += value;
    }
    this.backgroundMean = sum / total;
    return { foregroundFraction, settled: true };
  }

  /**
   * The difference that counts as motion now. A fixed 25 levels is most of a bee's contrast at dusk: on the
   * simulator's dusk scenes (mean level about 52) the motion gate took 40–70 % of the frames for still, and
   * the model never saw bees walking into the slot.
   */
  get threshold(): number {
    const { threshold, referenceLuma, minThreshold } = this.options;
    if (referenceLuma <= 0) return threshold;
    return Math.max(Math.min(threshold, minThreshold), threshold * Math.min(1, this.backgroundMean / referenceLuma));
  }

  /** Makes the current work picture the background. */
  private adopt(): void {
    const { work } = this;
    const background = this.background!;
    let sum = 0;
    for (let i = 0; i < work.length; i++) {
      background[i] = work[i]!;
      sum += work[i]!;
    }
    this.backgroundMean = sum / work.length;
  }

  private toDetections(components: Component[]): Detection[] {
    const f = this.factor;
    const beeArea = BEE_AREA_PER_LENGTH_SQUARED * this.options.beeLengthPx ** 2;
    const minArea = beeArea * this.options.minAreaRatio;
    const mergeArea = beeArea * this.options.mergeAreaRatio;
    const out: Detection[] = [];
    for (const c of components) {
      const area = c.area * f * f;
      if (area < minArea) continue;
      const x = (c.sumX / c.area + 0.5) * f;
      const y = (c.sumY / c.area + 0.5) * f;
      const w = (c.maxX - c.minX + 1) * f;
      const h = (c.maxY - c.minY + 1) * f;
      if (area <= mergeArea) {
        out.push({ x, y, w, h, score: Math.min(1, Math.sqrt(area / beeArea)) });
        continue;
      }
      const parts = Math.round(area / beeArea);
      if (parts > this.options.maxSplit) continue; // a shadow or a hand, not bees
      // Split hint: touching bees form one blob; cut it into equal boxes along its longer side.
      const alongX = w >= h;
      for (let k = 0; k < parts; k++) {
        const offset = (k + 0.5) / parts - 0.5;
        out.push({
          x: alongX ? c.minX * f + w / 2 + offset * w : x,
          y: alongX ? y : c.minY * f + h / 2 + offset * h,
          w: alongX ? w / parts : w,
          h: alongX ? h : h / parts,
          score: 0.5,
        });
      }
    }
    return out;
  }

  private prepare(frame: Frame): void {
    const factor = Math.max(1, Math.round(frame.width / this.options.workWidth));
    this.resize(`${frame.width}x${frame.height}:${frame.format}`, factor, Math.floor(frame.width / factor), Math.floor(frame.height / factor));
    shrinkToGray(frame, this.factor, this.work, this.workWidth, this.workHeight);
  }

  private resize(key: string, factor: number, workWidth: number, workHeight: number): void {
    if (key === this.frameKey) return;
    this.frameKey = key;
    this.factor = factor;
    this.workWidth = workWidth;
    this.workHeight = workHeight;
    const n = workWidth * workHeight;
    this.work = new Uint8Array(n);
    this.mask = new Uint8Array(n);
    this.scratch = new Uint8Array(n);
    this.background = new Float32Array(n);
    this.framesSeen = 0;
  }
}

/** Box-average an integer factor down, converting RGB to luma (BT.601 weights in fixed point). */
export function shrinkToGray(frame: Frame, factor: number, out: Uint8Array, outWidth: number, outHeight: number): void {
  const channels = channelsOf(frame.format);
  const data = frame.data;
  const rowStride = frame.width * channels;
  const norm = factor * factor;
  if (factor === 2) {
    // The common case (640×480 to a 320-wide work image): a 2×2 block is its own centre, and the unrolled loop
    // takes a fifth of the generic one's time.
    centreToGray(frame, 2, out, outWidth, outHeight);
    return;
  }
  for (let oy = 0; oy < outHeight; oy++) {
    const top = oy * factor * rowStride;
    for (let ox = 0; ox < outWidth; ox++) {
      let sum = 0;
      for (let dy = 0; dy < factor; dy++) {
        let p = top + dy * rowStride + ox * factor * channels;
        if (channels === 1) {
          for (let dx = 0; dx < factor; dx++) sum += data[p++]!;
        } else {
          // Summing the weighted channels of the block and shifting once rounds a little differently from
          // converting each pixel first; both are luma to within one level.
          for (let dx = 0; dx < factor; dx++, p += 3) sum += 77 * data[p]! + 150 * data[p + 1]! + 29 * data[p + 2]!;
        }
      }
      out[oy * outWidth + ox] = channels === 1 ? (sum / norm) | 0 : (sum / norm) >> 8;
    }
  }
}

/**
 * A coarse luma picture for the motion gate: each factor×factor block (factor even) is stood for by the mean of its
 * centre 2×2 pixels, which reads a quarter of the frame at factor 4. Enough to tell whether anything moved, and
 * cheaper than the full box average that blob finding needs.
 */
export function sampleToGray(frame: Frame, factor: number, out: Uint8Array, outWidth: number, outHeight: number): void {
  if (factor < 2 || factor % 2 !== 0) shrinkToGray(frame, factor, out, outWidth, outHeight);
  else centreToGray(frame, factor, out, outWidth, outHeight);
}

/** Luma of the mean of the centre 2×2 pixels of each factor×factor block (factor even), unrolled. */
function centreToGray(frame: Frame, factor: number, out: Uint8Array, outWidth: number, outHeight: number): void {
  const channels = channelsOf(frame.format);
  const data = frame.data;
  const rowStride = frame.width * channels;
  const centre = factor / 2 - 1;
  const step = factor * channels;
  for (let oy = 0; oy < outHeight; oy++) {
    let p = (oy * factor + centre) * rowStride + centre * channels;
    let q = p + rowStride;
    const o = oy * outWidth;
    if (channels === 3) {
      for (let ox = 0; ox < outWidth; ox++, p += step, q += step) {
        const red = data[p]! + data[p + 3]! + data[q]! + data[q + 3]!;
        const green = data[p + 1]! + data[p + 4]! + data[q + 1]! + data[q + 4]!;
        const blue = data[p + 2]! + data[p + 5]! + data[q + 2]! + data[q + 5]!;
        out[o + ox] = (77 * red + 150 * green + 29 * blue) >> 10;
      }
    } else {
      for (let ox = 0; ox < outWidth; ox++, p += step, q += step) out[o + ox] = (data[p]! + data[p + 1]! + data[q]! + data[q + 1]!) >> 2;
    }
  }
}

/** 3×3 erosion in place (separable: rows, then columns). Border pixels see outside as empty. */
export function erode(mask: Uint8Array, scratch: Uint8Array, width: number, height: number): void {
  morph(mask, scratch, width, height, true);
}

/** 3×3 dilation in place. */
export function dilate(mask: Uint8Array, scratch: Uint8Array, width: number, height: number): void {
  morph(mask, scratch, width, height, false);
}

function morph(mask: Uint8Array, scratch: Uint8Array, width: number, height: number, isErode: boolean): void {
  if (LITTLE_ENDIAN && width % 4 === 0 && mask.byteOffset % 4 === 0 && scratch.byteOffset % 4 === 0) {
    morphWords(new Uint32Array(mask.buffer, mask.byteOffset, (width * height) / 4), new Uint32Array(scratch.buffer, scratch.byteOffset, (width * height) / 4), width / 4, height, isErode);
    return;
  }
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const left = x > 0 ? mask[row + x - 1]! : 0;
      const centre = mask[row + x]!;
      const right = x < width - 1 ? mask[row + x + 1]! : 0;
      scratch[row + x] = isErode ? left & centre & right : left | centre | right;
    }
  }
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const up = y > 0 ? scratch[row - width + x]! : 0;
      const centre = scratch[row + x]!;
      const down = y < height - 1 ? scratch[row + width + x]! : 0;
      mask[row + x] = isErode ? up & centre & down : up | centre | down;
    }
  }
}

/**
 * The same 3×3 pass on four mask bytes (each 0 or 1) at a time, about four times faster: a byte's left neighbour
 * is the word shifted up by one byte with the previous word's top byte shifted in, its right neighbour likewise.
 */
function morphWords(mask: Uint32Array, scratch: Uint32Array, words: number, height: number, isErode: boolean): void {
  for (let y = 0; y < height; y++) {
    const row = y * words;
    let previous = 0;
    let current = mask[row]!;
    for (let x = 0; x < words; x++) {
      const next = x + 1 < words ? mask[row + x + 1]! : 0;
      const left = (current << 8) | (previous >>> 24);
      const right = (current >>> 8) | (next << 24);
      scratch[row + x] = isErode ? left & current & right : left | current | right;
      previous = current;
      current = next;
    }
  }
  const last = (height - 1) * words;
  for (let i = 0; i < height * words; i++) {
    const up = i >= words ? scratch[i - words]! : 0;
    const down = i < last ? scratch[i + words]! : 0;
    mask[i] = isErode ? up & scratch[i]! & down : up | scratch[i]! | down;
  }
}
