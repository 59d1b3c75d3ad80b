import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { defaultConfig, type LiveConfig } from '../src/config.ts';
import { graphql } from './helper.ts';

/** Live timings short enough for tests: sweeps every 100 ms, sessions expire after 2 s without keep-alive. */
export function fastLiveConfig(overrides: Partial<LiveConfig> = {}): LiveConfig {
  return {
    ...defaultConfig().live,
    keepaliveTimeoutSeconds: 2,
    stopGraceSeconds: 1,
    commandRedeliverySeconds: 0.5,
    sweepIntervalMs: 100,
    ...overrides,
  };
}

export const SESSION_FIELDS = `id boxId status playbackUrl expiresAt qualityProfile recordingMode notice relayProtocol clipHandoffEnabled
  handoffStreamId lastKeepaliveAt lastDeviceSeenAt lastErrorCode lastErrorMessage
  relayDetails { relayProtocol placeholder publisherUrl publishToken signalingToken playbackUrl frameContentType playbackContentType }`;

export interface SessionView {
  id: string;
  boxId: string;
  status: string;
  playbackUrl: string | null;
  expiresAt: string;
  qualityProfile: string;
  recordingMode: string;
  notice: string | null;
  relayProtocol: string;
  clipHandoffEnabled: boolean;
  handoffStreamId: string | null;
  lastKeepaliveAt: string | null;
  lastDeviceSeenAt: string | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  relayDetails: Record<string, unknown>;
}

export interface DeviceCommand {
  id: string;
  sessionId: string;
  commandType: 'START_STREAM' | 'STOP_STREAM';
  payload: Record<string, unknown>;
  createdAt: string;
  deliveredAt: string | null;
}

/** The GraphQL calls the web app's live card makes, with its variable types. */
export function liveClient(app: FastifyInstance, token: string) {
  const call = async <T>(query: string, variables: Record<string, unknown>, field: string): Promise<T> => {
    const result = await graphql(app, token, query, variables);
    if (result.errors) throw Object.assign(new Error(result.errors[0]!.message), { code: result.errors[0]!.extensions?.code });
    return result.data![field] as T;
  };
  return {
    start: (boxId: string, qualityProfile?: string, recordingMode?: string) =>
      call<SessionView>(
        `mutation ($boxId: ID!, $qualityProfile: String, $recordingMode: String) { startEntranceLiveStream(boxId: $boxId, qualityProfile: $qualityProfile, recordingMode: $recordingMode) { ${SESSION_FIELDS} } }`,
        { boxId, qualityProfile, recordingMode },
        'startEntranceLiveStream',
      ),
    keepAlive: (sessionId: string) =>
      call<SessionView>(`mutation ($sessionId: ID!) { keepEntranceLiveStreamAlive(sessionId: $sessionId) { ${SESSION_FIELDS} } }`, { sessionId }, 'keepEntranceLiveStreamAlive'),
    stop: (sessionId: string) => call<boolean>(`mutation ($sessionId: ID!) { stopEntranceLiveStream(sessionId: $sessionId) }`, { sessionId }, 'stopEntranceLiveStream'),
    read: (boxId: string) => call<SessionView | null>(`query ($boxId: ID!) { entranceLiveStreamSession(boxId: $boxId) { ${SESSION_FIELDS} } }`, { boxId }, 'entranceLiveStreamSession'),
  };
}

/** The entrance observer's REST calls (the Pi itself cannot run here; these are the requests it makes). */
export function deviceClient(app: FastifyInstance, auth: Record<string, string>) {
  const post = (path: string, payload: unknown) => app.inject({ method: 'POST', url: `/api/entrance-live/device/${path}`, headers: auth, payload: payload as object });
  return {
    post,
    status: (boxId: string, extra: Record<string, unknown> = {}) => post('status', { boxId, cameraStatus: 'ok', publisherState: 'idle', ...extra }),
    poll: async (boxId: string, extra: Record<string, unknown> = {}) => {
      const response = await post('poll', { boxId, cameraStatus: 'ok', publisherState: 'idle', ...extra });
      if (response.statusCode !== 200) throw new Error(`poll answered ${response.statusCode}: ${response.body}`);
      return (response.json() as { commands: DeviceCommand[] }).commands;
    },
    ack: (boxId: string, commandId: string, status = 'accepted', payload: Record<string, unknown> = {}) => post('command-ack', { boxId, commandId, status, payload }),
    event: (boxId: string, eventType: string, sessionId?: string, payload?: Record<string, unknown>) => post('event', { boxId, eventType, ...(sessionId ? { sessionId } : {}), ...(payload ? { payload } : {}) }),
  };
}

/** Polls `read` until `accept` holds (sweeps run on timers), failing with the last value after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

export interface PushedSession {
  id: string;
  boxId: string;
  status: string;
  playbackUrl: string | null;
  lastErrorCode: string | null;
}

/** An entranceLiveStreamSessionChanged subscription over graphql-transport-ws, as a browser makes it. */
export async function subscribeToSessions(wsUrl: string, options: { initPayload?: Record<string, unknown>; headers?: Record<string, string>; boxId: string }) {
  const socket = new WebSocket(wsUrl, 'graphql-transport-ws', { headers: options.headers });
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data: Buffer) => {
    messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  const next = async (type: string, timeoutMs = 5000): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = messages.findIndex((m) => m.type === type);
      if (index >= 0) return messages.splice(index, 1)[0]!;
      if (Date.now() > deadline) throw new Error(`no "${type}" message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  socket.send(JSON.stringify({ type: 'connection_init', payload: options.initPayload ?? {} }));
  await next('connection_ack');
  socket.send(
    JSON.stringify({
      id: '1',
      type: 'subscribe',
      payload: { query: 'subscription ($boxId: ID!) { entranceLiveStreamSessionChanged(boxId: $boxId) { id boxId status playbackUrl lastErrorCode } }', variables: { boxId: options.boxId } },
    }),
  );
  return {
    /** The next session pushed to this subscription. */
    change: async (timeoutMs?: number) => {
      const message = await next('next', timeoutMs);
      const payload = message.payload as { data?: { entranceLiveStreamSessionChanged: PushedSession }; errors?: { message: string }[] };
      if (payload.errors) throw new Error(payload.errors[0]!.message);
      return payload.data!.entranceLiveStreamSessionChanged;
    },
    error: async () => (await next('error')).payload as { message: string; extensions?: { code?: string } }[],
    /** The server's `complete`: the subscription has ended. */
    completed: (timeoutMs?: number) => next('complete', timeoutMs),
    pending: () => messages.filter((m) => m.type === 'next').length,
    close: () => socket.close(),
  };
}
