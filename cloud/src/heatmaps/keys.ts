import { createHash } from 'node:crypto';

const PLAIN_BOX_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The blob folder of one box's heatmaps, `heatmaps/{folder}/{date}.png`. Box ids are chosen by each user, so two
 * users may both have box "1": the folder carries the owner. Plain ids stay readable (`7-1`); any other id is
 * hashed so that it is always one safe path segment, after a `~` that no plain id holds. (Images rendered before
 * wrote `7-h{hash}`, which the plain id "h{hash}" could also name; they are found by the key stored with them.) Pure.
 */
export function heatmapFolder(ownerId: number, boxId: string): string {
  if (PLAIN_BOX_ID.test(boxId)) return `${ownerId}-${boxId}`;
  return `${ownerId}~${createHash('sha256').update(boxId).digest('hex').slice(0, 32)}`;
}

export function heatmapImageKey(ownerId: number, boxId: string, date: string): string {
  return `heatmaps/${heatmapFolder(ownerId, boxId)}/${date}.png`;
}

/** The folder of a stored image key: the image's URL names where it was written, whichever scheme wrote it. */
export function folderOfImageKey(key: string): string {
  const folder = key.split('/')[1];
  if (!key.startsWith('heatmaps/') || !folder) throw new Error(`not a heatmap image key: ${key}`);
  return folder;
}

/** Rendered images are at most this wide or high, whatever the camera: enough to see paths on a phone or a screen. */
export const MAX_IMAGE_SIDE = 1280;

/** Image size for a frame: the frame's own size, scaled down to fit MAX_IMAGE_SIDE with its aspect kept. */
export function imageSizeFor(frameWidth: number, frameHeight: number): { width: number; height: number } {
  const scale = Math.min(1, MAX_IMAGE_SIDE / Math.max(frameWidth, frameHeight));
  return { width: Math.max(1, Math.round(frameWidth * scale)), height: Math.max(1, Math.round(frameHeight * scale)) };
}
