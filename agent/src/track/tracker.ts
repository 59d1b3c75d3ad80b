import { insideArea, type Area, type Detection } from '../detect/types.ts';
import { assign } from './hungarian.ts';
import { ConstantVelocityKalman, type KalmanOptions } from './kalman.ts';

export interface TrackerOptions {
  /** Detections at or above this score take part in the first association pass. */
  highScore?: number;
  /** Detections between this and `highScore` only extend existing confirmed tracks (ByteTrack's second pass). */
  lowScore?: number;
  /** A new track needs a detection at least this confident. */
  birthScore?: number;
  /** Consecutive hits before a track is confirmed (reported, counted). */
  minHits?: number;
  /** Processed frames a confirmed track may go unseen before it ends. */
  maxMissedFrames?: number;
  /** Match radius around the prediction, in bee lengths, on top of the prediction's own uncertainty. */
  gateLengths?: number;
  /** Upper bound of the match radius, in bee lengths. */
  maxGateLengths?: number;
  /**
   * Upper bound of the match radius of a track that went unseen in the previous frame(s), in bee lengths. Its
   * prediction grows uncertain fast, and a wide gate then catches the next bee that appears nearby (a bee
   * vanishing into the slot as another comes out), which costs both their counts.
   */
  lostGateLengths?: number;
  /**
   * For a detection that says how far its bee moved since the previous frame (a two-frame model): what a
   * disagreement between that movement and a track's velocity over the same time costs, per bee length, on top
   * of the distance from the track's prediction (also per bee length). Where bees meet, positions alone are
   * ambiguous (a forager walking past a guard, their peaks merged for a few frames); how each detection moved is
   * not. 0 ignores movements.
   */
  movementWeight?: number;
  /**
   * A track found again after this many unseen frames is watched: if the bee it found then heads back the way the
   * lost one came (a bee gone into the slot, another coming out where it vanished), the track is split at the gap
   * into two bees. 0 turns this off.
   */
  splitAfterMissedFrames?: number;
  /** Bee length used before a track has its own size estimate, px. */
  beeLengthPx?: number;
  kalman?: Partial<KalmanOptions>;
}

/** The tracker's defaults, for the model's detections; the agent's config starts from these (one place for them). */
export const TRACKER_DEFAULTS: Readonly<Required<Omit<TrackerOptions, 'kalman'>>> = {
  highScore: 0.5,
  lowScore: 0.1,
  birthScore: 0.65,
  minHits: 3,
  maxMissedFrames: 20,
  gateLengths: 0.15,
  maxGateLengths: 4,
  lostGateLengths: 1,
  movementWeight: 4,
  splitAfterMissedFrames: 1,
  beeLengthPx: 40,
};

// initialSpeedStd sets how far a newborn track looks for its second detection (3σ = 60 px at 30 fps, plus
// gateLengths): wide enough for a bee crossing 1.5 lengths per frame, narrow enough that scattered false
// detections rarely chain into three consistent hits. accelerationStd: bees turn and stop, but a filter that
// expects violent acceleration trusts its velocity too little and swaps bees whose paths cross (on the
// simulator's training scenes with the shipped model, 400 gave a fifth fewer identity switches than 1500 and
// half the count error).
const DEFAULT_KALMAN: KalmanOptions = { accelerationStd: 400, measurementStd: 3, initialSpeedStd: 600 };

/** A point of a track's path: centre in frame px, wall-clock ms. */
export interface TrackPoint {
  x: number;
  y: number;
  t: number;
}

export interface TrackView {
  id: number;
  x: number;
  y: number;
  w: number;
  h: number;
  /** Velocity, px/s. */
  vx: number;
  vy: number;
  score: number;
  /**
   * The longer side of this frame's detection box, not smoothed: how much of the bee is in view. A bee walking into
   * the slot shrinks to a sliver in a few frames, which `w` and `h` smooth away.
   */
  visibleLength: number;
}

export interface EndedTrack {
  id: number;
  /** Measured centres, oldest first, from the track's first detection. */
  points: TrackPoint[];
}

export interface TrackerUpdate {
  /**
   * Confirmed tracks that a detection supported in this frame, and, where their filters put them, those outside the
   * part of the frame the detector looked at that were found the last time they were looked for.
   */
  tracks: TrackView[];
  /** Confirmed tracks that ended in this update (out of sight for too long). */
  ended: EndedTrack[];
}

interface Track {
  id: number;
  filter: ConstantVelocityKalman;
  w: number;
  h: number;
  /** The longer side of the last detection's box (see `TrackView.visibleLength`). */
  visibleLength: number;
  score: number;
  hits: number;
  missed: number;
  confirmed: boolean;
  points: TrackPoint[];
  /** Velocity when last seen, px/s (a lost track's filter keeps predicting from it). */
  seenVelocity: { vx: number; vy: number };
  /**
   * Set when the track was found again after a gap: where its points resumed, and how the lost bee moved and how
   * long it was before the gap (the bee found may be another, whose size the track then takes on).
   */
  resumed?: { index: number; vx: number; vy: number; length: number };
}

