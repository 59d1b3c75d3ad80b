/**
 * A scripted stand-in for the video and live gateways' GraphQL operations, for fast browser tests of the entrance
 * page's states (camera offline, failure messages, processing clips…) that the real gateways reach only through
 * devices and time. It serves the cloud's own GraphQL schema on mercurius like the cloud (validation, non-null
 * checks, subscriptions over graphql-transport-ws), the real built web app and real HLS media made with ffmpeg; only
 * the answers are scripted by the test, and they must fit the real schema.
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import mercurius, { type IResolvers } from 'mercurius';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSchema } from '../../src/graphql/plugin.ts';
import { installErrorHandling } from '../../src/http/errors.ts';
import { webAppRoutes } from '../../src/web/routes.ts';

export interface LiveSession {
  id: string;
  boxId: string;
  status: string;
  playbackUrl: string | null;
  expiresAt: string | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  [field: string]: unknown;
}

export interface ReceivedUpload {
  operations: { query: string; operationName?: string; variables: Record<string, unknown> };
  map: Record<string, string[]>;
  files: { field: string; filename: string; contentType: string; size: number; sha256: string }[];
}

export interface ScriptedState {
  boxId: string;
  hiveId: string;
  /** Change it with setLive, which also tells subscribers. */
  live: LiveSession | null;
  /** Whether Stop leaves the session STOPPING (the camera still has to stop) rather than ending it at once. */
  stopping?: boolean;
  /** Whether the subscription endpoint accepts connections (off: the app must fall back to re-reading). */
  subscriptions: boolean;
  /** Subscriptions made so far (each one is listening once counted). */
  subscribed: number;
  /** Every GraphQL call by operation name, with its variables. */
  calls: { name: string; variables: Record<string, unknown> }[];
  videos: Record<string, unknown>[];
  heatmaps: Record<string, unknown>[];
  uploads: ReceivedUpload[];
  /** Paths of the requests for expiring clip links, in order. */
  mediaRequests: string[];
  devices: Record<string, { online: boolean; lastSeenAt: string }>;
  /** What uploadGateVideo does with a received clip (the test decides). */
  onUpload?: (upload: ReceivedUpload) => void;
}

interface Part {
  name: string;
  filename?: string;
  contentType: string;
  data: Buffer;
}

/** Just enough multipart/form-data parsing to check what the browser sent. */
function parseMultipart(body: Buffer, contentType: string): Part[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) throw new Error('multipart body without boundary');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: Part[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const chunk = body.subarray(start + delimiter.length + 2, next - 2);
    const headerEnd = chunk.indexOf('\r\n\r\n');
    const headers = chunk.subarray(0, headerEnd).toString('utf8');
    const disposition = /content-disposition:[^\r\n]*?;\s*name="([^"]*)"(?:;\s*filename="([^"]*)")?/i.exec(headers);
    if (disposition) {
      parts.push({
        name: disposition[1]!,
        filename: disposition[2],
        contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? 'text/plain',
        data: chunk.subarray(headerEnd + 4),
      });
    }
    start = next;
  }
  return parts;
}

const CONTENT_TYPES: Record<string, string> = { '.m3u8': 'application/vnd.apple.mpegurl', '.ts': 'video/mp2t', '.png': 'image/png', '.jpg': 'image/jpeg', '.mp4': 'video/mp4' };

export interface ScriptedGateway {
  url: string;
  state: ScriptedState;
  mediaUrl: (file: string) => string;
  /** A link to a file of the stored clip that expires at `expiresAt` (Unix ms), as the server's signed links do. */
  signedClipUrl: (id: string, file: string, expiresAt: number) => string;
  /** Replaces the live session and pushes it to subscribers, as the live gateway does on every change. */
  setLive: (session: LiveSession | null) => void;
  close: () => Promise<void>;
}

