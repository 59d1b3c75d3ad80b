import type { Frame } from '../capture/frame.ts';
import { sampleToGray, type MotionDetector } from './motion.ts';
import type { Area, Detection, Detector } from './types.ts';

/** Width of the gate's picture: bees are still several pixels long at this scale, and it costs a fraction of a ms. */
const GATE_WIDTH = 160;

/**
 * Runs the (expensive) model only on frames where something moved. With no motion the scene is unchanged, so the
 * previous detections still stand: they are returned again, standing still, which keeps resting bees tracked
 * without inference.
 */
export class MotionGatedDetector implements Detector {
  private last: Detection[] | undefined;
  /** `last` with every movement zero: what a skipped frame reports, made at the first skip after an inference. */
  private still: Detection[] | undefined;
  /** Where the model looked for `last`: a skipped frame repeats that too. */
  private looked: Area | undefined;
  private gray = new Uint8Array(0);
  skippedFrames = 0;
  inferredFrames = 0;

  constructor(
    private readonly model: Detector,
    private readonly motion: MotionDetector,
    /** Foreground share of the gate's picture below which a frame counts as still. */
    private readonly minMotionFraction: number,
  ) {}

  async detect(frame: Frame): Promise<Detection[]> {
    const factor = Math.max(1, Math.round(frame.width / GATE_WIDTH));
    const width = Math.floor(frame.width / factor);
    const height = Math.floor(frame.height / factor);
    if (this.gray.length !== width * height) this.gray = new Uint8Array(width * height);
    sampleToGray(frame, factor, this.gray, width, height);
    const { foregroundFraction } = this.motion.measureGray(this.gray, width, height);
    if (this.last !== undefined && foregroundFraction < this.minMotionFraction) {
      this.skippedFrames++;
      this.still ??= this.last.map((d) => (d.movement ? { ...d, movement: { dx: 0, dy: 0 } } : d));
      return this.still;
    }
    this.inferredFrames++;
    this.last = await this.model.detect(frame);
    this.looked = this.model.lastLooked?.();
    this.still = undefined;
    return this.last;
  }

  lastLooked(): Area | undefined {
    return this.looked;
  }

  async release(): Promise<void> {
    await this.model.release?.();
  }
}
