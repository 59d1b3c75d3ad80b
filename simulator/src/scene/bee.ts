import type { Layout } from './layout.ts';
import { poseOnSegment, segmentAt, type BeePose, type Segment } from './motion.ts';

export type BeeRole = 'forager-in' | 'forager-out' | 'fanner' | 'guard' | 'wanderer' | 'turn-back';

/** One bee's whole life in the clip: its path and looks. */
export interface BeePlan {
  id: number;
  role: BeeRole;
  /** Length relative to the scenario's nominal bee length (about 0.85..1.15). */
  size: number;
  /** Colour variety: 0 golden, 1 dark. */
  palette: number;
  seed: number;
  segments: Segment[];
  start: number;
  end: number;
  /** The entrance crossing this bee was planned to make, in scene seconds (frame 0 = 0). */
  plannedCrossing?: { direction: 'in' | 'out'; t: number };
}

export interface BeeState extends BeePose {
  plan: BeePlan;
  /** Body length in pixels (grows with altitude: a flying bee is nearer the camera). */
  length: number;
  /** Walking bees pass behind the hive wall; flying ones are above it. */
  occludedByWall: boolean;
}

/** Body width relative to its length, legs included: the extent a labelled box covers. */
export const BODY_WIDTH_RATIO = 0.42;
/** A bee counts as visible while at least this share of its box is in view. */
export const MIN_VISIBLE_SHARE = 0.25;

export function beeLengthAt(layout: Layout, plan: BeePlan, altitude: number): number {
  return layout.beeLength * plan.size * (1 + 0.35 * Math.min(1, Math.max(0, altitude)));
}

export function beeStateAt(layout: Layout, plan: BeePlan, t: number): BeeState | undefined {
  if (t < plan.start || t > plan.end) return undefined;
  const segment = segmentAt(plan.segments, t);
  if (!segment) return undefined;
  const pose = poseOnSegment(segment, t, layout.beeLength * plan.size, plan.seed, t - plan.start);
  return {
    x: pose.x,
    y: pose.y,
    heading: pose.heading,
    altitude: pose.altitude,
    mode: pose.mode,
    plan,
    length: beeLengthAt(layout, plan, pose.altitude),
    occludedByWall: pose.altitude < 0.3,
  };
}

export interface Box {
  /** Centre and size in pixels. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Axis-aligned box around the whole body, ignoring the frame and the wall. */
export function fullBodyBox(state: Pick<BeeState, 'x' | 'y' | 'heading' | 'length'>): Box {
  const c = Math.abs(Math.cos(state.heading));
  const s = Math.abs(Math.sin(state.heading));
  const width = state.length * BODY_WIDTH_RATIO;
  return { x: state.x, y: state.y, w: state.length * c + width * s, h: state.length * s + width * c };
}

/**
 * The part of a bee a camera (and a labeller) sees: the body box clipped to the frame and, for walking
 * bees, to the wall's lower edge. Undefined when too little of the bee shows.
 */
export function visibleBox(layout: Layout, state: BeeState): Box | undefined {
  const full = fullBodyBox(state);
  const x0 = full.x - full.w / 2;
  const x1 = full.x + full.w / 2;
  const y0 = full.y - full.h / 2;
  const y1 = full.y + full.h / 2;
  const top = state.occludedByWall ? layout.slotTop : 0;
  const cx0 = Math.max(0, x0);
  const cx1 = Math.min(layout.width, x1);
  const cy0 = Math.max(top, y0);
  const cy1 = Math.min(layout.height, y1);
  const w = cx1 - cx0;
  const h = cy1 - cy0;
  if (w < 3 || h < 3) return undefined;
  if ((w * h) / (full.w * full.h) < MIN_VISIBLE_SHARE) return undefined;
  return { x: (cx0 + cx1) / 2, y: (cy0 + cy1) / 2, w, h };
}
