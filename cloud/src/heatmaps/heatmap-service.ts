import pngjs from 'pngjs';
import type { FastifyBaseLogger } from 'fastify';
import type { TrajectoryUpload } from '@hivegate/shared';
import type { HeatmapConfig } from '../config.ts';
import type { Queryable } from '../db/database.ts';
import type { JobQueue, RunningJob } from '../jobs/job-queue.ts';
import type { BlobStore } from '../storage/index.ts';
import { POSTER_PNG } from '../video/video-service.ts';
import type { GateVideosRepository } from '../video/videos-repository.ts';
import { binTrajectories, type BinnedTrajectories, type GridSize } from './grid.ts';
import { GridMismatchError, type HeatmapDay, type HeatmapsRepository } from './heatmaps-repository.ts';
import { heatmapImageKey, imageSizeFor } from './keys.ts';
import { renderHeatmapPng, type RgbaImage } from './render.ts';

export const RENDER_JOB = 'heatmap.render';

interface RenderPayload {
  ownerId: number;
  boxId: string;
  date: string;
}

interface WaitingUpload {
  tracks: number[][][];
  grid: GridSize;
  binned: BinnedTrajectories;
  sampleAt: Date;
  frame: { width: number; height: number };
  batchId?: string;
  resolve: (counted: boolean) => void;
  reject: (err: unknown) => void;
}

interface WaitingDay {
  ownerId: number;
  boxId: string;
  date: string;
  uploads: WaitingUpload[];
}

function sameGrid(a: GridSize, b: GridSize): boolean {
  return a.cols === b.cols && a.rows === b.rows;
}

export interface IngestOutcome {
  duplicate: boolean;
  trajectories: number;
  points: number;
}

/**
 * Daily entrance heatmaps: trajectory uploads are binned and added to the day's grid at once; the PNG is rendered
 * later by a debounced job (one waiting render per box and day, due `renderDebounceSeconds` after the first upload
 * that found none waiting), over the newest poster of the box's videos when there is one.
 */
export class HeatmapService {
  /** Uploads waiting for their day's next write, by day. */
  private readonly waiting = new Map<string, WaitingDay>();
  /** Days being written now. */
  private readonly writing = new Set<string>();

  constructor(
    private readonly deps: {
      heatmaps: HeatmapsRepository;
      videos: GateVideosRepository;
      blobs: BlobStore;
      jobs: JobQueue;
      config: HeatmapConfig;
      log: FastifyBaseLogger;
    },
  ) {}

  defineJobs(): void {
    this.deps.jobs.define<RenderPayload>(RENDER_JOB, {
      quick: true,
      maxAttempts: 5,
      backoff: { baseSeconds: 5, maxSeconds: 120 },
      run: (job) => this.render(job),
    });
  }

  /**
   * Adds an upload (already validated) to its day; the UTC date of `instant` picks the day. Resolves once the
   * counts are committed. Uploads to a day that arrive while that day is being written wait and are then written
   * together in one transaction: under load the database does one grid update per day per round, not one per upload.
   */
  async ingest(ownerId: number, body: TrajectoryUpload, instant: Date): Promise<IngestOutcome> {
    const boxId = String(body.boxId);
    const date = instant.toISOString().slice(0, 10);
    const key = `${ownerId}\n${boxId}\n${date}`;
    const tracks = Object.values(body.trackHistory);
    const grid = (await this.deps.heatmaps.dayGrid(ownerId, boxId, date)) ?? this.deps.config.grid;
    const binned = binTrajectories(tracks, body.frameDimensions, grid);
    // Nothing to draw: an empty upload made a blank heatmap day.
    if (binned.points === 0) return { duplicate: false, trajectories: 0, points: 0 };
    const counted = await new Promise<boolean>((resolve, reject) => {
      let day = this.waiting.get(key);
      if (!day) {
        day = { ownerId, boxId, date, uploads: [] };
        this.waiting.set(key, day);
      }
      day.uploads.push({ tracks, grid, binned, sampleAt: instant, frame: body.frameDimensions, batchId: body.batchId, resolve, reject });
      if (!this.writing.has(key)) void this.writeRound(key);
    });
    return counted ? { duplicate: false, trajectories: binned.trajectories, points: binned.points } : { duplicate: true, trajectories: 0, points: 0 };
  }

