import {
  MovementAggregator,
  toMovementInput,
  type CountingConfig,
  type Crossing,
  type EntranceMovementInput,
  type IntervalSummary,
} from '@hivegate/shared';
import type { EndedTrack, TrackView } from '../track/tracker.ts';
import { addOpenIntervals, mergeIntervalParts, openIntervalKey, type OpenInterval } from './open-intervals.ts';
import { TrajectoryBatcher, type TrajectoryUpload } from './trajectory.ts';

export interface EntranceCounterOptions {
  counting: CountingConfig;
  hiveId: string | number;
  boxId: string | number;
  frameWidth: number;
  frameHeight: number;
  /** An interval is emitted at the latest this long after it ended, even if a bee seen in it is still tracked. */
  maxLatenessSeconds?: number;
  trajectories?: { maxTracks?: number; maxAgeSeconds?: number; minPoints?: number };
}

export interface CounterOutput {
  /** Closed intervals, ready for the movement endpoint. */
  movements: EntranceMovementInput[];
  /** The same intervals with the local-only fields (unknown direction, frame count). */
  summaries: IntervalSummary[];
  trajectories: TrajectoryUpload[];
  crossings: Crossing[];
}

/**
 * Glue between the tracker and the shared counting rules: feeds confirmed tracks frame by frame, decides a
 * direction when the tracker drops a track, and closes intervals once no live track can still be attributed to
 * them. Pure: time comes from the frames.
 *
 * A run that goes on where an earlier one stopped (a live agent restarted) takes that run's open intervals
 * (`restore`) and emits each of them once, merged with its own part of the same interval, when it closes that one;
 * `openIntervals` and `suspend` give what such a run must be handed.
 */
export class EntranceCounter {
  private readonly aggregator: MovementAggregator;
  private readonly batcher: TrajectoryBatcher;
  /** First time (s) each live track was reported: a crossing is attributed no earlier than that. */
  private readonly firstSeen = new Map<number, number>();
  private readonly maxLateness: number;
  /** Parts of intervals an earlier run counted, by record identity, until emitted with this run's part. */
  private readonly carried = new Map<string, OpenInterval>();
  private framesSeen = false;

  constructor(private readonly options: EntranceCounterOptions) {
    this.aggregator = new MovementAggregator(options.counting);
    this.batcher = new TrajectoryBatcher({
      boxId: options.boxId,
      frameWidth: options.frameWidth,
      frameHeight: options.frameHeight,
      ...options.trajectories,
    });
    this.maxLateness = options.maxLatenessSeconds ?? 120;
  }

  /** Frames two bees must stay close to count a meeting, for frames that turn out to come at another rate. */
  setInteractionMinFrames(frames: number): void {
    this.aggregator.setInteractionMinFrames(frames);
  }

  /** One processed frame: the confirmed tracks seen in it and the tracks that ended with it. */
  onFrame(timestampMs: number, tracks: readonly TrackView[], ended: readonly EndedTrack[]): CounterOutput {
    this.framesSeen = true;
    const t = timestampMs / 1000;
    const crossings = this.aggregator.observeFrame(
      t,
      tracks.map((track) => ({ trackId: track.id, x: track.x, y: track.y, length: Math.max(track.w, track.h), visibleLength: track.visibleLength })),
    );
    for (const track of tracks) if (!this.firstSeen.has(track.id)) this.firstSeen.set(track.id, t);
    crossings.push(...this.endTracks(ended));
    // A live track may still be decided with a side change as early as its first sighting; wait for it,
    // but never longer than the lateness allowance (a bee parked on the board for an hour).
    let safe = t;
    for (const since of this.firstSeen.values()) safe = Math.min(safe, since);
    const closeBefore = Math.max(safe, t - this.maxLateness);
    const intervals = this.withCarried(this.aggregator.closeIntervalsBefore(closeBefore), closeBefore);
    return this.output(intervals, this.batcher.add(ended, timestampMs), crossings);
  }

  /** End of input (a file done): ends the remaining tracks and emits every interval and batch. */
  flush(remaining: readonly EndedTrack[]): CounterOutput {
    const crossings = this.endTracks(remaining, false);
    const intervals = this.withCarried(this.aggregator.flush(), Infinity);
    return this.output(intervals, this.endBatches(remaining), crossings);
  }

  /**
   * A stop the next run goes on from: ends the remaining tracks (their crossings counted) and emits every trajectory
   * batch, but no interval: those are `openIntervals`, for the next run to complete.
   */
  suspend(remaining: readonly EndedTrack[]): CounterOutput {
    const crossings = this.endTracks(remaining, false);
    return this.output([], this.endBatches(remaining), crossings);
  }

  /** The intervals not emitted yet, this run's parts merged with the earlier runs' it was handed, oldest first. */
  openIntervals(): OpenInterval[] {
    const open = new Map<string, OpenInterval>(this.carried);
    addOpenIntervals(open, this.aggregator.openIntervals().map((summary) => this.own(summary)));
    return [...open.values()].sort(byEnd);
  }

  /**
   * Open intervals an earlier run saved, before this run's first frame: each is emitted once, with this run's part
   * of the same interval if it has one, when the counter closes that interval (at the latest, `flush`).
   */
  restore(intervals: readonly OpenInterval[]): void {
    if (this.framesSeen) throw new Error('open intervals are restored before the first frame');
    addOpenIntervals(this.carried, intervals);
  }

  /** The closed intervals with the earlier runs' parts merged in, and the earlier runs' intervals that end by `before`. */
  private withCarried(summaries: readonly IntervalSummary[], before: number): OpenInterval[] {
    const closed = summaries.map((summary) => this.own(summary));
    for (const interval of closed) {
      const key = openIntervalKey(interval);
      const earlier = this.carried.get(key);
      if (!earlier) continue;
      interval.summary = mergeIntervalParts(earlier.summary, interval.summary);
      this.carried.delete(key);
    }
    for (const [key, earlier] of this.carried) {
      if (earlier.summary.intervalEnd > before) continue;
      closed.push(earlier);
      this.carried.delete(key);
    }
    return closed.sort(byEnd);
  }

  private own(summary: IntervalSummary): OpenInterval {
    return { hiveId: this.options.hiveId, boxId: this.options.boxId, summary };
  }

  private endBatches(remaining: readonly EndedTrack[]): TrajectoryUpload[] {
    return [...this.batcher.add(remaining, Number.NEGATIVE_INFINITY), ...this.batcher.flush()];
  }

  /** `lost`: the tracker lost these bees (false when the input ended with them still in view). */
  private endTracks(ended: readonly EndedTrack[], lost = true): Crossing[] {
    const crossings: Crossing[] = [];
    for (const track of ended) {
      this.firstSeen.delete(track.id);
      const crossing = this.aggregator.endTrack(track.id, lost);
      if (crossing) crossings.push(crossing);
    }
    return crossings;
  }

  private output(intervals: readonly OpenInterval[], trajectories: TrajectoryUpload[], crossings: Crossing[]): CounterOutput {
    return {
      // An earlier run's interval keeps the hive and box it was counted for (the config may name others now).
      movements: intervals.map((i) => toMovementInput(i.summary, i.hiveId, i.boxId)),
      summaries: intervals.map((i) => i.summary),
      trajectories,
      crossings,
    };
  }
}

function byEnd(a: OpenInterval, b: OpenInterval): number {
  return a.summary.intervalEnd - b.summary.intervalEnd;
}
