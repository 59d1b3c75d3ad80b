import { createHash } from 'node:crypto';
import { MAX_POINTS_PER_TRACK, type TrajectoryUpload as TrajectoryUploadBody } from '@hivegate/shared';
import type { EndedTrack } from '../track/tracker.ts';

/**
 * Body of `POST /api/entrance-heatmaps/trajectories` (schema in the shared package), as this agent always fills it:
 * an ISO-8601 timestamp of the batch's earliest point, and a batchId derived from the content, so re-creating the
 * same batch (a replayed file) dedupes.
 */
export type TrajectoryUpload = TrajectoryUploadBody & { timestamp: string; batchId: string };

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
    for (const track of tracks) {
      // The cloud takes at most MAX_POINTS_PER_TRACK points per track (a bee resting a minute at 30 fps has more):
      // a long track goes as several entries `id`, `id.1`, … so every point is still counted.
      for (let start = 0, part = 0; start < track.points.length; start += MAX_POINTS_PER_TRACK, part += 1) {
        trackHistory[part === 0 ? String(track.id) : `${track.id}.${part}`] = track.points.slice(start, start + MAX_POINTS_PER_TRACK);
      }
    }
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
