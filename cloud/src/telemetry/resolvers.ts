import { clientError, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
import { chooseBucket, isIsoDate } from './buckets.ts';
import { dateIn, dayBounds, isTimeZone } from './local-day.ts';
import type { BoxRow, HiveRow } from './read-repository.ts';

interface RangeArgs {
  from: Date;
  to: Date;
  bucketSeconds?: number | null;
}

function bucketOrThrow(args: RangeArgs): number {
  const choice = chooseBucket(args.from, args.to, args.bucketSeconds);
  if (!choice.ok) throw clientError(choice.error);
  return choice.bucketSeconds;
}

export const telemetryResolvers: Resolvers = {
  Query: {
    hives: (_root: unknown, _args: unknown, ctx: GraphQLContext) => ctx.services.telemetryReads.hives(requireUser(ctx).userId),
    hive: (_root: unknown, args: { id: string }, ctx: GraphQLContext) => ctx.services.telemetryReads.hive(requireUser(ctx).userId, String(args.id)),
    box: (_root: unknown, args: { id: string }, ctx: GraphQLContext) => ctx.services.telemetryReads.box(requireUser(ctx).userId, String(args.id)),
    boxes: (_root: unknown, args: { hiveId?: string | null }, ctx: GraphQLContext) =>
      ctx.services.telemetryReads.boxes(requireUser(ctx).userId, args.hiveId == null ? undefined : String(args.hiveId)),
    hiveMetrics: (_root: unknown, args: RangeArgs & { hiveId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.metricSeries(user.userId, String(args.hiveId), args.from, args.to, bucketOrThrow(args));
    },
    entranceMovement: (_root: unknown, args: RangeArgs & { boxId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.movementSeries(user.userId, String(args.boxId), args.from, args.to, bucketOrThrow(args));
    },
    entranceTotals: (_root: unknown, args: { boxIds?: (string | null)[] | null; date?: string | null; timeZone?: string | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      const boxIds = args.boxIds?.filter((id): id is string => id != null).map(String);
      return ctx.services.telemetryReads.entranceTotals(user.userId, calendarDay(args), boxIds);
    },
  },
  Hive: {
    lastReading: (hive: HiveRow, _args: unknown, ctx: GraphQLContext) => ctx.services.telemetryReads.lastReading(requireUser(ctx).userId, hive.id),
    boxes: (hive: HiveRow, _args: unknown, ctx: GraphQLContext) => ctx.services.telemetryReads.boxes(requireUser(ctx).userId, hive.id),
  },
  Box: {
    today: async (box: BoxRow, args: { timeZone?: string | null }, ctx: GraphQLContext) => {
      const day = calendarDay(args);
      const [totals] = await ctx.services.telemetryReads.entranceTotals(requireUser(ctx).userId, day, [box.id]);
      // A box known by its camera, clips or token but not yet by counts has counted nothing today.
      return totals ?? { boxId: box.id, hiveId: box.hiveId, date: day.date, beesIn: 0, beesOut: 0, netFlow: 0, lastSampleAt: null };
    },
  },
};

/** The day the arguments name, `date` (default today) in `timeZone` (default UTC), with the instants it spans. */
function calendarDay(args: { date?: string | null; timeZone?: string | null }): { date: string; from: Date; to: Date } {
  const timeZone = args.timeZone ?? 'UTC';
  if (!isTimeZone(timeZone)) throw clientError(`timeZone must be an IANA time zone such as "Europe/Vienna", got "${timeZone}"`);
  const date = args.date ?? dateIn(timeZone);
  if (!isIsoDate(date)) throw clientError('date must be a calendar date YYYY-MM-DD');
  return { date, ...dayBounds(date, timeZone) };
}
