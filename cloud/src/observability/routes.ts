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

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('content-type', ctx.observability.registry.contentType);
    return ctx.observability.registry.metrics();
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
