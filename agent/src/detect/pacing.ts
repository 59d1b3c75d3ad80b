/**
 * Keeps the agent up with a live camera on a CPU too slow for the whole detector. A camera does not wait: a frame
 * the pipeline has no time for is dropped, and a track with a gap of dropped frames is a bee followed badly right
 * where it crosses. Running the whole-frame model on fewer frames (`detector.slot.wholeEvery`) costs far less: the
 * slot model still sees every frame at the entrance, and the tracker carries bees elsewhere between whole frames.
 * So when the pipeline's work per frame nears the camera's frame interval, or frames are dropped, the whole-frame
 * model's frames are spaced one step further apart, and brought back a step when the work predicted for it fits
 * with room to spare. Pure: the pipeline reports each frame's work and applies the level it is given.
 */

export interface WholeFramePacingOptions {
  /** The configured spacing (`detector.slot.wholeEvery`): the level never goes below it. */
  base: number;
  /** The widest spacing allowed (`detector.slot.wholeEveryWhenBehind`). */
  max: number;
  /** The camera's frame interval, ms. */
  frameMs: number;
  /** Share of the frame interval the pipeline's mean work may take; the rest is for ffmpeg, the stream, the uplink. */
  busyShare?: number;
  /** A step back is taken when the work predicted for it is at most this share of the frame interval. */
  relaxShare?: number;
  /** Frames between decisions: a mean over a window, not one slow frame, decides. */
  windowFrames?: number;
  /**
   * Windows in a row without a dropped frame, since the last step up, before a step back. Drops can come from work
   * the pipeline does not measure (the live stream's encoder on the same cores), which no prediction foresees.
   */
  calmWindows?: number;
}

export interface FrameWork {
  /** Time the pipeline spent on the frame, ms: detection, tracking, counting. */
  busyMs: number;
  /** Whether the whole-frame model ran on it. */
  whole: boolean;
  /** Whether any model ran on it (false where the motion gate skipped the frame). */
  inferred: boolean;
  /** Frames the source has dropped so far (a running total). */
  droppedTotal: number;
}

export interface PacingChange {
  level: number;
  /** Why, for the log. */
  reason: string;
}

export class WholeFramePacing {
  private levelNow: number;
  private readonly busyShare: number;
  private readonly relaxShare: number;
  private readonly windowFrames: number;
  private readonly calmWindows: number;
  private calm = 0;
  private frames = 0;
  private busy = 0;
  private inferred = 0;
  private wholeSum = 0;
  private wholeCount = 0;
  private slotSum = 0;
  private slotCount = 0;
  private droppedAtStart: number | undefined;
  /** Mean work of a frame the whole-frame model ran on, and of one only the slot model ran on, ms. */
  private wholeMs: number | undefined;
  private slotMs: number | undefined;

  constructor(private readonly options: WholeFramePacingOptions) {
    const { base, max, frameMs } = options;
    if (!Number.isInteger(base) || base < 1) throw new Error(`base must be a whole number ≥ 1, got ${base}`);
    if (!Number.isInteger(max) || max < base) throw new Error(`max must be a whole number ≥ base (${base}), got ${max}`);
    if (!(frameMs > 0)) throw new Error(`frameMs must be positive, got ${frameMs}`);
    this.busyShare = options.busyShare ?? 0.85;
    this.relaxShare = options.relaxShare ?? 0.6;
    this.windowFrames = options.windowFrames ?? 60;
    this.calmWindows = options.calmWindows ?? 5;
    if (!(this.relaxShare < this.busyShare)) throw new Error('relaxShare must be below busyShare, or the level would swing');
    this.levelNow = base;
  }

  /** The whole-frame model runs on every `level`th frame. */
  get level(): number {
    return this.levelNow;
  }

  /** Takes one frame's work; at the end of a window, returns the new level if it changes. */
  record(work: FrameWork): PacingChange | undefined {
    this.droppedAtStart ??= work.droppedTotal;
    this.frames++;
    this.busy += work.busyMs;
    if (work.inferred) {
      this.inferred++;
      if (work.whole) {
        this.wholeSum += work.busyMs;
        this.wholeCount++;
      } else {
        this.slotSum += work.busyMs;
        this.slotCount++;
      }
    }
    if (this.frames < this.windowFrames) return undefined;
    const change = this.decide(work.droppedTotal - this.droppedAtStart);
    this.startWindow(work.droppedTotal);
    return change;
  }

  private decide(dropped: number): PacingChange | undefined {
    const { frameMs, base, max } = this.options;
    const meanMs = this.busy / this.frames;
    if (this.wholeCount > 0) this.wholeMs = smooth(this.wholeMs, this.wholeSum / this.wholeCount);
    if (this.slotCount > 0) this.slotMs = smooth(this.slotMs, this.slotSum / this.slotCount);
    const level = this.levelNow;
    this.calm = dropped > 0 ? 0 : this.calm + 1;
    const load = `${meanMs.toFixed(1)} ms of work a frame against ${frameMs.toFixed(1)} ms between frames`;
    if ((meanMs > this.busyShare * frameMs || dropped > 0) && level < max) {
      this.levelNow = level + 1;
      this.calm = 0;
      const why = dropped > 0 ? `${dropped} frame${dropped === 1 ? '' : 's'} dropped, ${load}` : load;
      return { level: this.levelNow, reason: `behind the camera (${why})` };
    }
    if (level > base && this.calm >= this.calmWindows && this.wholeMs !== undefined && this.slotMs !== undefined) {
      // Going from every `level`th to every (level−1)th frame adds the whole-frame model's extra work to a share of
      // the frames that ran a model: 1/(level−1) − 1/level of them.
      const extra = (this.wholeMs - this.slotMs) * (1 / (level - 1) - 1 / level) * (this.inferred / this.frames);
      const predicted = meanMs + Math.max(0, extra);
      if (predicted <= this.relaxShare * frameMs) {
        this.levelNow = level - 1;
        return { level: this.levelNow, reason: `room to spare (${load}; about ${predicted.toFixed(1)} ms at the next level)` };
      }
    }
    return undefined;
  }

  private startWindow(droppedTotal: number): void {
    this.frames = this.busy = this.inferred = 0;
    this.wholeSum = this.wholeCount = this.slotSum = this.slotCount = 0;
    this.droppedAtStart = droppedTotal;
  }
}

/** Half the last estimate, half this window's: follows a change in load within a few windows, not one frame. */
function smooth(previous: number | undefined, current: number): number {
  return previous === undefined ? current : (previous + current) / 2;
}
