import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { MediaKind } from '../media/signed-paths.ts';

/** Absolute, signed, short-lived URL of a blob for players that cannot send headers (hls.js, <img>). */
export function signedMediaUrl(services: AppContext, request: FastifyRequest, kind: MediaKind, id: string, file: string): string {
  const origin = services.config.publicUrl ?? `${request.protocol}://${request.host}`;
  const expiresAt = new Date(Date.now() + services.config.mediaUrlTtlSeconds * 1000);
  return origin + services.media.url(kind, id, file, expiresAt);
}
