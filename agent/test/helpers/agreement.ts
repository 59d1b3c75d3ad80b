import type { Detection } from '../../src/detect/types.ts';

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
