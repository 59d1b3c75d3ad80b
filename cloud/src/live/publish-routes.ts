import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ErrorResponse } from '@hivegate/shared';
import type { AppContext } from '../context.ts';
import { HttpError } from '../http/errors.ts';
import { PUBLISH_PATH } from './live-service.ts';
import { publishedFileKind } from './playlist.ts';
import type { SessionRecord } from './sessions-repository.ts';

const Params = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 64 }), file: Type.String({ minLength: 1, maxLength: 100 }) });
interface PublishParams {
  sessionId: string;
  file: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    liveSession?: SessionRecord;
  }
}

/** How /openapi.json says a publisher authenticates: the session's publish token in either header. */
export const PUBLISHER_SECURITY: Record<string, string[]>[] = [{ publishToken: [] }, { bearer: [] }];

/**
 * The publish token from `X-Publish-Token` or else `Authorization: Bearer` (ffmpeg's -headers). The header wins:
 * the existing entrance observer sends its API token as the bearer and the publish token in `X-Publish-Token`.
 */
export function publishToken(request: FastifyRequest): string | undefined {
  const header = request.headers['x-publish-token'];
  if (typeof header === 'string' && header !== '') return header;
  const authorization = request.headers.authorization;
  return authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
}

/**
 * The HLS publisher endpoint: ffmpeg's HLS muxer PUTs segments and the playlist here and DELETEs segments that
 * left its window. Authorised by the session's publish token, checked before the body is read; closed once the
 * session is over. Note that ffmpeg carries on (and exits 0) after a refused PUT: the session status is the truth.
 */
export async function livePublishRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const maxBytes = ctx.config.live.maxSegmentBytes;
  // Publishers send any content type, or none; every body is taken as bytes (only in this plugin).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBytes }, (_request, body, done) => done(null, body));

  const authorize = async (request: FastifyRequest<{ Params: PublishParams }>) => {
    const { sessionId, file } = request.params;
    if (!publishedFileKind(file)) {
      throw new HttpError(400, `file "${file}" is not accepted: publish *.m3u8 playlists and *.ts / *.m4s / init.mp4 segments`);
    }
    const session = await ctx.live.authorizePublisher(sessionId, publishToken(request));
    if (session.relayProtocol !== 'hls') throw new HttpError(409, `live session uses the ${session.relayProtocol} relay: POST JPEG frames to its publisherUrl`);
    request.liveSession = session;
  };
  const schema = {
    summary: 'HLS publisher upload (ffmpeg -method PUT): a playlist or segment as the body; X-Publish-Token or bearer publish token',
    tags: ['live publish'],
    security: PUBLISHER_SECURITY,
    params: Params,
    response: { 201: { description: 'Stored (PUT; also over a file of the same name)', type: 'null' }, 204: { description: 'Deleted (DELETE)', type: 'null' }, 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 410: ErrorResponse, 413: ErrorResponse },
  };

  app.put<{ Params: PublishParams }>(`${PUBLISH_PATH}/:sessionId/:file`, { onRequest: authorize, bodyLimit: maxBytes, schema }, async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    await ctx.live.publishFile(request.liveSession!, request.params.file, body);
    return reply.status(201).send();
  });

  app.delete<{ Params: PublishParams }>(`${PUBLISH_PATH}/:sessionId/:file`, { onRequest: authorize, schema }, async (request, reply) => {
    await ctx.live.deletePublished(request.liveSession!, request.params.file);
    return reply.status(204).send();
  });
}