export async function startScriptedGateway(mediaDir: string): Promise<ScriptedGateway> {
  let base = '';
  const state: ScriptedState = { boxId: 'b1', hiveId: 'h1', live: null, subscriptions: true, subscribed: 0, calls: [], videos: [], heatmaps: [], uploads: [], mediaRequests: [], devices: {} };
  const now = () => new Date().toISOString();
  const today = () => ({ boxId: state.boxId, hiveId: state.hiveId, date: now().slice(0, 10), beesIn: 311, beesOut: 287, netFlow: 24, lastSampleAt: now() });
  const box = () => ({ id: state.boxId, hiveId: state.hiveId, firstSeenAt: now(), today: today(), device: state.devices[state.boxId] ?? null });
  let sessionCounter = 0;
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 50 * 1024 * 1024 });
  const setLive = (session: LiveSession | null) => {
    const boxId = session?.boxId ?? state.live?.boxId ?? state.boxId;
    state.live = session;
    void app.graphql.pubsub.publish({ topic: `live:${boxId}`, payload: { entranceLiveStreamSessionChanged: session } });
  };
  type Args<T> = (root: unknown, args: T) => unknown;
  const field = <T>(fn: (args: T) => unknown): Args<T> => (_root, args) => fn(args);

  const resolvers = {
    Query: {
      me: field(() => ({ id: '1', login: 'scripted', createdAt: now() })),
      signUpOpen: field(() => true),
      hives: field(() => [{ id: state.hiveId, firstSeenAt: now(), lastReading: { time: now(), temperatureCelsius: 34.8, temperatureCelsiusAt: now(), humidityPercent: 58, humidityPercentAt: now(), weightKg: 41.2, weightKgAt: now() }, boxes: [box()] }]),
      boxes: field(() => [box()]),
      // The apiary asks for these too (since the query of boxes not counting yet); this gateway's box counts.
      boxesAwaitingCounts: field(() => []),
      apiTokens: field(() => []),
      box: field(({ id }: { id: string }) => (id === state.boxId ? box() : null)),
      entranceTotals: field(({ boxIds }: { boxIds?: string[] }) => (!boxIds || boxIds.includes(state.boxId) ? [today()] : [])),
      entranceLiveStreamSession: field(({ boxId }: { boxId: string }) => (state.live && state.live.boxId === boxId ? state.live : null)),
      // Pages as the real gateway does: newest first, `limit` of them, after the clip named by `after`.
      gateVideos: field(({ boxId, limit, after }: { boxId: string; limit?: number | null; after?: string | null }) => {
        const newestFirst = (a: Record<string, unknown>, b: Record<string, unknown>) =>
          Date.parse(String(b.startTime)) - Date.parse(String(a.startTime)) || Number(String(b.id).replace(/\D/g, '')) - Number(String(a.id).replace(/\D/g, ''));
        const listed = state.videos.filter((v) => v.boxId === boxId).sort(newestFirst);
        const start = after ? listed.findIndex((v) => v.id === after) + 1 : 0;
        return listed.slice(start, start + (limit ?? 50));
      }),
      entranceHeatmaps: field(({ boxIds, date, limit }: { boxIds: string[]; date?: string | null; limit?: number | null }) =>
        state.heatmaps.filter((h) => boxIds.map(String).includes(String(h.boxId)) && (!date || h.date === date)).slice(0, limit ?? 30),
      ),
    },
    Mutation: {
      signOut: field(() => true),
      startEntranceLiveStream: field(({ boxId }: { boxId: string }) => {
        if (state.live && !['STOPPED', 'FAILED', 'EXPIRED'].includes(state.live.status)) return state.live;
        setLive({
          id: `s${++sessionCounter}`,
          boxId,
          status: state.devices[boxId]?.online ? 'REQUESTED' : 'DEVICE_OFFLINE',
          playbackUrl: null,
          expiresAt: now(),
          lastErrorCode: null,
          lastErrorMessage: null,
          qualityProfile: 'medium',
          clipHandoffEnabled: false,
        });
        return state.live;
      }),
      keepEntranceLiveStreamAlive: field(({ sessionId }: { sessionId: string }) => (state.live?.id === sessionId ? { ...state.live, lastKeepaliveAt: now() } : null)),
      stopEntranceLiveStream: field(({ sessionId }: { sessionId: string }) => {
        if (state.live?.id !== sessionId) return false;
        setLive(state.stopping ? { ...state.live, status: 'STOPPING' } : null);
        return true;
      }),
      uploadGateVideo: field(() => true),
    },
    Subscription: {
      entranceLiveStreamSessionChanged: {
        subscribe: async (_root: unknown, args: { boxId: string }, context: { pubsub: { subscribe: (topic: string) => Promise<unknown> } }) => {
          const updates = await context.pubsub.subscribe(`live:${args.boxId}`);
          state.subscribed++;
          return updates;
        },
      },
    },
  };

  installErrorHandling(app, () => undefined);
  // GraphQL multipart requests: checked and recorded here, then handed to GraphQL with the files in their variables.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const parts = parseMultipart(body as Buffer, request.headers['content-type'] ?? '');
      const operations = JSON.parse(parts.find((p) => p.name === 'operations')!.data.toString('utf8')) as ReceivedUpload['operations'];
      const map = JSON.parse(parts.find((p) => p.name === 'map')!.data.toString('utf8')) as Record<string, string[]>;
      const files = parts
        .filter((p) => p.filename !== undefined)
        .map((p) => ({ field: p.name, filename: p.filename!, contentType: p.contentType, size: p.data.length, sha256: createHash('sha256').update(p.data).digest('hex') }));
      // As sent (files as null), before the files take their places in the variables.
      const upload = { operations: structuredClone(operations), map, files };
      state.uploads.push(upload);
      state.onUpload?.(upload);
      for (const [name, targets] of Object.entries(map)) {
        for (const target of targets) operations.variables[target.replace(/^variables\./, '')] = files.find((f) => f.field === name) ?? null;
      }
      done(null, operations);
    } catch (err) {
      done(err as Error);
    }
  });
  app.addHook('preHandler', async (request) => {
    const body = request.body as { operationName?: string; variables?: Record<string, unknown> } | undefined;
    if (request.url === '/graphql' && request.method === 'POST' && body) state.calls.push({ name: body.operationName ?? '', variables: body.variables ?? {} });
  });
  await app.register(mercurius, {
    schema: loadSchema(),
    resolvers: resolvers as unknown as IResolvers,
    path: '/graphql',
    graphiql: false,
    subscription: { onConnect: () => state.subscriptions },
  });
  const serveMedia = async (relative: string, reply: FastifyReply) => {
    if (relative.includes('..')) return reply.status(400).send({ error: 'bad path' });
    try {
      const data = await readFile(path.join(mediaDir, relative));
      return reply.header('content-type', CONTENT_TYPES[path.extname(relative)] ?? 'application/octet-stream').header('cache-control', 'no-cache').send(data);
    } catch {
      return reply.status(404).send({ error: 'no such media' });
    }
  };
  app.get('/media/scripted/*', async (request, reply) => serveMedia((request.params as { '*': string })['*'], reply));
  // Links that expire as the server's signed ones do (`/media/{expires}.{signature}/…`), over the files of `clip/`.
  app.get('/media/:grant/videos/:id/*', async (request, reply) => {
    const { grant, '*': file } = request.params as { grant: string; '*': string };
    state.mediaRequests.push(request.url);
    if (Number(grant.split('.')[0]) * 1000 <= Date.now()) return reply.status(403).send({ error: 'media link has expired' });
    return serveMedia(path.join('clip', file), reply);
  });
  await app.register(webAppRoutes, {});
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: base,
    state,
    mediaUrl: (file: string) => `${base}/media/scripted/${file}`,
    signedClipUrl: (id: string, file: string, expiresAt: number) => `${base}/media/${Math.floor(expiresAt / 1000)}.sig/videos/${id}/${file}`,
    setLive,
    close: () => app.close(),
  };
}
