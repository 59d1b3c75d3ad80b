import type { EntranceMovementInput } from '../telemetry.ts';
import { signedDistanceToPolygon, type Point } from './geometry.ts';

/**
 * The counting rules shared by the edge agent (fed by its tracker) and the simulator (fed by ground truth), so
 * that the two can be compared field by field and differ only where detection or tracking erred.
 */
export interface CountingConfig {
  /** The entrance zone (the hive opening and a margin around it) in frame pixels. */
  zone: readonly Point[];
  /** Nominal frame rate: speeds are pixels per nominal frame, computed from real time gaps. */
  fps: number;
  /** Interval length; intervals are aligned to Unix time (a 60 s interval ends on a whole minute). */
  intervalSeconds?: number;
  /** A centre within this distance of the zone boundary is on neither side, so jitter on the edge decides nothing. */
  hysteresisPx?: number;
  /** A track whose centre stays within this radius of where it was first seen in an interval is stationary. */
  stationaryPx?: number;
  /** ...provided it was seen for at least this long in the interval. */
  stationaryMinSeconds?: number;
  /** Two bees closer than this are interacting... */
  interactionPx?: number;
  /** ...once they have been close for this many consecutive frames in which both were seen. */
  interactionMinFrames?: number;
  /** Consecutive observations further apart than this give no speed sample (the track was lost and re-found). */
  maxSpeedGapSeconds?: number;
  /**
   * Repairs crossings broken at the zone's edge (0, the default: off). A track that begins within this distance of
   * the edge and then walks at least as far again away from it counts as having come from the other side; a track
   * that came from at least this far away and is lost within this distance of the edge, with no new track
   * beginning near where it was lost, counts as having gone across. Bees seldom appear or vanish beside the edge
   * (they land, take off and enter the hive elsewhere): such tracks are usually one bee whose track was lost, or
   * taken over by a neighbour, as it crossed. Still at most one count per track; tracks of the video's first
   * second, and tracks still running when the video ends, are left out.
   */
  edgeBandPx?: number;
  /**
   * Splits a track that turns back sharply after a deep excursion (0, the default: off). A track that crossed to the
   * other side of the zone's edge, got at least this far from the edge there, and crossed back without staying
   * `reversalMaxTurnSeconds` or longer within half this distance of any one spot over there, is taken as two bees
   * whose tracks swapped where they met (a forager going in passing one coming out at the slot: one peak for a few
   * frames, and the track leaves with the other bee). Its first part is decided and counted when it crosses back;
   * the rest is decided at the end like a track of its own. A bee that turns round stops to do it; one that turns
   * back without a pause is counted in and out (netFlow stays right). A track that paused is still split when another
   * track, begun on the far side, was last seen where it turned (within `interactionPx`, within a second) and is seen
   * no more: the bee it swapped with, lost where their peaks merged; or when the bee it followed all but vanished
   * over there (`reversalHiddenShare`). Whether this helps depends on the entrance:
   * it mends swaps in two-way traffic at the slot, and miscounts bees that walk up to the slot and turn away.
   */
  reversalDepthPx?: number;
  /** See `reversalDepthPx`. */
  reversalMaxTurnSeconds?: number;
  /**
   * A track that was on the far side faster than this, in its own body lengths per second (the median of its steps
   * there), flew over the zone rather than walking into the slot or out of it, and is not split by
   * `reversalDepthPx` (0: no such check). Bees walk at 2–4 lengths a second and fly at 8 or more; swaps happen
   * between walking bees. Needs the observations' `length`; tracks without one are not checked.
   */
  reversalMaxLengthsPerSecond?: number;
  /**
   * A track that paused at its turn is still split when its smallest box on the far side (`visibleLength`) was
   * under this share of its mean box on the side it came from (0, the default: no such check). A forager walking into
   * the slot shrinks to a sliver before it is gone, and a bee coming out at that spot takes its track over: slow bees
   * at the slot, one peak, no pause to tell. A bee that turns round at the slot keeps most of its body in view.
   * Observations without `visibleLength` are not checked.
   */
  reversalHiddenShare?: number;
}

