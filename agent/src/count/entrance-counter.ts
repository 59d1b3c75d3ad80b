import {
  MovementAggregator,
  toMovementInput,
  type CountingConfig,
  type Crossing,
  type EntranceMovementInput,
  type IntervalSummary,
} from '@hivegate/shared';
import type { EndedTrack, TrackView } from '../track/tracker.ts';
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
 */
export class EntranceCounter {
  private readonly aggregator: MovementAggregator;
  private readonly batcher: TrajectoryBatcher;
  /** First time (s) each live track was reported: a crossing is attributed no earlier than that. */
  private readonly firstSeen = new Map<number, number>();
  private readonly maxLateness: number;

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
    const summaries = this.aggregator.closeIntervalsBefore(Math.max(safe, t - this.maxLateness));
    return this.output(summaries, this.batcher.add(ended, timestampMs), crossings);
  }

  /** End of input (file done, shutdown): ends the remaining tracks and emits every interval and batch. */
  flush(remaining: readonly EndedTrack[]): CounterOutput {
    const crossings = this.endTracks(remaining, false);
    const summaries = this.aggregator.flush();
    const trajectories = [...this.batcher.add(remaining, Number.NEGATIVE_INFINITY), ...this.batcher.flush()];
    return this.output(summaries, trajectories, crossings);
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

  private output(summaries: IntervalSummary[], trajectories: TrajectoryUpload[], crossings: Crossing[]): CounterOutput {
    return {
      movements: summaries.map((s) => toMovementInput(s, this.options.hiveId, this.options.boxId)),
      summaries,
      trajectories,
      crossings,
    };
  }
}
