import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { connectionErrorForLog, type Database } from './db/database.ts';
import { migrate, unknownMigrations } from './db/migrate.ts';
import { openDatabase } from './db/open.ts';
import { prepareDataDir } from './db/data-dir-lock.ts';
import { maintainPartitions, MaintenancePostponedError } from './db/partitions.ts';
import { requestForLog } from './http/log-redaction.ts';
import { loadSigningSecret, otherInstances, signerApplicationName, TokenService } from './auth/tokens.ts';
import { TokensRepository } from './auth/tokens-repository.ts';
import { UsersRepository } from './auth/users-repository.ts';
import { AccountService } from './auth/accounts.ts';
import { accountResolvers } from './auth/resolvers.ts';
import { graphqlPlugin } from './graphql/plugin.ts';
import { decodeRequestBodies } from './http/content-encoding.ts';
import { installErrorHandling } from './http/errors.ts';
import { installDrain, type DrainState } from './http/drain.ts';
import { parseJsonBodies } from './http/json-body.ts';
import { validatorCompiler } from './http/validation.ts';
import { Observability } from './observability/metrics.ts';
import { operationsRoutes } from './observability/routes.ts';
import { MetricsRepository } from './telemetry/metrics-repository.ts';
import { MovementRepository } from './telemetry/movement-repository.ts';
import { TelemetryReadRepository } from './telemetry/read-repository.ts';
import { telemetryLoaders, telemetryResolvers } from './telemetry/resolvers.ts';
import { telemetryRoutes } from './telemetry/routes.ts';
import { createBlobStore } from './storage/index.ts';
import { UnsharedFileStorageError, unsharedStorageProblem } from './storage/instances.ts';
import { MediaSigner } from './media/signed-paths.ts';
import { mediaRoutes } from './media/routes.ts';
import { buildVideoAndHeatmaps } from './video/wiring.ts';
import { missingMediaToolsWarning } from './video/ffmpeg.ts';
import { heatmapRoutes } from './heatmaps/routes.ts';
import { heatmapResolvers } from './heatmaps/resolvers.ts';
import { videoResolvers } from './video/resolvers.ts';
import { CSRF_PROOF_HEADER } from './video/upload-plugin.ts';
import type { LiveClipHandoff } from './live/clip.ts';
import { liveDeviceRoutes } from './live/device-routes.ts';
import { LiveService } from './live/live-service.ts';
import { livePublishRoutes } from './live/publish-routes.ts';
import { liveFrameRoutes } from './live/frame-routes.ts';
import { liveResolvers } from './live/resolvers.ts';
import { webAppRoutes } from './web/routes.ts';

const SPEC_VERSION = '1.0.0';
const PARTITION_MAINTENANCE_MS = 6 * 3600_000;

export interface BuildOptions {
  /** Use this database instead of opening the configured one (it is not closed with the app). */
  db?: Database;
  logger?: boolean;
  /** Where live sessions recorded as clips are handed to stored video (the upload path connects here). */
  liveClipHandoff?: LiveClipHandoff;
}