  /** Writes everything waiting for one day, then again while more arrived meanwhile. */
  private async writeRound(key: string): Promise<void> {
    this.writing.add(key);
    try {
      for (let day = this.waiting.get(key); day; day = this.waiting.get(key)) {
        this.waiting.delete(key);
        await this.write(day).catch((err: unknown) => {
          for (const upload of day!.uploads) upload.reject(err);
        });
      }
    } finally {
      this.writing.delete(key);
    }
  }

  private async write(day: WaitingDay): Promise<void> {
    const { heatmaps, config } = this.deps;
    // Uploads binned before the day existed used the configured grid; one that learnt the day's grid since may differ.
    let grid = (await heatmaps.dayGrid(day.ownerId, day.boxId, day.date)) ?? config.grid;
    for (let attempt = 0; ; attempt += 1) {
      const deltas = day.uploads.map((u) => ({
        binned: sameGrid(u.grid, grid) ? u.binned : binTrajectories(u.tracks, u.frame, grid),
        sampleAt: u.sampleAt,
        frame: u.frame,
        batchId: u.batchId,
      }));
      try {
        const counted = await heatmaps.add({ ownerId: day.ownerId, boxId: day.boxId, date: day.date, grid, deltas }, (tx) =>
          this.scheduleRender({ ownerId: day.ownerId, boxId: day.boxId, date: day.date }, tx).then(() => undefined),
        );
        day.uploads.forEach((u, i) => u.resolve(counted[i]!));
        return;
      } catch (err) {
        // Only when instances with different grid settings raced to create the same day.
        if (!(err instanceof GridMismatchError) || attempt > 0) throw err;
        grid = err.grid;
      }
    }
  }

  /** Queues a render unless one is already waiting for that day (which then covers this data too). */
  scheduleRender(target: RenderPayload, tx?: Queryable): Promise<number | null> {
    return this.deps.jobs.enqueue(RENDER_JOB, target, {
      dedupeKey: `${target.ownerId}/${target.boxId}/${target.date}`,
      delaySeconds: this.deps.config.renderDebounceSeconds,
      tx,
    });
  }

  /** A new entrance still: re-render the box's recent days over it. */
  async stillChanged(ownerId: number, boxId: string, since: Date): Promise<void> {
    for (const date of await this.deps.heatmaps.datesOf(ownerId, boxId, since.toISOString().slice(0, 10))) {
      await this.scheduleRender({ ownerId, boxId, date });
    }
  }

  private async render(job: RunningJob<RenderPayload>): Promise<void> {
    const { heatmaps, blobs, log } = this.deps;
    const { ownerId, boxId, date } = job.payload;
    const day = await heatmaps.get(ownerId, boxId, date);
    if (!day) return;
    const counts = await heatmaps.counts(day);
    const { width, height } = imageSizeFor(day.frameWidth, day.frameHeight);
    const background = await this.entranceStill(day).catch((err: unknown) => {
      log.warn({ err, boxId }, 'heatmap: entrance still unreadable, rendering without it');
      return undefined;
    });
    const png = renderHeatmapPng(counts, day.cols, day.rows, { width, height, background });
    const key = heatmapImageKey(ownerId, boxId, date);
    await blobs.put(key, png, { contentType: 'image/png' });
    await heatmaps.markRendered(day, { key, width, height });
  }

  /** The poster of the box's newest ready video, decoded. */
  private async entranceStill(day: HeatmapDay): Promise<RgbaImage | undefined> {
    const video = await this.deps.videos.newestReady(day.ownerId, day.boxId);
    if (!video) return undefined;
    const blob = await this.deps.blobs.get(`videos/${video.id}/${POSTER_PNG}`);
    if (!blob) return undefined;
    const chunks: Buffer[] = [];
    for await (const chunk of blob.body) chunks.push(chunk as Buffer);
    const png = pngjs.PNG.sync.read(Buffer.concat(chunks));
    return { rgba: png.data, width: png.width, height: png.height };
  }
}
