import type { FastifyInstance } from 'fastify';
import { checkTrajectoryUpload, ErrorResponse, TrajectoryUpload, TrajectoryUploadResponse } from '@hivegate/shared';
import { assertBoxAllowed, requireScope } from '../auth/request-auth.ts';
import type { AppContext } from '../context.ts';
import { HttpError } from '../http/errors.ts';

/** 200k points with full float precision are ~5 MB of JSON; leave room above the general body limit. */
const TRAJECTORY_BODY_LIMIT = 16 * 1024 * 1024;

export async function heatmapRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.post(
    '/api/entrance-heatmaps/trajectories',
    {
      // Telemetry, so an ingest token may send it; and one of the spec's device endpoints, so a device token may too.
      onRequest: requireScope(ctx.tokens, 'ingest', 'device'),
      bodyLimit: Math.max(TRAJECTORY_BODY_LIMIT, ctx.config.bodyLimitBytes),
      schema: {
        summary: 'Upload tracked bee trajectories; they are added to the box’s heatmap of the UTC date of timestamp',
        tags: ['heatmaps'],
        security: [{ bearer: [] }],
        body: TrajectoryUpload,
        response: { 200: TrajectoryUploadResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 413: ErrorResponse, 500: ErrorResponse },
      },
    },
    async (request) => {
      const body = request.body as TrajectoryUpload;
      const principal = request.principal!;
      assertBoxAllowed(principal, String(body.boxId));
      const checked = checkTrajectoryUpload(body);
      if (!checked.ok) throw new HttpError(400, checked.error);
      const outcome = await ctx.heatmapService.ingest(principal.userId, body, checked.instant);
      ctx.observability.ingested('trajectory_batches', { received: 1, stored: outcome.duplicate ? 0 : 1 });
      return { message: 'OK', ...outcome };
    },
  );
}
