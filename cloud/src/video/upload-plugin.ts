import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import mercurius from 'mercurius';
import mercuriusUpload from 'mercurius-upload';
import { Upload } from 'graphql-upload-minimal';
import { grants } from '@hivegate/shared';
import { authenticateRequest } from '../auth/request-auth.ts';
import type { Principal, TokenService } from '../auth/tokens.ts';
import type { AppContext } from '../context.ts';
import { HttpError } from '../http/errors.ts';
import { drainUploads } from './receive-upload.ts';

const isMultipart = (request: FastifyRequest) => /^multipart\/form-data/i.test(request.headers['content-type'] ?? '');
const isUpload = (value: unknown): value is Upload => value instanceof Upload;

/**
 * The header the web app adds to its uploads. Its value does not matter: a page of another origin cannot send a
 * header of its own without a CORS preflight, which this server grants only to CORS_ORIGINS.
 */
export const CSRF_PROOF_HEADER = 'x-requested-with';

const hasHeader = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' && value.trim() !== '';
};

/**
 * A multipart form is a "simple" request: any site may make the browser POST one here, cookies included, without
 * asking first. So a multipart request must prove it was not forged that way: its token in a header (devices), or,
 * when the session cookie authenticates it (the web app), the CSRF proof header, which needs a preflight cross-site.
 */
export function multipartForgeryProblem(request: FastifyRequest): string | undefined {
  if (!isMultipart(request)) return undefined;
  if (request.headers.authorization !== undefined || hasHeader(request, 'token') || hasHeader(request, CSRF_PROOF_HEADER)) return undefined;
  return `multipart requests must carry the token in the Authorization or token header, or (signed in with the session cookie) an ${CSRF_PROOF_HEADER} header`;
}

/** Refused before the body is read, in the form GraphQL clients read: `errors[0].extensions.code`, and the HTTP status. */
function refusal(message: string, code: 'UNAUTHENTICATED' | 'FORBIDDEN', statusCode: 401 | 403): Error {
  return new mercurius.ErrorWithProps(message, { code }, statusCode);
}

/**
 * Who sends a multipart request, found before its body is read, with the scope an upload needs (devices upload with
 * `ingest`, people with `control`). Left to the resolver, every file of a request with a bad, revoked or missing
 * token was read in full (up to VIDEO_MAX_BYTES each) before the answer said so.
 */
export async function multipartUploader(tokens: TokenService, request: FastifyRequest): Promise<Principal> {
  let principal: Principal;
  try {
    principal = await authenticateRequest(tokens, request);
  } catch (err) {
    if (err instanceof HttpError && err.statusCode === 401) throw refusal(err.message, 'UNAUTHENTICATED', 401);
    throw err;
  }
  if (!grants(principal.scopes, 'control') && !grants(principal.scopes, 'ingest')) {
    throw refusal('this token lacks the "control" or "ingest" scope', 'FORBIDDEN', 403);
  }
  return principal;
}

/**
 * GraphQL multipart requests (file uploads) for the GraphQL route: each file up to VIDEO_MAX_BYTES, two per request
 * (a video and its detections). Register inside the GraphQL plugin, before mercurius.
 */
export const graphqlUploads = fp(async (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
  app.addHook('onRequest', async (request) => {
    if (!isMultipart(request)) return;
    const problem = multipartForgeryProblem(request);
    if (problem) throw refusal(problem, 'FORBIDDEN', 403);
    request.principal = await multipartUploader(ctx.tokens, request);
  });
  // Before mercurius-upload's own onSend, which waits for the request to end: read away files nobody consumed.
  app.addHook('onSend', async (request) => {
    if (isMultipart(request)) drainUploads(request.body, isUpload);
  });
  // One byte over the limit makes the parser cut the file, which tells a file of exactly the limit from a larger one.
  await app.register(mercuriusUpload, { maxFileSize: ctx.config.video.maxBytes + 1, maxFiles: 2 });
});
