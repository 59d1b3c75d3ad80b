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
 * GraphQL multipart requests (file uploads) for the GraphQL route: each file up to VIDEO_MAX_BYTES, two per request
 * (a video and its detections). Register inside the GraphQL plugin, before mercurius.
 */
export const graphqlUploads = fp(async (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
  app.addHook('onRequest', async (request) => {
    // A browser may send a multipart form cross-site with cookies and no preflight; requiring the token in a
    // header (which such a form cannot set) keeps uploads from being forged that way.
    if (isMultipart(request) && request.headers.authorization === undefined && request.headers.token === undefined) {
      throw new HttpError(400, 'multipart requests must carry the token in the Authorization or token header');
    }
  });
  // Before mercurius-upload's own onSend, which waits for the request to end: read away files nobody consumed.
  app.addHook('onSend', async (request) => {
    if (isMultipart(request)) drainUploads(request.body, isUpload);
  });
  // One byte over the limit makes the parser cut the file, which tells a file of exactly the limit from a larger one.
  await app.register(mercuriusUpload, { maxFileSize: ctx.config.video.maxBytes + 1, maxFiles: 2 });
});
