import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ErrorResponse, LiveFrameAccepted } from '@hivegate/shared';
import type { AppContext } from '../context.ts';
import { HttpError } from '../http/errors.ts';
import { MEDIA_PREFIX } from '../media/signed-paths.ts';
import { JPEG_CONTENT_TYPE, inspectJpeg, mjpegContentType } from './jpeg.ts';
import { FRAME_FILE, MJPEG_FILE, PUBLISH_PATH } from './live-service.ts';
import { PUBLISHER_SECURITY, publishToken } from './publish-routes.ts';
import { isEnded } from './session-machine.ts';

const FrameParams = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 64 }) });
const PlaybackParams = Type.Object({ grant: Type.String({ minLength: 1, maxLength: 64 }), sessionId: Type.String({ minLength: 1, maxLength: 64 }) });

function mediaTypeOf(request: FastifyRequest): string | undefined {
  const header = request.headers['content-type'];
  return header?.split(';')[0]?.trim().toLowerCase() || undefined;
}

/**
 * The `http-jpeg-push` relay: the publisher POSTs one JPEG per request (the existing entrance observer, ~4 fps) and
 * the owner's browser reads the signed playback URL as `multipart/x-mixed-replace` MJPEG. Token, session state,
 * content type and size are checked before the body is read.
 */
export async function liveFrameRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const live = ctx.live;
  const maxBytes = ctx.config.live.maxFrameBytes;
  // Frames are taken as bytes whatever their declared type (checked in onRequest, with a clearer answer than 415 from the parser).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBytes }, (_request, body, done) => done(null, body));
  // Open streams would hold up shutdown: they end (with their closing boundary) as soon as it begins.
  app.addHook('preClose', async () => live.frames.closeViewers());

  app.post<{ Params: { sessionId: string } }>(
    `${PUBLISH_PATH}/:sessionId/${FRAME_FILE}`,
    {
      bodyLimit: maxBytes,
      onRequest: async (request) => {
        const session = await live.authorizePublisher(request.params.sessionId, publishToken(request));
        if (session.relayProtocol !== 'http-jpeg-push') throw new HttpError(409, `live session uses the ${session.relayProtocol} relay: publish with ffmpeg's HLS muxer to its publisherUrl`);
        const type = mediaTypeOf(request);
        if (type !== JPEG_CONTENT_TYPE) throw new HttpError(415, `Content-Type must be ${JPEG_CONTENT_TYPE}, got ${type ?? 'none'}`);
        const length = Number(request.headers['content-length']);
        if (length > maxBytes) throw new HttpError(413, `frame of ${length} bytes is larger than the ${maxBytes} bytes allowed`);
        request.liveSession = session;
      },
      schema: {
        summary: 'Publish one JPEG frame (http-jpeg-push relay) as an image/jpeg body; X-Publish-Token or bearer publish token',
        tags: ['live publish'],
        security: PUBLISHER_SECURITY,
        params: FrameParams,
        response: {
          200: LiveFrameAccepted,
          400: ErrorResponse,
          401: ErrorResponse,
          404: ErrorResponse,
          409: ErrorResponse,
          410: ErrorResponse,
          413: ErrorResponse,
          415: ErrorResponse,
        },
      },
    },
    async (request) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (body.length === 0) throw new HttpError(400, 'frame body is empty: send one JPEG image');
      const check = inspectJpeg(body);
      if (!check.ok) throw new HttpError(415, `body is not a JPEG image: ${check.reason}`);
      return live.publishFrame(request.liveSession!, body);
    },
  );

  // Beside the media route's `/media/{grant}/*`: a static path segment wins over its wildcard.
  app.get<{ Params: { grant: string; sessionId: string } }>(
    `${MEDIA_PREFIX}/:grant/live/:sessionId/${MJPEG_FILE}`,
    { exposeHeadRoute: false, schema: { hide: true, params: PlaybackParams } },
    async (request, reply) => {
      const { grant, sessionId } = request.params;
      const verdict = ctx.media.verify(grant, `live/${sessionId}/${MJPEG_FILE}`);
      if (!verdict.ok) return reply.status(verdict.status).send({ error: verdict.error });
      if (!live.frames.accepting) return reply.status(503).send({ error: 'the service is shutting down; reconnect' });
      const session = await live.sessions.findById(sessionId);
      if (!session) return reply.status(404).send({ error: 'no such live session' });
      if (isEnded(session.status)) return reply.status(410).send({ error: `live session is over (${session.status})` });
      if (session.relayProtocol !== 'http-jpeg-push') return reply.status(409).send({ error: `live session uses the ${session.relayProtocol} relay: play its playbackUrl` });
      // The grant says until when it is valid: "{expires}.{signature}".
      const until = Number(grant.slice(0, grant.indexOf('.'))) * 1000;
      reply.hijack();
      // Headers set so far (CORS for the web app's fetch) go out with the stream's own.
      const headers: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
      reply.raw.writeHead(200, {
        ...headers,
        'content-type': mjpegContentType(),
        'cache-control': 'no-store, private',
        pragma: 'no-cache',
        // Proxies such as nginx must pass each frame on at once instead of buffering the response.
        'x-accel-buffering': 'no',
      });
      // The head goes out now, not with the first frame: a fetch() resolves and shows the stream as connected.
      reply.raw.flushHeaders();
      live.frames.attach(session, reply.raw, until);
    },
  );
}
