import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { HeatmapService } from '../heatmaps/heatmap-service.ts';
import { HeatmapsRepository } from '../heatmaps/heatmaps-repository.ts';
import { JobQueue } from '../jobs/job-queue.ts';
import type { BlobStore } from '../storage/index.ts';
import { MediaTools } from './ffmpeg.ts';
import { VideoService } from './video-service.ts';
import { GateVideosRepository } from './videos-repository.ts';

/** The job queue, stored video and heatmaps, built together because they feed each other (poster → heatmap still). */
export function buildVideoAndHeatmaps(config: Config, db: Database, blobs: BlobStore, log: FastifyBaseLogger) {
  const jobs = new JobQueue(db, config.jobs, log);
  const videos = new GateVideosRepository(db);
  const heatmaps = new HeatmapsRepository(db);
  const videoService = new VideoService({
    db,
    videos,
    blobs,
    jobs,
    tools: new MediaTools(config.video),
    config: config.video,
    tempRoot: path.join(config.dataDir, 'tmp'),
    log,
  });
  const heatmapService = new HeatmapService({ heatmaps, videos, blobs, jobs, config: config.heatmaps, log });
  // A new poster is a newer still of the entrance: redraw the box's heatmaps from that video's day on.
  videoService.onReady = (video) => heatmapService.stillChanged(video.ownerId, video.boxId, video.startTime);
  // A deleted poster may have been the still: redraw over whichever video is now the newest.
  videoService.onRemoved = (video) => heatmapService.stillChanged(video.ownerId, video.boxId, video.startTime);
  videoService.defineJobs();
  heatmapService.defineJobs();
  return { jobs, videos, videoService, heatmaps, heatmapService };
}
