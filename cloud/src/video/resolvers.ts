import { GraphQLUpload } from 'graphql-upload-minimal';
import { deviceTimeProblem, grants } from '@hivegate/shared';
import type { Principal } from '../auth/tokens.ts';
import { coveredBoxes, coversBox } from '../auth/box-scope.ts';
import { clientError, requireBox, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
import { signedMediaUrl } from './media-urls.ts';
import { UploadFailedError, UploadTooLargeError, type FileUpload } from './receive-upload.ts';
import { PLAYLIST_FILE, POSTER_JPEG } from './rendition.ts';
import { VideoRejectedError } from './video-service.ts';
import type { GateVideo } from './videos-repository.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const MAX_STREAMS = 500;

interface UploadArgs {
  file: Promise<FileUpload>;
  boxId: string | number;
  startTime?: Date | null;
  detectionsFile?: Promise<FileUpload> | null;
}

/** Devices upload with `ingest`, people with `control`. */
function requireUploader(ctx: GraphQLContext): Principal {
  const scopes = ctx.principal?.scopes ?? [];
  if (ctx.principal && !grants(scopes, 'control') && !grants(scopes, 'ingest')) {
    throw clientError('this token lacks the "control" or "ingest" scope', 'FORBIDDEN');
  }
  return requireUser(ctx, grants(scopes, 'control') ? 'control' : 'ingest');
}

function playable(video: GateVideo): boolean {
  return video.state === 'READY';
}

/** A clip's signed URL; it lasts its playing time longer (a 3-hour clip stalled when the link expired mid-way). */
function url(ctx: GraphQLContext, video: GateVideo, file: string): string | null {
  return playable(video) ? signedMediaUrl(ctx.services, ctx.request, 'videos', video.id, file, video.durationSeconds ?? 0) : null;
}

export const videoResolvers: Resolvers = {
  Upload: GraphQLUpload as never,
  Query: {
    gateVideos: async (_root: unknown, args: { boxId: string | number; from?: Date | null; to?: Date | null; limit?: number | null; after?: string | number | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'read');
      requireBox(user, String(args.boxId));
      const limit = args.limit ?? DEFAULT_LIMIT;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw clientError(`limit must be from 1 to ${MAX_LIMIT}, got ${limit}`);
      if (args.from && args.to && args.from >= args.to) throw clientError('from must be before to');
      let after: GateVideo | undefined;
      if (args.after != null) {
        after = (await ctx.services.videos.get(user.userId, String(args.after))) ?? undefined;
        if (!after || after.boxId !== String(args.boxId)) throw clientError(`after names no video of box ${String(args.boxId)}: ${String(args.after)}`);
      }
      return ctx.services.videos.list(user.userId, String(args.boxId), { from: args.from ?? undefined, to: args.to ?? undefined, limit, after });
    },
    gateVideo: async (_root: unknown, args: { id: string | number }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'read');
      const video = await ctx.services.videos.get(user.userId, String(args.id));
      // A token made for other boxes learns no more of this clip than of someone else's.
      return video && coversBox(user, video.boxId) ? video : null;
    },
    videoStreams: (_root: unknown, args: { boxIds?: (string | number | null)[] | null; active?: boolean | null }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'read');
      const wanted = args.boxIds == null ? null : args.boxIds.filter((id) => id != null).map(String);
      return ctx.services.videos.streams(user.userId, coveredBoxes(user, wanted), args.active ?? null, MAX_STREAMS);
    },
  },
  Mutation: {
    uploadGateVideo: async (_root: unknown, args: UploadArgs, ctx: GraphQLContext) => {
      const principal = requireUploader(ctx);
      const boxId = String(args.boxId);
      requireBox(principal, boxId);
      // A camera with an unset clock filed its clip in 1970 or 2099, as telemetry would have been without this check.
      const clockProblem = args.startTime ? deviceTimeProblem(args.startTime.getTime(), new Date(), `startTime ${args.startTime.toISOString()}`) : undefined;
      if (clockProblem) throw clientError(clockProblem);
      try {
        await ctx.services.videoService.upload({
          ownerId: principal.userId,
          boxId,
          startTime: args.startTime ?? undefined,
          file: args.file,
          detectionsFile: args.detectionsFile,
        });
      } catch (err) {
        if (err instanceof UploadTooLargeError) throw clientError(err.message, 'PAYLOAD_TOO_LARGE');
        if (err instanceof VideoRejectedError || err instanceof UploadFailedError) throw clientError(err.message);
        throw err;
      }
      return true;
    },
    deleteGateVideo: async (_root: unknown, args: { id: string | number }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'control');
      const id = String(args.id);
      const missing = () => clientError(`no video with id "${id}"`);
      // A clip of another box is answered as a missing one: a refusal naming its box told a token limited to boxes
      // which other boxes its owner has.
      if (user.boxIds) {
        const video = await ctx.services.videos.get(user.userId, id);
        if (video && !coversBox(user, video.boxId)) throw missing();
      }
      if (!(await ctx.services.videoService.delete(user.userId, id))) throw missing();
      return true;
    },
  },
  GateVideo: {
    posterURL: (video: GateVideo, _args: unknown, ctx: GraphQLContext) => url(ctx, video, POSTER_JPEG),
    playlistURL: (video: GateVideo, _args: unknown, ctx: GraphQLContext) => url(ctx, video, PLAYLIST_FILE),
  },
  VideoStream: {
    maxSegment: (video: GateVideo) => (playable(video) && video.segmentCount ? video.segmentCount - 1 : null),
    playlistURL: (video: GateVideo, _args: unknown, ctx: GraphQLContext) => url(ctx, video, PLAYLIST_FILE),
    active: (video: GateVideo) => video.state === 'UPLOADED' || video.state === 'PROCESSING',
  },
};
