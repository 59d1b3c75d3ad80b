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

/** A rectangle of the frame, frame px: left and top edges included, right and bottom excluded. */
export interface Area {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** Whether a centre lies in the area. */
export const insideArea = (p: { x: number; y: number }, a: Area) => p.x >= a.left && p.x < a.right && p.y >= a.top && p.y < a.bottom;

export interface Detector {
  detect(frame: Frame): Promise<Detection[]>;
  /**
   * Where the last `detect` looked, when that was only part of the frame (undefined: all of it). A bee outside it was
   * not looked for, so a tracker must not take its absence for a miss.
   */
  lastLooked?(): Area | undefined;
  /** Frees what the detector holds outside the JavaScript heap (an onnxruntime session). */
  release?(): Promise<void>;
}
