import { FfmpegCapture } from '../../src/capture/capture.ts';
import { OnnxDetector, type InputRegion } from '../../src/detect/onnx.ts';
import type { Detection } from '../../src/detect/types.ts';

/** A model's detections in every frame of a clip, through the real capture, on one inference thread. */
export async function detectEveryFrame(
  model: string,
  clip: { path: string; width: number; height: number; fps: number },
  region?: (frameWidth: number, frameHeight: number) => InputRegion,
): Promise<Detection[][]> {
  const detector = await OnnxDetector.load(model, { threads: 1, ...(region ? { region } : {}) });
  const capture = new FfmpegCapture({ source: clip.path, width: clip.width, height: clip.height, fps: clip.fps, pixelFormat: 'rgb24' });
  const frames: Detection[][] = [];
  await capture.start();
  for await (const frame of capture) frames.push(await detector.detect(frame));
  await detector.release();
  return frames;
}

/**
 * How well one detector's frames reproduce another's: of the reference's clear detections (score ≥ `minScore`),
 * the share with a candidate detection within `radius` px in the same frame, and the median distance of those.
 */
export function agreement(reference: readonly Detection[][], candidate: readonly Detection[][], minScore = 0.5, radius = 2) {
  const distances: number[] = [];
  let clear = 0;
  for (const [i, detections] of reference.entries()) {
    for (const d of detections.filter((x) => x.score >= minScore)) {
      clear++;
      const nearest = Math.min(...(candidate[i] ?? []).map((c) => Math.hypot(c.x - d.x, c.y - d.y)));
      if (nearest <= radius) distances.push(nearest);
    }
  }
  distances.sort((a, b) => a - b);
  return { clear, matched: distances.length / Math.max(1, clear), medianDistance: distances[Math.floor(distances.length / 2)] ?? Infinity };
}