export type TrackId = string | number;
export type Direction = 'in' | 'out';
export interface Crossing {
  trackId: TrackId;
  direction: Direction;
  /** When the centre last moved to the side the track ended on. */
  t: number;
}
export interface BeeObservation {
  trackId: TrackId;
  x: number;
  y: number;
  /** The bee's body length in px, where the tracker knows it (speeds in body lengths need it). */
  length?: number;
  /** How much of the bee is in view in this frame, px: its box's longer side, not smoothed (see `reversalHiddenShare`). */
  visibleLength?: number;
}

export interface IntervalSummary {
  intervalStart: number;
  intervalEnd: number;
  beesIn: number;
  beesOut: number;
  netFlow: number;
  avgSpeed?: number;
  p95Speed?: number;
  /** How many speed samples avgSpeed and p95Speed were taken from: their weight when two parts of one interval are merged. */
  speedSamples: number;
  stationaryBees: number;
  detectedBees: number;
  beeInteractions: number;
  /** Tracks that ended in this interval without a decided direction; kept for local stats, not sent. */
  unknownDirection: number;
  frames: number;
}

type Side = 'inside' | 'outside';

interface TrackState {
  /** Signed distance to the zone's edge where the track was first seen. */
  bornDistance: number;
  bornAt: number;
  /** Signed distance to the zone's edge where it was last seen. */
  lastDistance: number;
  /** The furthest it has been from the edge. */
  farthest: number;
  startSide?: Side;
  /** When the first side was decided. */
  startSideAt?: number;
  side?: Side;
  sideSince: number;
  /** How far from the edge it has been since it last changed sides. */
  depthOnSide: number;
  /** Since it crossed away from its start side: t, x, y of each sighting, flat. Kept only while `reversalDepthPx` is on. */
  away?: number[];
  /** Where and when, during `away`, it was furthest from the edge: where it turned back. */
  turn?: { t: number; x: number; y: number };
  last?: { t: number; x: number; y: number };
  touchedZone: boolean;
  /** Sum and count of the body lengths observed, for the track's mean length. */
  lengthSum: number;
  lengthCount: number;
  /** Sum and count of the visible lengths observed on its start side, and the smallest since it left that side. */
  startSideVisibleSum: number;
  startSideVisibleCount: number;
  awayMinVisible: number;
}

interface IntervalState {
  start: number;
  frames: number;
  speeds: number[];
  beesIn: number;
  beesOut: number;
  interactions: number;
  unknownDirection: number;
  /** Per track: where it was first seen in this interval, how long, and how far it strayed from there. */
  tracks: Map<TrackId, { x: number; y: number; firstT: number; lastT: number; maxDistance: number }>;
}

/** How long track births are remembered: longer than a tracker keeps a lost track before ending it. */
const BIRTH_MEMORY_SECONDS = 10;
/** A new track a moment before the old one's last sighting can still be the bee's (both saw it briefly). */
const PICKUP_LEAD_SECONDS = 0.2;
/** How close to a track's turn, in time, the bee it swapped with was last seen. */
const PARTNER_SECONDS = 1;
/** A track unseen for this long is taken for gone (a lost bee is often missed for a frame or two first). */
const GONE_SECONDS = 0.1;

const DEFAULTS = {
  intervalSeconds: 60,
  hysteresisPx: 6,
  stationaryPx: 10,
  stationaryMinSeconds: 1,
  interactionPx: 40,
  interactionMinFrames: 3,
  maxSpeedGapSeconds: 1,
  edgeBandPx: 0,
  reversalDepthPx: 0,
  reversalMaxTurnSeconds: 0.5,
  reversalMaxLengthsPerSecond: 0,
  reversalHiddenShare: 0,
};

export function intervalStartOf(t: number, intervalSeconds: number): number {
  return Math.floor(t / intervalSeconds) * intervalSeconds;
}