/**
 * Builds the whole service on a database: migrations and partitions first, then the capabilities' routes. Tests
 * use it with `inject` or a real port; server.ts listens with it.
 */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const trustProxy: FastifyServerOptions['trustProxy'] = config.trustProxy;
  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel, serializers: { req: requestForLog } },
    bodyLimit: config.bodyLimitBytes,
    trustProxy,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { strict: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('drainState', installDrain(app));

  // Checked first, naming DATA_DIR: an unwritable one failed later with a bare EACCES from wherever wrote first.
  // Blobs, upload temporaries and (embedded) the database live here: a new one is for this user alone.
  prepareDataDir(config.dataDir);
  // Tells this process's connections from its siblings' in pg_stat_activity (see signerApplicationName).
  const applicationName = signerApplicationName(config.jwtSecret, randomBytes(4).toString('hex'));
  const opened = options.db ? { db: options.db, close: async () => undefined } : await openDatabase(
        config,
        (err) => app.log.warn({ error: connectionErrorForLog(err) }, 'database connection lost'),
        applicationName,
      );
  const { db } = opened;
  // Services started so far, stopped in reverse on close or when a later start fails.
  const started: (() => Promise<void>)[] = [];
  const closeServices = async () => {
    while (started.length > 0) await started.pop()!();
  };
  try {
    // Before any work on the database: a refused start changes nothing. (A database handed in by a caller does not
    // carry this process's name, so its siblings cannot be told from it.)
    if (db.kind === 'postgres' && !options.db) {
      const problem = unsharedStorageProblem(config.storage, (await otherInstances(db, applicationName)).length);
      if (problem) throw new UnsharedFileStorageError(problem);
    }
    const migrated = await migrate(db);
    if (migrated.length > 0) app.log.info({ versions: migrated }, 'database migrated');
    const newer = await unknownMigrations(db);
    if (newer.length > 0) app.log.warn({ migrations: newer }, 'the database has migrations this build does not know: a newer build upgraded it, and this one may misread what that one writes');
    if (!config.jwtSecret && db.kind === 'postgres') {
      app.log.warn('JWT_SECRET is not set: tokens are signed with a secret generated once and kept in the database; set JWT_SECRET to keep them valid across a restore into another database');
    }
    const mediaToolsMissing = missingMediaToolsWarning(config.video);
    if (mediaToolsMissing) app.log.warn(mediaToolsMissing);
    const maintenancePolicy = { retentionDays: config.retentionDays, dedupeRetentionDays: config.dedupeRetentionDays, partitions: config.partitionMaintenance };
    // What retention dropped is said at start as at every later run: a mistyped RETENTION_DAYS must leave a trace. A
    // backup holding the tables postpones it, and must not keep the service from starting (the default partitions
    // take the rows meanwhile).
    const maintain = () =>
      maintainPartitions(db, maintenancePolicy).then(
        (report) => app.log.info({ report }, 'partition maintenance'),
        (err: unknown) => {
          if (!(err instanceof MaintenancePostponedError)) throw err;
          app.log.warn(err.message);
        },
      );
    // The refusal of another instance's secret before partition maintenance: a doomed start does no work. (It reads
    // the secrets table, so it comes after the migrations.)
    const secret = await loadSigningSecret(db, config.jwtSecret, 'service', (message) => app.log.warn(message));
    await maintain();
    const tokenRecords = new TokensRepository(db);
    const tokens = new TokenService(db, tokenRecords, secret, config.tokenCacheSeconds);
    await tokens.start();
    started.push(() => tokens.stop());
    const blobs = createBlobStore(config.storage);
    await blobs.start();
    started.push(() => blobs.stop());
    const media = new MediaSigner(secret);
    const observability = new Observability();
    const poolStats = db.poolStats?.bind(db);
    if (poolStats) observability.watchPool(poolStats);
    const videoAndHeatmaps = buildVideoAndHeatmaps(config, db, blobs, app.log);
    // Live sessions recorded as clips become stored videos through the upload path, unless a caller connects its own.
    const clipHandoff = options.liveClipHandoff ?? ((clip) => videoAndHeatmaps.videoService.acceptLiveClip(clip));
    const live = new LiveService({ db, config: config.live, log: app.log, blobs, media, secret, metrics: observability.registry, clipHandoff });
    await live.start();
    started.push(() => live.stop());
    const users = new UsersRepository(db);
    const ctx: AppContext = {
      config,
      db,
      log: app.log,
      observability,
      tokens,
      users,
      accounts: new AccountService(db, users, tokens),
      tokenRecords,
      metricsRepository: new MetricsRepository(db),
      movementRepository: new MovementRepository(db),
      telemetryReads: new TelemetryReadRepository(db),
      blobs,
      media,
      live,
      ...videoAndHeatmaps,
    };

    const maintenance = setInterval(() => {
      maintain()
        .then(() => ctx.accounts.pruneAttempts())
        .catch((err: unknown) => app.log.error({ err }, 'partition maintenance failed'));
      ctx.videoService.sweepOrphanedFiles().catch((err: unknown) => app.log.error({ err }, 'sweep of orphaned video files failed'));
    }, PARTITION_MAINTENANCE_MS).unref();
    started.push(async () => clearInterval(maintenance));

    app.decorate('ctx', ctx);
    app.decorateRequest('principal', null);
    app.setValidatorCompiler(validatorCompiler);
    // Every API here speaks JSON; a text body is a client mistake better named as such (415) than parsed.
    app.removeContentTypeParser('text/plain');
    parseJsonBodies(app);
    installErrorHandling(app, (reason) => ctx.observability.rejected(reason));
    decodeRequestBodies(app);
    // Every answer, not only the web app's: a media file or an error body must not be sniffed into something runnable.
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('x-content-type-options', 'nosniff');
    });
    app.addHook('onResponse', async (request, reply) => {
      ctx.observability.requestDuration.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });

    await app.register(cookie);
    await app.register(cors, {
      origin: config.corsOrigins.length > 0 ? config.corsOrigins : false,
      credentials: true,
      // The CSRF proof header of cookie-authenticated uploads: only the listed origins pass its preflight.
      allowedHeaders: ['Content-Type', 'Authorization', 'token', CSRF_PROOF_HEADER],
    });
    await app.register(swagger, {
      openapi: {
        info: { title: 'HiveGate telemetry and video service', version: SPEC_VERSION },
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
            publishToken: { type: 'apiKey', in: 'header', name: 'X-Publish-Token', description: "a live session's publishToken (also accepted as a bearer token)" },
          },
        },
      },
    });

    await app.register(operationsRoutes, { ctx });
    await app.register(telemetryRoutes, { ctx });
    await app.register(mediaRoutes, { ctx });
    await app.register(liveDeviceRoutes, { ctx });
    await app.register(livePublishRoutes, { ctx });
    await app.register(liveFrameRoutes, { ctx });
    await app.register(heatmapRoutes, { ctx });
    await app.register(graphqlPlugin, { ctx, resolvers: [accountResolvers, telemetryResolvers, liveResolvers, videoResolvers, heatmapResolvers], loaders: [telemetryLoaders] });
    // Last: jobs may only run once every capability has defined its kinds, and stop first on close.
    // Its catch-all GET route only answers paths no capability route matches (find-my-way prefers those).
    await app.register(webAppRoutes, { publicUrl: config.publicUrl });
    await ctx.jobs.start();
    started.push(() => ctx.jobs.stop());
    const jobMaintenance = setInterval(() => {
      Promise.all([ctx.jobs.purgeFinished(), ctx.heatmaps.purgeBatchIds(config.dedupeRetentionDays)]).catch((err: unknown) =>
        app.log.error({ err }, 'job and heatmap maintenance failed'),
      );
    }, 3600_000).unref();
    started.push(async () => clearInterval(jobMaintenance));
  } catch (err) {
    await closeServices();
    await opened.close();
    throw err;
  }

  app.addHook('onClose', async () => {
    await closeServices();
    await opened.close();
  });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    /** What a stop still waits for (see http/drain.ts). */
    drainState: () => Promise<DrainState>;
  }
}