/**
 * Multi-object tracker for bees: Kalman prediction, Hungarian assignment on centre distance gated by bee
 * size (overlap-based matching fails when a bee moves further than its own length between frames), and
 * ByteTrack's second pass that lets low-confidence detections keep existing tracks alive. Pure: no I/O.
 */
export class BeeTracker {
  private readonly options: Required<Omit<TrackerOptions, 'kalman'>>;
  private readonly kalman: KalmanOptions;
  private tracks: Track[] = [];
  private nextId = 1;
  private lastTimestamp: number | undefined;

  constructor(options: TrackerOptions = {}) {
    const { kalman, ...rest } = options;
    this.options = { ...TRACKER_DEFAULTS, ...rest };
    this.kalman = { ...DEFAULT_KALMAN, ...kalman };
    for (const [key, value] of Object.entries({ ...this.options, ...this.kalman })) {
      if (!Number.isFinite(value) || value < 0) throw new Error(`tracker.${key} must be a non-negative number, got ${String(value)}`);
    }
    if (this.options.lowScore > this.options.highScore) throw new Error('tracker.lowScore must not exceed tracker.highScore');
  }

  /** The settings counted in frames (they hold a time only at the frame rate they were set for). */
  get frameCounts(): { minHits: number; maxMissedFrames: number } {
    return { minHits: this.options.minHits, maxMissedFrames: this.options.maxMissedFrames };
  }

  /** Changes the settings counted in frames while tracking, for frames that turn out to come at another rate. */
  setFrameCounts(counts: { minHits: number; maxMissedFrames: number }): void {
    for (const [key, value] of Object.entries({ minHits: counts.minHits, maxMissedFrames: counts.maxMissedFrames })) {
      if (!Number.isInteger(value) || value < 0) throw new Error(`tracker.${key} must be a whole number of at least 0, got ${String(value)}`);
    }
    this.options.minHits = counts.minHits;
    this.options.maxMissedFrames = counts.maxMissedFrames;
  }

  /** Number of tracks alive (tentative and confirmed). */
  get size(): number {
    return this.tracks.length;
  }

  /** `looked`: the part of the frame the detector looked at, when not all of it (`Detector.lastLooked`). */
  update(timestampMs: number, detections: readonly Detection[], looked?: Area): TrackerUpdate {
    const dt = this.lastTimestamp === undefined ? 0 : Math.max(0, (timestampMs - this.lastTimestamp) / 1000);
    this.lastTimestamp = timestampMs;
    for (const track of this.tracks) track.filter.predict(dt);

    const high: number[] = [];
    const low: number[] = [];
    detections.forEach((d, i) => {
      if (d.score >= this.options.highScore) high.push(i);
      else if (d.score >= this.options.lowScore) low.push(i);
    });
    const confirmed = this.tracks.filter((t) => t.confirmed);
    const tentative = this.tracks.filter((t) => !t.confirmed);
    const matched = new Set<Track>();

    const first = this.associate(confirmed, high, detections, dt);
    this.apply(first.pairs, detections, timestampMs, matched);
    const second = this.associate(first.freeTracks, low, detections, dt);
    this.apply(second.pairs, detections, timestampMs, matched);
    const third = this.associate(tentative, first.freeDetections, detections, dt);
    this.apply(third.pairs, detections, timestampMs, matched);

    const ended: EndedTrack[] = [];
    const survivors: Track[] = [];
    // Not looked for is not missed: such a track goes on where its filter predicts, neither older nor closer to death,
    // and one seen the last time it was looked for is reported there.
    const unseen = (track: Track) => looked !== undefined && !insideArea(track.filter, looked);
    const coasting = new Set<Track>();
    for (const track of this.tracks) {
      if (!matched.has(track) && unseen(track)) {
        if (track.missed === 0) coasting.add(track);
      } else if (!matched.has(track)) {
        track.missed++;
        // ByteTrack drops an unconfirmed track the first time it goes unseen: that is what kills one-frame noise.
        const dead = !track.confirmed || track.missed > this.options.maxMissedFrames;
        if (dead) {
          if (track.confirmed) ended.push({ id: track.id, points: track.points });
          continue;
        }
      }
      survivors.push(track);
    }
    this.tracks = survivors;
    for (const track of [...this.tracks]) {
      const split = this.splitIfReversed(track);
      if (split) ended.push(split);
    }

    for (const index of third.freeDetections) {
      const d = detections[index]!;
      if (d.score < this.options.birthScore) continue;
      const track: Track = {
        id: this.nextId++,
        filter: new ConstantVelocityKalman(d.x, d.y, this.kalman),
        w: d.w,
        h: d.h,
        visibleLength: Math.max(d.w, d.h),
        score: d.score,
        hits: 1,
        missed: 0,
        confirmed: this.options.minHits <= 1,
        points: [{ x: d.x, y: d.y, t: timestampMs }],
        seenVelocity: { vx: 0, vy: 0 },
      };
      this.tracks.push(track);
      if (track.confirmed) matched.add(track);
    }

    const tracks: TrackView[] = [];
    for (const track of this.tracks) {
      if (!track.confirmed || !(matched.has(track) || coasting.has(track))) continue;
      const f = track.filter;
      tracks.push({ id: track.id, x: f.x, y: f.y, w: track.w, h: track.h, vx: f.vx, vy: f.vy, score: track.score, visibleLength: track.visibleLength });
    }
    return { tracks, ended };
  }

