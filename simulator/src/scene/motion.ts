import { smoothNoise } from '../random/prng.ts';

/**
 * A bee's movement is a chain of timed segments (walk, stand, fan, fly), each a straight line or a quadratic
 * curve with easing. Position and heading are closed-form functions of time, so the scene can be evaluated
 * at any instant, plans can be shifted in time to put an entrance crossing exactly where the scenario wants
 * it, and nothing depends on the order frames are evaluated in.
 */

export type Vec = readonly [number, number];
export type MotionMode = 'walk' | 'stand' | 'fan' | 'fly';
export type Ease = 'linear' | 'in' | 'out' | 'inout';

export interface Segment {
  t0: number;
  t1: number;
  mode: MotionMode;
  from: Vec;
  to: Vec;
  /** Control point of a quadratic curve; straight line when absent. */
  control?: Vec;
  ease: Ease;
  /** Height above the board: 0 walking, about 1 when flying high. */
  altitudeFrom: number;
  altitudeTo: number;
  /** Body direction while standing or fanning (radians, image coordinates: 0 = right, π/2 = down). */
  facing?: number;
  /** Heading at the end of the previous segment; the bee turns from it during the first moments. */
  headingIn: number;
}

export interface BeePose {
  x: number;
  y: number;
  heading: number;
  altitude: number;
  mode: MotionMode;
}

const TURN_SECONDS = 0.18;

function ease(kind: Ease, u: number): number {
  switch (kind) {
    case 'linear':
      return u;
    case 'in':
      return u * u;
    case 'out':
      return 1 - (1 - u) * (1 - u);
    case 'inout':
      return u * u * (3 - 2 * u);
  }
}

function curvePoint(segment: Segment, s: number): [number, number] {
  const { from, to, control } = segment;
  if (!control) return [from[0] + (to[0] - from[0]) * s, from[1] + (to[1] - from[1]) * s];
  const a = (1 - s) * (1 - s);
  const b = 2 * (1 - s) * s;
  const c = s * s;
  return [a * from[0] + b * control[0] + c * to[0], a * from[1] + b * control[1] + c * to[1]];
}

/** Direction of travel along the curve at parameter s (independent of easing). */
export function curveHeading(segment: Segment, s: number): number {
  const { from, to, control } = segment;
  if (!control) return Math.atan2(to[1] - from[1], to[0] - from[0]);
  const dx = 2 * (1 - s) * (control[0] - from[0]) + 2 * s * (to[0] - control[0]);
  const dy = 2 * (1 - s) * (control[1] - from[1]) + 2 * s * (to[1] - control[1]);
  if (dx === 0 && dy === 0) return Math.atan2(to[1] - from[1], to[0] - from[0]);
  return Math.atan2(dy, dx);
}

export function segmentEndHeading(segment: Segment): number {
  if (segment.mode === 'stand' || segment.mode === 'fan') return segment.facing ?? segment.headingIn;
  const moved = segment.to[0] !== segment.from[0] || segment.to[1] !== segment.from[1] || segment.control !== undefined;
  return moved ? curveHeading(segment, 1) : segment.headingIn;
}

function lerpAngle(a: number, b: number, u: number): number {
  let delta = (b - a) % (2 * Math.PI);
  if (delta > Math.PI) delta -= 2 * Math.PI;
  if (delta < -Math.PI) delta += 2 * Math.PI;
  return a + delta * u;
}

/** Wobble amplitude in bee lengths: walking bees zig-zag, flying ones drift, standing ones barely move. */
const WOBBLE: Record<MotionMode, number> = { walk: 0.07, stand: 0.008, fan: 0.012, fly: 0.18 };

/**
 * Pose at time t on the given segment; `beeLength` scales the wobble, `seed` makes it individual and
 * `age` (seconds since the bee's plan began) drives it, so shifting a plan in time does not change its shape.
 */
