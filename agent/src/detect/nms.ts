import type { Detection } from './types.ts';

/** Intersection over union of two centre-based boxes. */
export function iou(a: Detection, b: Detection): number {
  const left = Math.max(a.x - a.w / 2, b.x - b.w / 2);
  const right = Math.min(a.x + a.w / 2, b.x + b.w / 2);
  const top = Math.max(a.y - a.h / 2, b.y - b.h / 2);
  const bottom = Math.min(a.y + a.h / 2, b.y + b.h / 2);
  const intersection = Math.max(0, right - left) * Math.max(0, bottom - top);
  const union = a.w * a.h + b.w * b.h - intersection;
  return union > 0 ? intersection / union : 0;
}

/**
 * Greedy non-maximum suppression: keep the best box, drop those overlapping it more than `threshold`, repeat.
 * With `classOf`, boxes of different classes never suppress each other.
 */
export function nonMaxSuppression<T extends Detection>(boxes: readonly T[], threshold: number, classOf?: (box: T) => number, maxDetections = 300): T[] {
  const sorted = [...boxes].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const box of sorted) {
    if (kept.length >= maxDetections) break;
    const suppressed = kept.some((k) => (classOf === undefined || classOf(k) === classOf(box)) && iou(k, box) > threshold);
    if (!suppressed) kept.push(box);
  }
  return kept;
}
