import type { FastifyInstance } from 'fastify';
import { asArray, deviceTimeProblem, ErrorResponse, MessageResponse, MetricBody, MovementBody } from '@hivegate/shared';
import { assertBoxAllowed, requireScope } from '../auth/request-auth.ts';
import type { Principal } from '../auth/tokens.ts';
import { HttpError } from '../http/errors.ts';
import type { AppContext } from '../context.ts';

const errorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse, 500: ErrorResponse };

export async function telemetryRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const ingest = requireScope(ctx.tokens, 'ingest');

  app.post(
    '/iot/v1/metrics',
    {
      onRequest: ingest,
      schema: {
        summary: 'Submit hive sensor readings (one or a batch of up to 1000)',
        tags: ['telemetry'],
        security: [{ bearer: [] }],
        body: MetricBody,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => {
      const items = asArray(request.body as MetricBody);
      assertBelievableTimes(items, Array.isArray(request.body), keptDays(ctx));
      await assertHivesAllowed(ctx, request.principal!, items);
      const outcome = await ctx.metricsRepository.ingest(request.principal!.userId, items, nowSeconds());
      ctx.observability.ingested('metrics', outcome);
      return { message: 'OK' };
    },
  );

  app.post(
    '/entrance/v1/movement',
    {
      onRequest: ingest,
      schema: {
        summary: 'Submit entrance movement aggregates (one or a batch of up to 1000)',
        tags: ['telemetry'],
        security: [{ bearer: [] }],
        body: MovementBody,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => {
      const items = asArray(request.body as MovementBody);
      assertBelievableTimes(items, Array.isArray(request.body), keptDays(ctx));
      for (const item of items) assertBoxAllowed(request.principal!, String(item.boxId));
      const outcome = await ctx.movementRepository.ingest(request.principal!.userId, items, nowSeconds());
      ctx.observability.ingested('movement', outcome);
      return { message: 'OK' };
    },
  );
}

/** A token made for some boxes sends readings for their hives (or a hive no box counts in yet), not for others. */
async function assertHivesAllowed(ctx: AppContext, principal: Principal, items: readonly { hiveId: string | number }[]): Promise<void> {
  if (principal.boxIds === null) return;
  const hiveIds = [...new Set(items.map((item) => String(item.hiveId)))];
  const [refused] = await ctx.telemetryReads.hivesOfOtherBoxes(principal.userId, hiveIds, principal.boxIds);
  if (refused !== undefined) throw new HttpError(403, `this token may not send readings for hive "${refused}": its boxes count in other hives`);
}

/** How many days of telemetry partition maintenance keeps; null when it deletes none (an external tool owns them). */
function keptDays(ctx: AppContext): number | null {
  return ctx.config.partitionMaintenance ? ctx.config.retentionDays : null;
}

/**
 * A reading from a device whose clock was never set (1970), or with milliseconds for seconds, is refused by name: it
 * was stored, and one in the year 9999 stood as the hive's latest reading for good. So is one older than the
 * retention `keptDays`: it was accepted and then silently deleted by the next partition maintenance.
 */
function assertBelievableTimes(items: readonly { timestamp?: number }[], batch: boolean, keptDays: number | null): void {
  const now = new Date();
  const oldestKeptMs = keptDays === null ? -Infinity : now.getTime() - keptDays * 86_400_000;
  items.forEach((item, index) => {
    if (item.timestamp === undefined) return;
    const shown = `${batch ? `[${index}].` : ''}timestamp ${item.timestamp}`;
    const problem = deviceTimeProblem(item.timestamp * 1000, now, shown);
    if (problem) throw new HttpError(400, problem);
    if (item.timestamp * 1000 < oldestKeptMs) {
      throw new HttpError(400, `${shown} is older than the ${keptDays} days of telemetry this server keeps (RETENTION_DAYS): it would be deleted at the next maintenance`);
    }
  });
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