export function poseOnSegment(segment: Segment, t: number, beeLength: number, seed: number, age: number): BeePose {
  const duration = segment.t1 - segment.t0;
  const u = duration > 0 ? Math.min(1, Math.max(0, (t - segment.t0) / duration)) : 1;
  const s = ease(segment.ease, u);
  const [cx, cy] = curvePoint(segment, s);
  // The wobble fades to zero at both ends of every segment so the path stays continuous across segments.
  const sinceStart = t - segment.t0;
  const untilEnd = segment.t1 - t;
  const ramp = Math.max(0, Math.min(1, sinceStart / 0.25, untilEnd / 0.25));
  const amplitude = WOBBLE[segment.mode] * beeLength * ramp;
  const rate = segment.mode === 'fly' ? 1.6 : 2.4;
  const x = cx + amplitude * smoothNoise(seed, age * rate);
  const y = cy + amplitude * smoothNoise(seed ^ 0x5bd1e995, age * rate);
  const altitude = segment.altitudeFrom + (segment.altitudeTo - segment.altitudeFrom) * s;

  let target: number;
  if (segment.mode === 'stand' || segment.mode === 'fan') target = segment.facing ?? segment.headingIn;
  else target = curveHeading(segment, s) + 0.12 * smoothNoise(seed ^ 0x68e31da4, age * 1.7) * (segment.mode === 'walk' ? 1 : 0.5);
  const turn = Math.min(1, sinceStart / TURN_SECONDS);
  const heading = lerpAngle(segment.headingIn, target, turn * turn * (3 - 2 * turn));
  return { x, y, heading, altitude, mode: segment.mode };
}

/** Finds the segment active at time t (segments are contiguous and sorted). */
export function segmentAt(segments: readonly Segment[], t: number): Segment | undefined {
  let lo = 0;
  let hi = segments.length - 1;
  if (hi < 0) return undefined;
  const first = segments[0] as Segment;
  const last = segments[hi] as Segment;
  if (t < first.t0 || t > last.t1) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((segments[mid] as Segment).t0 <= t) lo = mid;
    else hi = mid - 1;
  }
  return segments[lo];
}

/**
 * Builds a chain of segments from a cursor (time, place, altitude, heading). Times are local (start at 0)
 * until `shift` moves the finished plan.
 */
export class PathBuilder {
  readonly segments: Segment[] = [];
  private time = 0;
  private position: Vec;
  private altitude: number;
  private heading: number;

  constructor(start: Vec, altitude: number, heading: number) {
    this.position = start;
    this.altitude = altitude;
    this.heading = heading;
  }

  get now(): number {
    return this.time;
  }

  get at(): Vec {
    return this.position;
  }

  private push(segment: Omit<Segment, 't0' | 't1' | 'headingIn'>, duration: number): this {
    const full: Segment = { ...segment, t0: this.time, t1: this.time + Math.max(duration, 1e-3), headingIn: this.heading };
    this.segments.push(full);
    this.time = full.t1;
    this.position = full.to;
    this.altitude = full.altitudeTo;
    this.heading = segmentEndHeading(full);
    return this;
  }

  /** Walk in a straight line at `speed` px/s. */
  walkTo(to: Vec, speed: number, easeKind: Ease = 'linear'): this {
    const distance = Math.hypot(to[0] - this.position[0], to[1] - this.position[1]);
    if (distance < 1e-6) return this;
    return this.push({ mode: 'walk', from: this.position, to, ease: easeKind, altitudeFrom: 0, altitudeTo: 0 }, distance / speed);
  }

  /** Stand (or fan) in place for `seconds`, turning to `facing` if given. */
  hold(seconds: number, mode: 'stand' | 'fan' = 'stand', facing?: number): this {
    return this.push(
      { mode, from: this.position, to: this.position, ease: 'linear', altitudeFrom: this.altitude, altitudeTo: this.altitude, facing: facing ?? this.heading },
      seconds,
    );
  }

  /** Fly along a curve (control point optional) to `to`, ending at `altitude`. */
  flyTo(to: Vec, speed: number, altitude: number, easeKind: Ease, control?: Vec): this {
    const chord = Math.hypot(to[0] - this.position[0], to[1] - this.position[1]);
    const length = control ? (chord + Math.hypot(control[0] - this.position[0], control[1] - this.position[1]) + Math.hypot(to[0] - control[0], to[1] - control[1])) / 2 : chord;
    // Eased segments average lower speed; stretch their duration so the peak speed stays realistic.
    const stretch = easeKind === 'linear' ? 1 : 1.6;
    return this.push(
      { mode: 'fly', from: this.position, to, control, ease: easeKind, altitudeFrom: this.altitude, altitudeTo: altitude },
      Math.max(0.05, (length / speed) * stretch),
    );
  }
}

export function shiftSegments(segments: readonly Segment[], by: number): Segment[] {
  return segments.map((segment) => ({ ...segment, t0: segment.t0 + by, t1: segment.t1 + by }));
}
