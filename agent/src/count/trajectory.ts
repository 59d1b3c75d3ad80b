import { createHash } from 'node:crypto';
import type { EndedTrack } from '../track/tracker.ts';

/**
 * Body of `POST /api/entrance-heatmaps/trajectories`, in the shape the existing entrance-observer clients send.
 * The shared package has no schema for it yet; when it gains one, this type should be replaced by an import.
 */
export interface TrajectoryUpload {
  boxId: string | number;
  /** ISO-8601 time of the batch's earliest point. */
  timestamp: string;
  frameDimensions: { width: number; height: number };
  trackHistory: Record<string, [number, number][]>;
  /** Derived from the content, so re-creating the same batch (a replayed file) dedupes. */
  batchId: string;
}

export interface TrajectoryBatchOptions {
  boxId: string | number;
  frameWidth: number;
  frameHeight: number;
  /** A batch is sent once it holds this many tracks... */
  maxTracks?: number;
  /** ...or its oldest track ended this long ago (seconds)... */
  maxAgeSeconds?: number;
  /** Tracks with fewer points carry no path worth drawing. */
  minPoints?: number;
}

interface Pending {
  id: number;
  startMs: number;
  endMs: number;
  points: [number, number][];
}

/**
 * Collects finished tracks into trajectory uploads. A batch never spans two UTC dates, because the cloud keeps
 * one heatmap per box and UTC day and files a batch under its timestamp's day. Pure.
 */
export class TrajectoryBatcher {
  private pending: Pending[] = [];
  private readonly maxTracks: number;
  private readonly maxAgeMs: number;
  private readonly minPoints: number;

  constructor(private readonly options: TrajectoryBatchOptions) {
    this.maxTracks = options.maxTracks ?? 100;
    this.maxAgeMs = (options.maxAgeSeconds ?? 300) * 1000;
    this.minPoints = options.minPoints ?? 3;
  }

  /** Adds finished tracks; returns the batches completed by them or by the passage of time (`nowMs`). */
  add(tracks: readonly EndedTrack[], nowMs: number): TrajectoryUpload[] {
    const out: TrajectoryUpload[] = [];
    for (const track of tracks) {
      if (track.points.length < this.minPoints) continue;
      const startMs = track.points[0]!.t;
      const first = this.pending[0];
      if (first && utcDate(first.startMs) !== utcDate(startMs)) out.push(this.take());
      this.pending.push({
        id: track.id,
        startMs,
        endMs: track.points.at(-1)!.t,
        points: track.points.map((p) => [round1(p.x), round1(p.y)]),
      });
      if (this.pending.length >= this.maxTracks) out.push(this.take());
    }
    const oldest = this.pending[0];
    if (oldest && nowMs - oldest.endMs >= this.maxAgeMs) out.push(this.take());
    return out;
  }

  flush(): TrajectoryUpload[] {
    return this.pending.length > 0 ? [this.take()] : [];
  }

  private take(): TrajectoryUpload {
    const tracks = this.pending;
    this.pending = [];
    const startMs = Math.min(...tracks.map((t) => t.startMs));
    const trackHistory: Record<string, [number, number][]> = {};
    for (const track of tracks) trackHistory[String(track.id)] = track.points;
    const timestamp = new Date(startMs).toISOString();
    const frameDimensions = { width: this.options.frameWidth, height: this.options.frameHeight };
    const batchId = createHash('sha256')
      .update(JSON.stringify([this.options.boxId, timestamp, frameDimensions, tracks.map((t) => [t.id, t.startMs, t.points])]))
      .digest('hex')
      .slice(0, 32);
    return { boxId: this.options.boxId, timestamp, frameDimensions, trackHistory, batchId };
  }
}

function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
