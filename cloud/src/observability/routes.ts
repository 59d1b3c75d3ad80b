import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ErrorResponse, HealthResponse } from '@hivegate/shared';
import type { AppContext } from '../context.ts';

export async function operationsRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Service and database availability',
        tags: ['operations'],
        response: { 200: HealthResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      try {
        await ctx.db.ping(ctx.config.healthTimeoutMs);
        return { hello: 'world' };
      } catch (err) {
        request.log.warn({ err }, 'health check: database unavailable');
        return reply.status(503).send({ error: 'database unavailable' });
      }
    },
  );

  const metricsToken = ctx.config.metricsToken;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (metricsToken !== undefined && !bearsToken(request.headers.authorization, metricsToken)) {
      return reply.status(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'metrics need the bearer token set as METRICS_TOKEN' });
    }
    reply.header('content-type', ctx.observability.registry.contentType);
    return ctx.observability.registry.metrics();
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Compared by digest in constant time, so the answer's timing tells nothing about the token. */
function bearsToken(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}
