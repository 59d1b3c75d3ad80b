import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { MediaKind } from '../media/signed-paths.ts';

/**
 * Absolute, signed, short-lived URL of a blob for players that cannot send headers (hls.js, <img>). `playSeconds`
 * lengthens the grant by that much: a stored clip's segments are fetched under its playlist's grant as playback goes,
 * so a clip started just before the link's expiry must still play to its end.
 */
export function signedMediaUrl(services: AppContext, request: FastifyRequest, kind: MediaKind, id: string, file: string, playSeconds = 0): string {
  const origin = services.config.publicUrl ?? `${request.protocol}://${request.host}`;
  const expiresAt = new Date(Date.now() + (services.config.mediaUrlTtlSeconds + Math.ceil(playSeconds)) * 1000);
  return origin + services.media.url(kind, id, file, expiresAt);
}
