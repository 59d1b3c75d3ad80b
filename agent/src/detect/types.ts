import type { Frame } from '../capture/frame.ts';

/** A bee candidate: centre-based box in frame pixels, score in 0..1. */
export interface Detection {
  x: number;
  y: number;
  w: number;
  h: number;
  score: number;
  /**
   * How far the bee moved since the previous frame the detector saw, frame px, from a model that looks at two
   * frames. The tracker weighs it against each track's velocity (`tracker.movementWeight`).
   */
  movement?: { dx: number; dy: number };
}

export interface Detector {
  detect(frame: Frame): Promise<Detection[]>;
  /** Frees what the detector holds outside the JavaScript heap (an onnxruntime session). */
  release?(): Promise<void>;
}
