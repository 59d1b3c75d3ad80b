import { grants, isLiveRelayProtocol, LIVE_RELAY_PROTOCOLS, type LiveRelayProtocol, type LiveSessionStatus } from '@hivegate/shared';
import { coversBox } from '../auth/box-scope.ts';
import type { Principal } from '../auth/tokens.ts';
import { clientError, requireBox, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
import { isRefusal, untilRefused, type Refusal } from '../graphql/until-refused.ts';
import { JPEG_CONTENT_TYPE, MJPEG_CONTENT_TYPE } from './jpeg.ts';
import { isEnded } from './session-machine.ts';
import { isUuid, type SessionRecord } from './sessions-repository.ts';
import type { BoxRow } from '../telemetry/read-repository.ts';

const PROFILE = /^[A-Za-z0-9_-]{1,32}$/;
// The agent's own default profile: "standard", used before, is none of its profiles (low, medium, high), so every live
// view started without one logged a fallback note and the web app showed a quality the camera never used.
export const DEFAULT_QUALITY_PROFILE = 'medium';
export const DEFAULT_RECORDING_MODE = 'none';
const HLS_CONTENT_TYPE = 'application/vnd.apple.mpegurl';

function origin(ctx: GraphQLContext): string {
  return ctx.services.config.publicUrl ?? `${ctx.request.protocol}://${ctx.request.host}`;
}

function optionalRelay(value: string | null | undefined): LiveRelayProtocol | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (!isLiveRelayProtocol(value)) throw clientError(`relayProtocol must be one of ${LIVE_RELAY_PROTOCOLS.map((p) => `"${p}"`).join(', ')}`);
  return value;
}

function optionalToken(value: string | null | undefined, field: string, fallback: string): string {
  if (value === null || value === undefined || value === '') return fallback;
  if (!PROFILE.test(value)) throw clientError(`${field} must be 1 to 32 letters, digits, "_" or "-"`);
  return value;
}

/**
 * The session as the web app selects it. The playback URL is re-signed on every read and disappears when the
 * session ends. An HLS one appears once the publisher's first playlist arrived (players fail on a missing
 * playlist); an MJPEG one right away (the stream simply waits for the first frame, and shows it the moment it
 * comes). The publish token never goes to a browser: only the device gets it, in START_STREAM.
 *
 * Watching is reading: a token without `read` (one that only starts, keeps and stops sessions) gets no playback URL
 * and none of what the device reported, only what steering needs (id, box, status, deadline, the options asked for).
 * A control-only token got a playable URL from start and keep-alive, though reading the session was refused it.
 */
export function sessionView(ctx: GraphQLContext, s: SessionRecord, viewer: Principal) {
  const live = ctx.services.live;
  const over = isEnded(s.status);
  const base = origin(ctx);
  const jpeg = s.relayProtocol === 'http-jpeg-push';
  const reads = grants(viewer.scopes, 'read');
  const playbackUrl = reads && !over && (jpeg || s.firstPlaylistAt) ? live.playbackUrl(base, s.id, s.relayProtocol) : null;
  const publisherUrl = reads && !over ? live.publisherUrl(base, s.id, s.relayProtocol) : null;
  const reported = <T>(value: T): T | null => (reads ? value : null);
  return {
    id: s.id,
    boxId: s.boxId,
    status: s.status satisfies LiveSessionStatus,
    playbackUrl,
    expiresAt: s.keepaliveDeadline,
    qualityProfile: s.qualityProfile,
    recordingMode: s.recordingMode,
    relayProtocol: s.relayProtocol,
    notice: reported(s.deviceNotice),
    clipHandoffEnabled: s.clipHandoffEnabled,
    handoffStreamId: reported(s.handoffStreamId),
    lastKeepaliveAt: s.lastKeepaliveAt,
    lastDeviceSeenAt: reported(s.lastDeviceSeenAt),
    lastErrorCode: reported(s.lastErrorCode),
    lastErrorMessage: reported(s.lastErrorMessage),
    publisherUrl,
    publishToken: null,
    signalingToken: null,
    createdAt: s.createdAt,
    relayDetails: {
      relayProtocol: s.relayProtocol,
      placeholder: false,
      publisherUrl,
      publishToken: null,
      signalingToken: null,
      playbackUrl,
      frameContentType: jpeg ? JPEG_CONTENT_TYPE : null,
      playbackContentType: jpeg ? MJPEG_CONTENT_TYPE : HLS_CONTENT_TYPE,
    },
  };
}

function notFound(): Error {
  return clientError('live session not found', 'NOT_FOUND');
}