/** Nearest-rank percentile of an unsorted sample (sorts a copy). */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export class MovementAggregator {
  private readonly config: Required<CountingConfig>;
  private readonly tracks = new Map<TrackId, TrackState>();
  private readonly intervals = new Map<number, IntervalState>();
  /** Consecutive close frames per pair of tracks, and whether the current episode was already counted. */
  private readonly pairs = new Map<string, { closeFrames: number; counted: boolean }>();
  private lastFrameT = -Infinity;
  private firstFrameT: number | undefined;
  /** Where and when recent tracks began, to tell a lost bee that was picked up again from one that was not. */
  private births: { t: number; x: number; y: number }[] = [];
  /** Where and when recently ended tracks were last seen, and the side they began on. */
  private ends: { t: number; x: number; y: number; startSide: Side | undefined }[] = [];
  private closedBefore = -Infinity;

  constructor(config: CountingConfig) {
    if (config.zone.length < 3) throw new Error('the entrance zone needs at least 3 points');
    if (!(config.fps > 0)) throw new Error('fps must be positive');
    this.config = { ...DEFAULTS, ...config } as Required<CountingConfig>;
  }

  /**
   * Every processed frame, in time order, also frames where nothing was seen. Returns the crossings decided in it
   * (only the first parts of tracks split by `reversalDepthPx`; the rest are decided by `endTrack`).
   */
  observeFrame(t: number, bees: readonly BeeObservation[]): Crossing[] {
    if (t < this.lastFrameT) throw new Error(`frames must come in time order (got ${t} after ${this.lastFrameT})`);
    this.lastFrameT = t;
    this.firstFrameT ??= t;
    const interval = this.intervalFor(t);
    interval.frames++;
    const crossings: Crossing[] = [];
    for (const bee of bees) {
      const crossing = this.observeBee(interval, t, bee);
      if (crossing) crossings.push(crossing);
    }
    this.observeInteractions(interval, bees);
    return crossings;
  }

  private observeBee(interval: IntervalState, t: number, bee: BeeObservation): Crossing | undefined {
    const { zone, hysteresisPx, fps, maxSpeedGapSeconds } = this.config;
    const distance = signedDistanceToPolygon([bee.x, bee.y], zone);
    let track = this.tracks.get(bee.trackId);
    if (!track) {
      track = {
        sideSince: t,
        depthOnSide: 0,
        touchedZone: false,
        farthest: 0,
        bornAt: t,
        bornDistance: distance,
        lastDistance: distance,
        lengthSum: 0,
        lengthCount: 0,
        startSideVisibleSum: 0,
        startSideVisibleCount: 0,
        awayMinVisible: Infinity,
      };
      this.tracks.set(bee.trackId, track);
      this.births.push({ t, x: bee.x, y: bee.y });
      while (this.births[0]!.t < t - BIRTH_MEMORY_SECONDS) this.births.shift();
    }
    track.farthest = Math.max(track.farthest, Math.abs(distance));
    track.lastDistance = distance;
    if (bee.length !== undefined && bee.length > 0) {
      track.lengthSum += bee.length;
      track.lengthCount++;
    }
    if (distance <= 0) track.touchedZone = true;
    const side: Side | undefined = distance <= -hysteresisPx ? 'inside' : distance >= hysteresisPx ? 'outside' : undefined;
    let crossing: Crossing | undefined;
    if (side) {
      if (!track.startSide) {
        track.startSide = side;
        track.startSideAt = t;
      }
      if (track.side !== side) {
        if (track.side) crossing = this.splitIfTurnedBack(track, bee.trackId, side, t, distance);
        track.side = side;
        track.sideSince = t;
        track.depthOnSide = 0;
        track.away = this.config.reversalDepthPx > 0 && side !== track.startSide ? [] : undefined;
        track.turn = undefined;
        track.awayMinVisible = Infinity;
      }
      if (bee.visibleLength !== undefined && bee.visibleLength > 0) {
        if (side === track.startSide) {
          track.startSideVisibleSum += bee.visibleLength;
          track.startSideVisibleCount++;
        } else track.awayMinVisible = Math.min(track.awayMinVisible, bee.visibleLength);
      }
      if (track.away) {
        track.away.push(t, bee.x, bee.y);
        if (!track.turn || Math.abs(distance) > track.depthOnSide) track.turn = { t, x: bee.x, y: bee.y };
      }
      track.depthOnSide = Math.max(track.depthOnSide, Math.abs(distance));
    }

    const last = track.last;
    if (last && t > last.t && t - last.t <= maxSpeedGapSeconds) {
      interval.speeds.push(Math.hypot(bee.x - last.x, bee.y - last.y) / ((t - last.t) * fps));
    }
    track.last = { t, x: bee.x, y: bee.y };

    const seen = interval.tracks.get(bee.trackId);
    if (!seen) {
      interval.tracks.set(bee.trackId, { x: bee.x, y: bee.y, firstT: t, lastT: t, maxDistance: 0 });
    } else {
      seen.lastT = t;
      seen.maxDistance = Math.max(seen.maxDistance, Math.hypot(bee.x - seen.x, bee.y - seen.y));
    }
    return crossing;
  }

  /**
   * A track about to cross back to `next`: if it crossed from its start side and went deep (`reversalDepthPx`), its
   * first part is counted now and the rest starts afresh on the side it is leaving.
   */
  private splitIfTurnedBack(track: TrackState, trackId: TrackId, next: Side, t: number, distance: number): Crossing | undefined {
    const depth = this.config.reversalDepthPx;
    const side = track.side;
    if (depth <= 0 || !side || side === track.startSide || next !== track.startSide || track.depthOnSide < depth) return undefined;
    const maxPause = this.config.reversalMaxTurnSeconds;
    if (!track.away || !track.turn) return undefined;
    if (this.flewOver(track)) return undefined;
    if (!this.vanishedAway(track) && paused(track.away, depth / 2, maxPause) && !this.partnerVanished(trackId, track.turn, side, t)) return undefined;
    const direction: Direction = side === 'inside' ? 'in' : 'out';
    const crossing = this.record(trackId, direction, track.sideSince);
    // The rest is a track of its own, born here at the edge, whose start side is the one it is leaving.
    Object.assign(track, {
      startSide: side,
      startSideAt: crossing.t,
      bornAt: t,
      bornDistance: distance,
      farthest: Math.abs(distance),
      startSideVisibleSum: 0,
      startSideVisibleCount: 0,
    });
    return crossing;
  }

  /** Whether the bee the track followed shrank to a sliver on the far side (`reversalHiddenShare`). */
  private vanishedAway(track: TrackState): boolean {
    const share = this.config.reversalHiddenShare;
    if (share <= 0 || track.startSideVisibleCount === 0 || !Number.isFinite(track.awayMinVisible)) return false;
    return track.awayMinVisible < share * (track.startSideVisibleSum / track.startSideVisibleCount);
  }

  /** Whether the track's median speed on the far side was a flight's (`reversalMaxLengthsPerSecond`). */
  private flewOver(track: TrackState): boolean {
    const limit = this.config.reversalMaxLengthsPerSecond;
    if (limit <= 0 || track.lengthCount === 0 || !track.away) return false;
    const speed = medianStepSpeed(track.away);
    return speed !== undefined && speed / (track.lengthSum / track.lengthCount) > limit;
  }

  /**
   * Whether another track that began on `side` was last seen where this one turned (within `interactionPx`, a second
   * either way) and is seen no more: the bee coming out that this track swapped with, whose own track ended where
   * the peaks merged. A bee that turns round alone leaves no such track.
   */
  private partnerVanished(trackId: TrackId, turn: { t: number; x: number; y: number }, side: Side, now: number): boolean {
    const radius = this.config.interactionPx;
    const near = (seen: { t: number; x: number; y: number }, startSide: Side | undefined) =>
      startSide === side && Math.abs(seen.t - turn.t) <= PARTNER_SECONDS && seen.t < now - GONE_SECONDS && Math.hypot(seen.x - turn.x, seen.y - turn.y) <= radius;
    if (this.ends.some((end) => near(end, end.startSide))) return true;
    for (const [id, other] of this.tracks) {
      if (id !== trackId && other.last && near(other.last, other.startSide)) return true;
    }
    return false;
  }

  /** Counts a decided crossing in the interval it happened in, or the oldest still open (a late count beats a lost one). */
  private record(trackId: TrackId, direction: Direction, t: number): Crossing {
    const interval = this.intervalFor(Math.max(t, this.closedBefore));
    if (direction === 'in') interval.beesIn++;
    else interval.beesOut++;
    return { trackId, direction, t };
  }

  /**
   * Frames two bees must stay close to count a meeting, changed while counting: the agent sets it when its camera
   * turns out to send another rate than the one the setting was made for.
   */
  setInteractionMinFrames(frames: number): void {
    if (!Number.isInteger(frames) || frames < 1) throw new Error(`interactionMinFrames must be a whole number of at least 1, got ${frames}`);
    this.config.interactionMinFrames = frames;
  }

  private observeInteractions(interval: IntervalState, bees: readonly BeeObservation[]): void {
    const { interactionPx, interactionMinFrames } = this.config;
    for (let i = 0; i < bees.length; i++) {
      const a = bees[i]!;
      for (let j = i + 1; j < bees.length; j++) {
        const b = bees[j]!;
        const key = pairKey(a.trackId, b.trackId);
        const close = Math.hypot(a.x - b.x, a.y - b.y) < interactionPx;
        let pair = this.pairs.get(key);
        if (!close) {
          if (pair) this.pairs.delete(key);
          continue;
        }
        if (!pair) {
          pair = { closeFrames: 0, counted: false };
          this.pairs.set(key, pair);
        }
        pair.closeFrames++;
        if (!pair.counted && pair.closeFrames >= interactionMinFrames) {
          pair.counted = true;
          interval.interactions++;
        }
      }
    }
  }

  /**
   * The track is over: decide its direction once, from the side it started on and the side it ended on (and, with
   * `edgeBandPx`, from a start or an end at the edge). `lost` is false for tracks ended because the video ended.
   * Attributed to the interval of the decisive side change, or the oldest interval still open when that one has
   * already been emitted (a late count beats a lost one).
   */
  endTrack(trackId: TrackId, lost = true): Crossing | null {
    const track = this.tracks.get(trackId);
    if (!track) return null;
    this.tracks.delete(trackId);
    if (track.last) {
      this.ends.push({ ...track.last, startSide: track.startSide });
      while (this.ends[0]!.t < track.last.t - BIRTH_MEMORY_SECONDS) this.ends.shift();
    }
    for (const key of this.pairs.keys()) if (pairHas(key, trackId)) this.pairs.delete(key);

    let direction: Direction | null =
      track.startSide === 'outside' && track.side === 'inside' ? 'in' : track.startSide === 'inside' && track.side === 'outside' ? 'out' : null;
    let t = direction ? track.sideSince : (track.last?.t ?? track.sideSince);
    if (!direction && track.startSide && track.side === track.startSide) {
      const repaired = this.edgeRepair(track, lost);
      if (repaired) ({ direction, t } = repaired);
    }
    if (!direction) {
      if (track.touchedZone) this.intervalFor(Math.max(t, this.closedBefore)).unknownDirection++;
      return null;
    }
    return this.record(trackId, direction, t);
  }

  /** The crossing a track that began or was lost at the zone's edge stands for, if any (see `edgeBandPx`). */
  private edgeRepair(track: TrackState, lost: boolean): { direction: Direction; t: number } | null {
    const band = this.config.edgeBandPx;
    const side = track.side;
    if (band <= 0 || !side || !track.last) return null;
    const bornAtEdge = Math.abs(track.bornDistance) < band && track.bornAt - (this.firstFrameT ?? track.bornAt) >= 1;
    // Begun at the edge and walked off at least as far again: a fanner or a guard standing there decides nothing.
    if (bornAtEdge && track.farthest - Math.abs(track.bornDistance) >= band) {
      return { direction: side === 'inside' ? 'in' : 'out', t: track.startSideAt ?? track.bornAt };
    }
    const last = track.last;
    const lostAtEdge = lost && Math.abs(track.lastDistance) < band && track.farthest - Math.abs(track.lastDistance) >= band;
    // A track beginning near where this one was lost has the bee (and counts it if it walks off).
    const pickedUp = this.births.some((b) => b.t >= last.t - PICKUP_LEAD_SECONDS && Math.hypot(b.x - last.x, b.y - last.y) < 2 * band);
    if (lostAtEdge && !pickedUp) return { direction: side === 'outside' ? 'in' : 'out', t: last.t };
    return null;
  }

  /** Track ids the aggregator still holds (seen and not yet ended). */
  activeTracks(): TrackId[] {
    return [...this.tracks.keys()];
  }

  /** Emits the intervals that end at or before `t`, oldest first; later counts for them go to the next open one. */
  closeIntervalsBefore(t: number): IntervalSummary[] {
    const due = [...this.intervals.values()]
      .filter((interval) => interval.start + this.config.intervalSeconds <= t)
      .sort((a, b) => a.start - b.start);
    for (const interval of due) this.intervals.delete(interval.start);
    const last = due.at(-1);
    if (last) this.closedBefore = Math.max(this.closedBefore, last.start + this.config.intervalSeconds);
    return due.map((interval) => this.summarize(interval));
  }

  /**
   * The intervals not emitted yet, as they stand, oldest first; they stay open. What an agent saves so that a restart
   * loses no counts (it merges them into the next run's intervals of the same end).
   */
  openIntervals(): IntervalSummary[] {
    return [...this.intervals.values()].sort((a, b) => a.start - b.start).map((interval) => this.summarize(interval));
  }

  /** Ends every track still open and emits every interval, oldest first. */
  flush(): IntervalSummary[] {
    for (const trackId of [...this.tracks.keys()]) this.endTrack(trackId, false);
    return this.closeIntervalsBefore(Infinity);
  }

  private intervalFor(t: number): IntervalState {
    const start = intervalStartOf(t, this.config.intervalSeconds);
    let interval = this.intervals.get(start);
    if (!interval) {
      interval = { start, frames: 0, speeds: [], beesIn: 0, beesOut: 0, interactions: 0, unknownDirection: 0, tracks: new Map() };
      this.intervals.set(start, interval);
    }
    return interval;
  }

  private summarize(interval: IntervalState): IntervalSummary {
    const { stationaryPx, stationaryMinSeconds, intervalSeconds } = this.config;
    let stationary = 0;
    for (const seen of interval.tracks.values()) {
      if (seen.lastT - seen.firstT >= stationaryMinSeconds && seen.maxDistance < stationaryPx) stationary++;
    }
    const speeds = interval.speeds;
    const summary: IntervalSummary = {
      intervalStart: interval.start,
      intervalEnd: interval.start + intervalSeconds,
      beesIn: interval.beesIn,
      beesOut: interval.beesOut,
      netFlow: interval.beesIn - interval.beesOut,
      speedSamples: speeds.length,
      stationaryBees: stationary,
      detectedBees: interval.tracks.size,
      beeInteractions: interval.interactions,
      unknownDirection: interval.unknownDirection,
      frames: interval.frames,
    };
    if (speeds.length > 0) {
      summary.avgSpeed = round(speeds.reduce((sum, s) => sum + s, 0) / speeds.length);
      summary.p95Speed = round(percentile(speeds, 95)!);
    }
    return summary;
  }
}

