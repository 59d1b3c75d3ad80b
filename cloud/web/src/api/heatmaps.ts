/** Daily heatmaps of bee trajectories per box, rendered by the video gateway. */
import { defineOperation } from './graphql.ts';

export interface EntranceHeatmap {
  id: string;
  boxId: string;
  /** UTC day, YYYY-MM-DD. */
  date: string;
  imageURL: string;
  width: number | null;
  height: number | null;
  trajectoryCount: number | null;
  pointCount: number | null;
  lastSampleAt: string | null;
  updatedAt: string | null;
  maxCount: number | null;
}

export const HEATMAP_LIST_LIMIT = 30;

export const EntranceHeatmapsQuery = defineOperation<{ entranceHeatmaps: (EntranceHeatmap | null)[] | null }, { boxIds: string[]; date: string | null; limit: number }>(
  `query EntranceHeatmaps($boxIds: [ID]!, $date: String, $limit: Int) {
    entranceHeatmaps(boxIds: $boxIds, date: $date, limit: $limit) {
      id boxId date imageURL width height trajectoryCount pointCount lastSampleAt updatedAt maxCount
    }
  }`,
);