/**
 * A token made for some boxes keeps and stops the sessions of those boxes only; another box's session is answered as
 * a missing one. "may not act for box" told such a token which other boxes its owner has.
 */
async function requireSessionBox(ctx: GraphQLContext, user: Principal, sessionId: string): Promise<void> {
  if (user.boxIds === null) return;
  const session = await ctx.services.live.findSession(user.userId, sessionId);
  if (session && !coversBox(user, session.boxId)) throw notFound();
}

/** A session id that is no UUID is the caller's typo, said as such rather than as a session that does not exist. */
function requireWellFormedSessionId(sessionId: string): void {
  if (!isUuid(sessionId)) throw clientError(`sessionId "${sessionId.slice(0, 64)}" is malformed: a live session id is a UUID`);
}

export const liveResolvers: Resolvers = {
  Query: {
    entranceLiveStreamSession: async (_root: unknown, args: { boxId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'read');
      requireBox(user, String(args.boxId));
      const session = await ctx.services.live.currentSession(user.userId, String(args.boxId));
      return session ? sessionView(ctx, session, user) : null;
    },
  },
  Mutation: {
    startEntranceLiveStream: async (
      _root: unknown,
      args: { boxId: string; qualityProfile?: string | null; recordingMode?: string | null; relayProtocol?: string | null },
      ctx: GraphQLContext,
    ) => {
      const user = requireUser(ctx, 'control');
      const boxId = String(args.boxId);
      if (boxId === '' || boxId.length > 128) throw clientError('boxId must be 1 to 128 characters');
      requireBox(user, boxId);
      const options = {
        qualityProfile: optionalToken(args.qualityProfile, 'qualityProfile', DEFAULT_QUALITY_PROFILE),
        recordingMode: optionalToken(args.recordingMode, 'recordingMode', DEFAULT_RECORDING_MODE),
        relayProtocol: optionalRelay(args.relayProtocol),
      };
      // A box the account has nothing of (a typo, someone else's box) would wait in DEVICE_OFFLINE for ever.
      if (!(await ctx.services.telemetryReads.box(user.userId, boxId))) {
        throw clientError(`boxId "${boxId}" is not a box of this account: it has no counts, camera, clips, heatmaps or token`);
      }
      const session = await ctx.services.live.startSession(user.userId, boxId, options);
      return sessionView(ctx, session, user);
    },
    keepEntranceLiveStreamAlive: async (_root: unknown, args: { sessionId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'control');
      requireWellFormedSessionId(String(args.sessionId));
      await requireSessionBox(ctx, user, String(args.sessionId));
      const session = await ctx.services.live.keepAlive(user.userId, String(args.sessionId));
      if (!session) throw notFound();
      return sessionView(ctx, session, user);
    },
    stopEntranceLiveStream: async (_root: unknown, args: { sessionId: string }, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'control');
      requireWellFormedSessionId(String(args.sessionId));
      await requireSessionBox(ctx, user, String(args.sessionId));
      const session = await ctx.services.live.stopSession(user.userId, String(args.sessionId));
      if (!session) throw notFound();
      return true;
    },
  },
  Box: {
    device: async (box: BoxRow, _args: unknown, ctx: GraphQLContext) => {
      const user = requireUser(ctx, 'read');
      // A box-scoped token sees the devices of its own boxes only, as with sessions.
      if (!coversBox(user, box.id)) return null;
      const device = await ctx.services.live.devices.presence(user.userId, box.id, ctx.services.config.live.deviceOnlineSeconds);
      return device ?? null;
    },
  },
  Subscription: {
    entranceLiveStreamSessionChanged: {
      subscribe: (_root: unknown, args: { boxId: string }, ctx: GraphQLContext) => {
        const user = requireUser(ctx, 'read');
        requireBox(user, String(args.boxId));
        // Checked at every event (from a cache of a few seconds): the socket was authenticated only when it opened.
        // A refused token gets one UNAUTHENTICATED error, then the subscription completes.
        return untilRefused(ctx.services.live.sessionChanges(user.userId, String(args.boxId)), () => ctx.services.tokens.refusalOf(user));
      },
      resolve: async (event: string | Refusal, _args: unknown, ctx: GraphQLContext) => {
        if (isRefusal(event)) throw clientError(event.refused, 'UNAUTHENTICATED');
        const user = requireUser(ctx, 'read');
        const session = await ctx.services.live.findSession(user.userId, event);
        return session ? sessionView(ctx, session, user) : null;
      },
    },
  },
};
