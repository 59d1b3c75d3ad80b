import { coveredBoxes } from '../auth/box-scope.ts';
import { clientError, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
import { isIsoDate } from '../telemetry/buckets.ts';
import { signedMediaUrl } from '../video/media-urls.ts';
import type { HeatmapDay } from './heatmaps-repository.ts';
import { folderOfImageKey, imageSizeFor } from './keys.ts';

const DEFAULT_LIMIT = 30;
const MAX_LIMIT = 120;

export const heatmapResolvers: Resolvers = {
  Query: {
    entranceHeatmaps: (_root: unknown, args: { boxIds: (string | number | null)[]; date?: string | null; limit?: number | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'read');
      const limit = args.limit ?? DEFAULT_LIMIT;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw clientError(`limit must be from 1 to ${MAX_LIMIT}, got ${limit}`);
      if (args.date != null && !isIsoDate(args.date)) throw clientError(`date must be a calendar date YYYY-MM-DD, got "${args.date}"`);
      const boxIds = coveredBoxes(user, args.boxIds.filter((id) => id != null).map(String)) ?? [];
      if (boxIds.length === 0) return [];
      return ctx.services.heatmaps.list(user.userId, boxIds, args.date ?? null, limit);
    },
  },
  EntranceHeatmap: {
    imageURL: (day: HeatmapDay, _args: unknown, ctx: GraphQLContext) =>
      day.imageKey ? signedMediaUrl(ctx.services, ctx.request, 'heatmaps', folderOfImageKey(day.imageKey), `${day.date}.png`) : null,
    width: (day: HeatmapDay) => day.imageWidth ?? imageSizeFor(day.frameWidth, day.frameHeight).width,
    height: (day: HeatmapDay) => day.imageHeight ?? imageSizeFor(day.frameWidth, day.frameHeight).height,
  },
};
