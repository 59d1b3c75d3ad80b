/** The heatmaps' colour scale, drawn from the renderer's own colour table and log scale, so the two cannot disagree. */
import { COLORMAP_SIZE, INFERNO_ANCHORS, logScale } from '../../../src/heatmaps/colormap.ts';

/** The heatmaps' colours as a CSS gradient, from the faintest level (left) to the busiest spot (right). */
export const HEATMAP_GRADIENT = `linear-gradient(to right, ${INFERNO_ANCHORS.map(([index, hex]) => `#${hex} ${((index / (COLORMAP_SIZE - 1)) * 100).toFixed(1)}%`).join(', ')})`;

export interface ScaleTick {
  /** Passes through a spot. */
  count: number;
  /** Where that count's colour sits on the scale, 0..1. */
  position: number;
}

/** Ticks closer than this (a share of the scale's width) to the busiest spot's tick are left out, so labels do not overlap. */
const MIN_TICK_GAP = 0.12;

/**
 * Ticks for a day whose busiest spot had `maxCount` sightings: 1, each power of ten below it, and `maxCount` itself, at
 * the positions the renderer gives their colours. None for a day without passes.
 */
export function heatmapScaleTicks(maxCount: number): ScaleTick[] {
  if (!(maxCount >= 1)) return [];
  const top = Math.round(maxCount);
  const ticks: ScaleTick[] = [];
  for (let count = 1; count < top; count *= 10) {
    const position = logScale(count, top);
    if (1 - position >= MIN_TICK_GAP) ticks.push({ count, position });
  }
  ticks.push({ count: top, position: 1 });
  return ticks;
}