/**
 * Whether the track stayed within `radius` of one spot for `seconds` or longer while away from its start side: a bee
 * turning round stops to do it; a swap at a merged peak turns the track without a pause.
 */
function paused(points: readonly number[], radius: number, seconds: number): boolean {
  const count = points.length / 3;
  for (let i = 0; i < count; i++) {
    const x = points[3 * i + 1]!;
    const y = points[3 * i + 2]!;
    let last = i;
    while (last + 1 < count && Math.hypot(points[3 * (last + 1) + 1]! - x, points[3 * (last + 1) + 2]! - y) <= radius) last++;
    if (points[3 * last]! - points[3 * i]! >= seconds) return true;
  }
  return false;
}

/** Median of the speeds (px/s) between consecutive sightings in a flat t, x, y list; undefined for fewer than two. */
function medianStepSpeed(points: readonly number[]): number | undefined {
  const speeds: number[] = [];
  for (let i = 3; i < points.length; i += 3) {
    const dt = points[i]! - points[i - 3]!;
    if (dt > 0) speeds.push(Math.hypot(points[i + 1]! - points[i - 2]!, points[i + 2]! - points[i - 1]!) / dt);
  }
  return percentile(speeds, 50);
}

function pairKey(a: TrackId, b: TrackId): string {
  const [first, second] = String(a) < String(b) ? [a, b] : [b, a];
  return `${String(first)}\u0000${String(second)}`;
}

function pairHas(key: string, trackId: TrackId): boolean {
  const [a, b] = key.split('\u0000');
  return a === String(trackId) || b === String(trackId);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** The record the movement endpoint takes; its timestamp is the interval's end. */
export function toMovementInput(summary: IntervalSummary, hiveId: string | number, boxId: string | number): EntranceMovementInput {
  const record: EntranceMovementInput = {
    hiveId,
    boxId,
    beesOut: summary.beesOut,
    beesIn: summary.beesIn,
    netFlow: summary.netFlow,
    stationaryBees: summary.stationaryBees,
    detectedBees: summary.detectedBees,
    beeInteractions: summary.beeInteractions,
    timestamp: summary.intervalEnd,
  };
  if (summary.avgSpeed !== undefined) record.avgSpeed = summary.avgSpeed;
  if (summary.p95Speed !== undefined) record.p95Speed = summary.p95Speed;
  return record;
}
