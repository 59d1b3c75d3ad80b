import type { Frame } from '../capture/frame.ts';
import type { MotionDetector } from './motion.ts';
import type { Detection, Detector } from './types.ts';

/**
 * Runs the (expensive) model only on frames where something moved. With no motion the scene is unchanged, so the
 * previous detections still stand: they are returned again, which keeps resting bees tracked without inference.
 */
export class MotionGatedDetector implements Detector {
  private last: Detection[] | undefined;
  skippedFrames = 0;
  inferredFrames = 0;

  constructor(
    private readonly model: Detector,
    private readonly motion: MotionDetector,
    /** Foreground share of the motion detector's work image below which a frame counts as still. */
    private readonly minMotionFraction: number,
  ) {}

  async detect(frame: Frame): Promise<Detection[]> {
    const { foregroundFraction } = this.motion.measure(frame);
    if (this.last !== undefined && foregroundFraction < this.minMotionFraction) {
      this.skippedFrames++;
      return this.last;
    }
    this.inferredFrames++;
    this.last = await this.model.detect(frame);
    return this.last;
  }
}
