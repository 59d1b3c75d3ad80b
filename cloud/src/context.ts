import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { TokenService } from './auth/tokens.ts';
import type { TokensRepository } from './auth/tokens-repository.ts';
import type { UsersRepository } from './auth/users-repository.ts';
import type { Observability } from './observability/metrics.ts';
import type { MetricsRepository } from './telemetry/metrics-repository.ts';
import type { MovementRepository } from './telemetry/movement-repository.ts';
import type { TelemetryReadRepository } from './telemetry/read-repository.ts';
import type { BlobStore } from './storage/index.ts';
import type { MediaSigner } from './media/signed-paths.ts';
import type { LiveService } from './live/live-service.ts';
import type { AccountService } from './auth/accounts.ts';
import type { JobQueue } from './jobs/job-queue.ts';
import type { GateVideosRepository } from './video/videos-repository.ts';
import type { VideoService } from './video/video-service.ts';
import type { HeatmapsRepository } from './heatmaps/heatmaps-repository.ts';
import type { HeatmapService } from './heatmaps/heatmap-service.ts';

/** The services one app instance is made of, built once in app.ts and handed to each capability's routes. */
export interface AppContext {
  config: Config;
  db: Database;
  log: FastifyBaseLogger;
  observability: Observability;
  tokens: TokenService;
  users: UsersRepository;
  accounts: AccountService;
  tokenRecords: TokensRepository;
  metricsRepository: MetricsRepository;
  movementRepository: MovementRepository;
  telemetryReads: TelemetryReadRepository;
  blobs: BlobStore;
  media: MediaSigner;
  live: LiveService;
  jobs: JobQueue;
  videos: GateVideosRepository;
  videoService: VideoService;
  heatmaps: HeatmapsRepository;
  heatmapService: HeatmapService;
}
