import type { FastifyInstance } from 'fastify';
import { RangeNotSatisfiableError } from '../storage/index.ts';
import type { AppContext } from '../context.ts';
import { MEDIA_PREFIX } from './signed-paths.ts';

/** Parses a single-range `Range` header; undefined means "send everything" (absent, multi-range or not bytes). */
export function parseRange(header: string | undefined, size: number): { start: number; end?: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix) };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? undefined : Number(match[2]);
  if (end !== undefined && end < start) return undefined;
  return { start, end };
}

function cacheControlFor(key: string): string {
  // Playlists change while a stream is live; segments and posters under a key never do.
  if (key.endsWith('.m3u8')) return 'no-cache';
  if (/\.(ts|m4s|mp4|aac|jpg)$/.test(key)) return 'private, max-age=31536000, immutable';
  return 'private, max-age=60';
}

/** Serves blobs to players holding a signed media URL, with byte ranges and cache headers fit for HLS. */
export async function mediaRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  app.get<{ Params: { grant: string; '*': string } }>(`${MEDIA_PREFIX}/:grant/*`, { schema: { hide: true } }, async (request, reply) => {
    const verdict = ctx.media.verify(request.params.grant, request.params['*']);
    if (!verdict.ok) return reply.status(verdict.status).send({ error: verdict.error });
    const head = await ctx.blobs.head(verdict.key);
    if (!head) return reply.status(404).send({ error: 'no such media' });
    const range = parseRange(request.headers.range, head.size);
    if (range === 'unsatisfiable') return reply.status(416).header('content-range', `bytes */${head.size}`).send({ error: 'range not satisfiable' });
    let blob;
    try {
      blob = await ctx.blobs.get(verdict.key, range);
    } catch (err) {
      if (err instanceof RangeNotSatisfiableError) {
        return reply.status(416).header('content-range', `bytes */${head.size}`).send({ error: 'range not satisfiable' });
      }
      throw err;
    }
    if (!blob) return reply.status(404).send({ error: 'no such media' });
    reply
      .header('content-type', blob.contentType ?? head.contentType ?? 'application/octet-stream')
      .header('accept-ranges', 'bytes')
      .header('cache-control', cacheControlFor(verdict.key));
    if (blob.range) {
      reply
        .status(206)
        .header('content-range', `bytes ${blob.range.start}-${blob.range.end}/${blob.size}`)
        .header('content-length', blob.range.end - blob.range.start + 1);
    } else {
      reply.header('content-length', blob.size);
    }
    return reply.send(blob.body);
  });
}
