import type { Frame } from '../capture/frame.ts';

/** A bee candidate: centre-based box in frame pixels, score in 0..1. */
export interface Detection {
  x: number;
  y: number;
  w: number;
  h: number;
  score: number;
}

export interface Detector {
  detect(frame: Frame): Promise<Detection[]>;
}
