/** Daily heatmaps of bee trajectories per box, rendered by the video gateway. */
import { refreshBeforeExpiry } from '../lib/media-links.ts';
import { defineOperation } from './graphql.ts';

export interface EntranceHeatmap {
  id: string;
  boxId: string;
  /** UTC day, YYYY-MM-DD. */
  date: string;
  /**
   * Signed, short-lived URL of the PNG; null until the day's first render has run (a render follows new trajectories
   * after a short debounce, so a day can be listed before its picture exists).
   */
  imageURL: string | null;
  width: number;
  height: number;
  trajectoryCount: number;
  pointCount: number;
  lastSampleAt: string | null;
  updatedAt: string;
  maxCount: number;
}

export const HEATMAP_LIST_LIMIT = 30;
/** The gallery re-reads this often while a listed day's picture is still being drawn, and every minute otherwise. */
export const HEATMAP_PENDING_POLL_MS = 5_000;
export const HEATMAP_REFRESH_MS = 60_000;

/** How soon to re-read a heatmap list: soon while a picture is missing, so it shows up without a reload. */
export function heatmapPollMs(heatmaps: readonly (Pick<EntranceHeatmap, 'imageURL'> | null)[] | null, now = Date.now()): number {
  if (heatmaps?.some((h) => h !== null && h.imageURL === null)) return HEATMAP_PENDING_POLL_MS;
  // Sooner when the pictures' links expire first (short link lifetimes).
  return Math.min(HEATMAP_REFRESH_MS, refreshBeforeExpiry(heatmaps?.map((h) => h?.imageURL) ?? [], now) ?? HEATMAP_REFRESH_MS);
}

export const EntranceHeatmapsQuery = defineOperation<{ entranceHeatmaps: (EntranceHeatmap | null)[] | null }, { boxIds: string[]; date: string | null; limit: number }>(
  `query EntranceHeatmaps($boxIds: [ID]!, $date: String, $limit: Int) {
    entranceHeatmaps(boxIds: $boxIds, date: $date, limit: $limit) {
      id boxId date imageURL width height trajectoryCount pointCount lastSampleAt updatedAt maxCount
    }
  }`,
);