  /** Ends every confirmed track (end of a file, shutdown). */
  flush(): EndedTrack[] {
    const ended = this.tracks.filter((t) => t.confirmed).map((t) => ({ id: t.id, points: t.points }));
    this.tracks = [];
    return ended;
  }

  /** How long after a resumption a reversal still splits the track, ms. */
  private static readonly SPLIT_WINDOW_MS = 1000;

  /**
   * Watches a track found again after a gap: once the bee it found has moved half a bee length, a heading more
   * than 120° from the lost bee's means two bees; the part before the gap ends (and is counted) as one track,
   * the rest goes on under a new id.
   */
  private splitIfReversed(track: Track): EndedTrack | undefined {
    const resumed = track.resumed;
    if (!resumed) return undefined;
    const from = track.points[resumed.index]!;
    const to = track.points.at(-1)!;
    if (to.t - from.t > BeeTracker.SPLIT_WINDOW_MS) {
      track.resumed = undefined;
      return undefined;
    }
    const length = resumed.length;
    const before = Math.hypot(resumed.vx, resumed.vy);
    if (before < 0.5 * length) {
      // Too slow before the gap for a heading to mean anything.
      track.resumed = undefined;
      return undefined;
    }
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const moved = Math.hypot(dx, dy);
    if (moved < 0.5 * length) return undefined;
    track.resumed = undefined;
    if ((dx * resumed.vx + dy * resumed.vy) / (moved * before) > -0.5) return undefined;
    const endedPart: EndedTrack = { id: track.id, points: track.points.slice(0, resumed.index) };
    track.id = this.nextId++;
    track.points = track.points.slice(resumed.index);
    return endedPart;
  }

  /** The track's bee length, px: its smoothed size, or the configured length before it has one. */
  private lengthOf(track: Track): number {
    return Math.max(track.w, track.h) > 0 ? Math.max(track.w, track.h) : this.options.beeLengthPx;
  }

  /** `dt`: seconds since the previous update, the time a detection's movement covers. */
  private associate(tracks: Track[], candidates: number[], detections: readonly Detection[], dt: number) {
    if (tracks.length === 0 || candidates.length === 0) return { pairs: [] as [Track, number][], freeTracks: tracks, freeDetections: candidates };
    const costs = tracks.map((track) => {
      const length = this.lengthOf(track);
      const spread = track.filter.predictionSpread();
      const cap = track.missed > 0 ? Math.min(this.options.lostGateLengths, this.options.maxGateLengths) : this.options.maxGateLengths;
      const radius = Math.min(cap * length, this.options.gateLengths * length + 3 * spread);
      const { movementWeight } = this.options;
      // The track's own idea of how far its bee moved since the previous frame.
      const stepX = track.filter.vx * dt;
      const stepY = track.filter.vy * dt;
      return candidates.map((index) => {
        const d = detections[index]!;
        const distance = Math.hypot(d.x - track.filter.x, d.y - track.filter.y);
        if (distance > radius) return Infinity;
        if (!d.movement || movementWeight === 0) return distance / length;
        return (distance + movementWeight * Math.hypot(d.movement.dx - stepX, d.movement.dy - stepY)) / length;
      });
    });
    const pairs: [Track, number][] = [];
    const usedTracks = new Set<number>();
    const usedDetections = new Set<number>();
    for (const [row, col] of assign(costs)) {
      pairs.push([tracks[row]!, candidates[col]!]);
      usedTracks.add(row);
      usedDetections.add(col);
    }
    return {
      pairs,
      freeTracks: tracks.filter((_, i) => !usedTracks.has(i)),
      freeDetections: candidates.filter((_, i) => !usedDetections.has(i)),
    };
  }

  private apply(pairs: [Track, number][], detections: readonly Detection[], timestampMs: number, matched: Set<Track>): void {
    for (const [track, index] of pairs) {
      const d = detections[index]!;
      const { splitAfterMissedFrames } = this.options;
      // Found again after a gap: noted before this detection's size is mixed into the track's.
      if (track.confirmed && splitAfterMissedFrames > 0 && track.missed >= splitAfterMissedFrames) {
        track.resumed = { index: track.points.length, ...track.seenVelocity, length: this.lengthOf(track) };
      }
      track.filter.update(d.x, d.y);
      // Size changes slowly (a bee turning); smooth it so one odd blob does not swing the gate.
      track.w = 0.7 * track.w + 0.3 * d.w;
      track.h = 0.7 * track.h + 0.3 * d.h;
      track.visibleLength = Math.max(d.w, d.h);
      track.score = d.score;
      track.hits++;
      track.missed = 0;
      if (!track.confirmed && track.hits >= this.options.minHits) track.confirmed = true;
      track.points.push({ x: d.x, y: d.y, t: timestampMs });
      track.seenVelocity = { vx: track.filter.vx, vy: track.filter.vy };
      matched.add(track);
    }
  }
}
