import { coveredBoxes, coversBox } from '../auth/box-scope.ts';
import { clientError, requireBox, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
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
    hives: (_root: unknown, _args: unknown, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.hives(user.userId, user.boxIds);
    },
    hive: (_root: unknown, args: { id: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.hive(user.userId, String(args.id), user.boxIds);
    },
    box: (_root: unknown, args: { id: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return coversBox(user, String(args.id)) ? ctx.services.telemetryReads.box(user.userId, String(args.id)) : null;
    },
    boxes: (_root: unknown, args: { hiveId?: string | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.boxes(user.userId, args.hiveId == null ? null : String(args.hiveId), user.boxIds);
    },
    hiveMetrics: async (_root: unknown, args: RangeArgs & { hiveId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      const hiveId = String(args.hiveId);
      const bucketSeconds = bucketOrThrow(args);
      if (user.boxIds && !(await ctx.services.telemetryReads.hive(user.userId, hiveId, user.boxIds))) {
        throw clientError(`this token may not read hive "${hiveId}": none of its boxes counts there`, 'FORBIDDEN');
      }
      return ctx.services.telemetryReads.metricSeries(user.userId, hiveId, args.from, args.to, bucketSeconds);
    },
    entranceMovement: (_root: unknown, args: RangeArgs & { boxId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      requireBox(user, String(args.boxId));
      return ctx.services.telemetryReads.movementSeries(user.userId, String(args.boxId), args.from, args.to, bucketOrThrow(args));
    },
    entranceTotals: (_root: unknown, args: { boxIds?: (string | null)[] | null; date?: string | null; timeZone?: string | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      const wanted = args.boxIds ? args.boxIds.filter((id): id is string => id != null).map(String) : null;
      return ctx.services.telemetryReads.entranceTotals(user.userId, calendarDay(args), coveredBoxes(user, wanted) ?? undefined);
    },
  },
  Hive: {
    lastReading: (hive: HiveRow, _args: unknown, ctx: GraphQLContext) => ctx.services.telemetryReads.lastReading(requireUser(ctx).userId, hive.id),
    boxes: (hive: HiveRow, _args: unknown, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.boxes(user.userId, hive.id, user.boxIds);
    },
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
