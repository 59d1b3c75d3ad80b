import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { unstorableJsonProblem } from '@hivegate/shared';
import { connectionErrorForLog, DatabaseUnavailableError } from '../db/database.ts';
import { isStorageFault, STORAGE_UNAVAILABLE } from '../storage/faults.ts';

/** Seconds a client is asked to wait when the database is saturated or away; jittered so retries spread out. */
const UNAVAILABLE_RETRY_SECONDS = 2;

/** A client mistake with a status and a message the client may read. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** database_unavailable: a 503 for a saturated or unreachable database, counted apart from the 500s of bugs. */
export type RejectionReason = 'validation' | 'auth' | 'forbidden' | 'too_large' | 'bad_request' | 'not_found' | 'database_unavailable' | 'storage_unavailable' | 'server_error';

function reasonFor(status: number, code: string | undefined): RejectionReason {
  if (code === 'FST_ERR_VALIDATION') return 'validation';
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  if (status === 413) return 'too_large';
  if (status === 404) return 'not_found';
  if (status >= 500) return 'server_error';
  return 'bad_request';
}

/** A byte count as people read limits: 1048576 → "1 MiB". */
function sizeLimit(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function clientMessage(err: FastifyError, request: FastifyRequest): string {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      // The route's own limit (trajectories and live segments have larger ones than the rest): a client needs the number.
      const limit = request.routeOptions.bodyLimit;
      return limit ? `request body is larger than the ${sizeLimit(limit)} limit of ${request.method} ${request.routeOptions.url ?? request.url}` : 'request body is too large';
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // fastify's own message is only "Unsupported Media Type": the type the client sent is in its header.
      return `content type ${request.headers['content-type']?.split(';')[0]?.trim() || '(none)'} is not supported; send application/json`;
    default:
      return err instanceof SyntaxError ? `body is not valid JSON: ${err.message}` : err.message;
  }
}

/**
 * Every failure leaves as `{"error": "…"}`. Client mistakes keep their status and say what is wrong; anything
 * unexpected is logged in full and answered with a 500 that reveals no internals.
 */
export function installErrorHandling(app: FastifyInstance, onRejected: (reason: RejectionReason) => void): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    onRejected(err instanceof DatabaseUnavailableError ? 'database_unavailable' : isStorageFault(err) ? 'storage_unavailable' : reasonFor(status, err.code));
    if (err instanceof DatabaseUnavailableError) {
      request.log.warn({ error: connectionErrorForLog(err.cause) }, 'database unavailable');
      const retryAfter = UNAVAILABLE_RETRY_SECONDS + Math.floor(Math.random() * (UNAVAILABLE_RETRY_SECONDS + 1));
      return reply.status(503).header('retry-after', String(retryAfter)).send({ error: 'the service is busy: retry shortly' });
    }
    if (isStorageFault(err)) {
      request.log.error({ err }, 'storage is unavailable');
      return reply.status(503).send({ error: STORAGE_UNAVAILABLE });
    }
    if (status >= 500) {
      request.log.error({ err }, 'request failed');
      return reply.status(status).send({ error: 'internal server error' });
    }
    return reply.status(status).send({ error: clientMessage(err, request) });
  });
  // JSON may carry what Postgres cannot store (U+0000, a lone surrogate) or nest without end: refused by name rather
  // than failing in the database or overflowing a stack with a 500 (REST bodies, and GraphQL variables, which reach no
  // schema of ours).
  app.addHook('preValidation', async (request) => {
    if (request.body === null || typeof request.body !== 'object' || Buffer.isBuffer(request.body)) return;
    const problem = unstorableJsonProblem(request.body);
    if (problem !== undefined) throw new HttpError(400, problem);
  });
  app.setNotFoundHandler((request, reply) => {
    onRejected('not_found');
    return reply.status(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
}
