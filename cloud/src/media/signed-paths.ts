import { createHmac, timingSafeEqual } from 'node:crypto';
import { isValidKey } from '../storage/blob-store.ts';
import { isPlaybackFile } from '../video/rendition.ts';

/**
 * Players (hls.js, <video>, <img>) fetch media without custom headers, so the authorisation travels in the path:
 * `/media/{expires}.{signature}/{kind}/{id}/{file…}`. The signature covers the scope `{kind}/{id}` and the expiry,
 * so one URL grants one video, live session or box's heatmaps for a short while, and relative URLs inside an HLS
 * playlist (segments, sub-playlists) resolve under the same grant. Within a scope a grant opens only what players
 * fetch (SERVED_FILES): a clip's playlist link also served its original upload and detections.
 */
export const MEDIA_PREFIX = '/media';
const SIGNATURE_BYTES = 18;

export type MediaKind = 'videos' | 'live' | 'heatmaps';
const KINDS = new Set<string>(['videos', 'live', 'heatmaps']);

/**
 * The files under `{kind}/{id}/` a grant serves: of a clip, its HLS rendition and poster. A live session's folder holds
 * only what its publisher sent for playback, a box's heatmaps folder only the images.
 */
const SERVED_FILES: Record<MediaKind, (file: string) => boolean> = {
  videos: isPlaybackFile,
  live: () => true,
  heatmaps: () => true,
};

export class MediaSigner {
  private readonly key: Buffer;

  constructor(secret: Uint8Array) {
    // A key of its own, derived from the deployment secret, so media URLs can never pass for tokens.
    this.key = createHmac('sha256', Buffer.from(secret)).update('hivegate media urls').digest();
  }

  private signature(scope: string, expires: number): Buffer {
    return createHmac('sha256', this.key).update(`${scope}\n${expires}`).digest().subarray(0, SIGNATURE_BYTES);
  }

  /** A URL path (append it to the public origin) granting `{kind}/{id}/{file}` until `expiresAt`. */
  url(kind: MediaKind, id: string, file: string, expiresAt: Date): string {
    const expires = Math.floor(expiresAt.getTime() / 1000);
    const scope = `${kind}/${id}`;
    const grant = `${expires}.${this.signature(scope, expires).toString('base64url')}`;
    return `${MEDIA_PREFIX}/${grant}/${scope}/${file}`;
  }

  /**
   * Checks a grant against the requested blob key; returns the key or the reason it is refused.
   * `rest` is everything after the grant: `{kind}/{id}/{file…}`.
   */
  verify(grant: string, rest: string, now = Date.now()): { ok: true; key: string; kind: MediaKind; id: string } | { ok: false; status: 403 | 404; error: string } {
    const match = /^(\d{1,12})\.([\w-]+)$/.exec(grant);
    const parts = rest.split('/');
    // A path no store can hold (a NUL, a control character) is missing media too, not a store error and a 500.
    if (!match || parts.length < 3 || !KINDS.has(parts[0]!) || parts.some((p) => p === '' || p === '.' || p === '..') || !isValidKey(rest)) {
      return { ok: false, status: 404, error: 'no such media' };
    }
    const expires = Number(match[1]);
    const given = Buffer.from(match[2]!, 'base64url');
    const expected = this.signature(`${parts[0]}/${parts[1]}`, expires);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, status: 403, error: 'media link is not valid' };
    if (expires * 1000 <= now) return { ok: false, status: 403, error: 'media link has expired' };
    if (!SERVED_FILES[parts[0] as MediaKind](parts.slice(2).join('/'))) return { ok: false, status: 403, error: 'media link is not valid' };
    return { ok: true, key: rest, kind: parts[0] as MediaKind, id: parts[1]! };
  }
}
