import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import mercuriusUpload from 'mercurius-upload';
import { Upload } from 'graphql-upload-minimal';
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

/**
 * GraphQL multipart requests (file uploads) for the GraphQL route: each file up to VIDEO_MAX_BYTES, two per request
 * (a video and its detections). Register inside the GraphQL plugin, before mercurius.
 */
export const graphqlUploads = fp(async (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
  app.addHook('onRequest', async (request) => {
    const problem = multipartForgeryProblem(request);
    if (problem) throw new HttpError(403, problem);
  });
  // Before mercurius-upload's own onSend, which waits for the request to end: read away files nobody consumed.
  app.addHook('onSend', async (request) => {
    if (isMultipart(request)) drainUploads(request.body, isUpload);
  });
  // One byte over the limit makes the parser cut the file, which tells a file of exactly the limit from a larger one.
  await app.register(mercuriusUpload, { maxFileSize: ctx.config.video.maxBytes + 1, maxFiles: 2 });
});
