import { coveredBoxes, coversBox } from '../auth/box-scope.ts';
import { clientError, requireBox, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
import { bucketStarts } from './bucket-starts.ts';
import { chooseBucket, isIsoDate } from './buckets.ts';
import { dateIn, dayBounds, isTimeZone } from './local-day.ts';
import type { MercuriusLoaders } from 'mercurius';
import type { BoxRow, EntranceTotals, HiveRow } from './read-repository.ts';

interface RangeArgs {
  from: Date;
  to: Date;
  bucketSeconds?: number | null;
  timeZone?: string | null;
}

/** The IANA time zone the arguments name (default UTC): its wall clock lays out buckets and days. */
function timeZoneOf(args: { timeZone?: string | null }): string {
  const timeZone = args.timeZone ?? 'UTC';
  if (!isTimeZone(timeZone)) throw clientError(`timeZone must be an IANA time zone such as "Europe/Vienna", got "${timeZone}"`);
  return timeZone;
}

/** Where the range's buckets start, laid on the wall clock of the arguments' time zone. */
function bucketStartsOrThrow(args: RangeArgs): Date[] {
  const choice = chooseBucket(args.from, args.to, args.bucketSeconds);
  if (!choice.ok) throw clientError(choice.error);
  return bucketStarts(args.from, args.to, choice.bucketSeconds, timeZoneOf(args));
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
    boxesAwaitingCounts: (_root: unknown, _args: unknown, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      return ctx.services.telemetryReads.boxesAwaitingCounts(user.userId, user.boxIds);
    },
    hiveMetrics: async (_root: unknown, args: RangeArgs & { hiveId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      const hiveId = String(args.hiveId);
      const starts = bucketStartsOrThrow(args);
      if (user.boxIds && !(await ctx.services.telemetryReads.hive(user.userId, hiveId, user.boxIds))) {
        throw clientError(`this token may not read hive "${hiveId}": none of its boxes counts there`, 'FORBIDDEN');
      }
      return ctx.services.telemetryReads.metricSeries(user.userId, hiveId, args.from, args.to, starts);
    },
    entranceMovement: (_root: unknown, args: RangeArgs & { boxId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      requireBox(user, String(args.boxId));
      return ctx.services.telemetryReads.movementSeries(user.userId, String(args.boxId), args.from, args.to, bucketStartsOrThrow(args));
    },
    entranceTotals: (_root: unknown, args: { boxIds?: (string | null)[] | null; date?: string | null; timeZone?: string | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      const wanted = args.boxIds ? args.boxIds.filter((id): id is string => id != null).map(String) : null;
      return ctx.services.telemetryReads.entranceTotals(user.userId, calendarDay(args), coveredBoxes(user, wanted) ?? undefined);
    },
  },
};

/**
 * The fields read for each hive or box of a list, each batched into one query for the whole list: a page of 100 hives
 * with their boxes and today's totals costs three queries, not 300.
 */
export const telemetryLoaders: MercuriusLoaders<GraphQLContext> = {
  Hive: {
    boxes: async (queries: { obj: HiveRow }[], ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      const hiveIds = queries.map(({ obj }) => obj.id);
      const boxes = await ctx.services.telemetryReads.boxesOfHives(user.userId, hiveIds, user.boxIds);
      return hiveIds.map((hiveId) => boxes.filter((box) => box.hiveId === hiveId));
    },
    lastReading: async (queries: { obj: HiveRow }[], ctx: GraphQLContext) => {
      const hiveIds = queries.map(({ obj }) => obj.id);
      const readings = await ctx.services.telemetryReads.lastReadings(requireUser(ctx).userId, hiveIds);
      return hiveIds.map((hiveId) => readings.get(hiveId) ?? null);
    },
  },
  Box: {
    today: async (queries: { obj: BoxRow; params: { timeZone?: string | null } }[], ctx: GraphQLContext) => {
      const user = requireUser(ctx);
      // One query per calendar day asked for: usually one, as a page asks in the user's time zone.
      const days = new Map<string, { day: CalendarDay; boxIds: string[] }>();
      const dayKeys = queries.map(({ obj, params }) => {
        const day = calendarDay(params);
        const key = `${day.date} ${day.from.toISOString()}`;
        const group = days.get(key) ?? days.set(key, { day, boxIds: [] }).get(key)!;
        group.boxIds.push(obj.id);
        return key;
      });
      const totals = new Map<string, EntranceTotals>();
      for (const [key, { day, boxIds }] of days) {
        for (const row of await ctx.services.telemetryReads.entranceTotals(user.userId, day, boxIds)) totals.set(`${key} ${row.boxId}`, row);
      }
      return queries.map(({ obj: box }, i) => {
        const key = dayKeys[i]!;
        // A box known by its camera, clips or token but not yet by counts has counted nothing today.
        return totals.get(`${key} ${box.id}`) ?? { boxId: box.id, hiveId: box.hiveId, date: days.get(key)!.day.date, beesIn: 0, beesOut: 0, netFlow: 0, lastSampleAt: null };
      });
    },
  },
};

interface CalendarDay {
  date: string;
  from: Date;
  to: Date;
}

/** The day the arguments name, `date` (default today) in `timeZone` (default UTC), with the instants it spans. */
function calendarDay(args: { date?: string | null; timeZone?: string | null }): CalendarDay {
  const timeZone = timeZoneOf(args);
  const date = args.date ?? dateIn(timeZone);
  if (!isIsoDate(date)) throw clientError('date must be a calendar date YYYY-MM-DD');
  return { date, ...dayBounds(date, timeZone) };
}
