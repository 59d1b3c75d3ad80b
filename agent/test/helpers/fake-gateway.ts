import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileValidator, LiveCommandAckBody, LiveDeviceEventBody, LiveDevicePollBody, LiveDeviceStatusBody, type Validator } from '@hivegate/shared';

/** The gateway's own request schemas: a body the real cloud would refuse is refused here too. */
const checks: Record<string, Validator<unknown>> = {
  '/api/entrance-live/device/status': compileValidator(LiveDeviceStatusBody),
  '/api/entrance-live/device/poll': compileValidator(LiveDevicePollBody),
  '/api/entrance-live/device/event': compileValidator(LiveDeviceEventBody),
  '/api/entrance-live/device/command-ack': compileValidator(LiveCommandAckBody),
};

export interface StoredUpload {
  method: string;
  name: string;
  bytes: number;
  at: number;
  authorization: string | undefined;
  contentType: string | undefined;
}

export interface PushedFrame {
  at: number;
  body: Buffer;
  token: string | undefined;
  contentType: string | undefined;
}

export interface GatewayCommand {
  id: string;
  sessionId: string;
  commandType: 'START_STREAM' | 'STOP_STREAM';
  payload: Record<string, unknown>;
  createdAt: string;
  deliveredAt: string | null;
  acked: boolean;
}

/**
 * A loopback stand-in for the live gateway, for the agent's tests: device endpoints (status, long-poll with
 * redelivery of unacknowledged commands, events, acks), an HLS publish endpoint that stores PUT files per session,
 * and a JPEG push endpoint. Each can be told to refuse (401) or fail.
 */
export class FakeGateway {
  private server: Server | undefined;
  private pollWaiters = new Set<() => void>();
  url = '';
  deviceToken = 'device-token';
  /** Publish tokens per session; a PUT/POST with another token gets 401. */
  publishTokens = new Map<string, string>();
  /** Sessions the gateway ended: publishing to them is answered 410, as the real gateway does. */
  readonly endedSessions = new Set<string>();
  /** Files per session, as last PUT. */
  readonly files = new Map<string, Map<string, Buffer>>();
  readonly uploads: StoredUpload[] = [];
  readonly frames: PushedFrame[] = [];
  readonly statuses: Record<string, unknown>[] = [];
  readonly polls: Record<string, unknown>[] = [];
  readonly events: Record<string, unknown>[] = [];
  readonly acks: Record<string, unknown>[] = [];
  readonly commands: GatewayCommand[] = [];
  /** Device requests the shared schemas refused (a test expects none). */
  readonly invalidBodies: { path: string; error: string }[] = [];
  /** Telemetry the agent delivered to the ingest endpoints (accepted with the device token), by path. */
  readonly ingested: { path: string; body: unknown }[] = [];
  /** Answers for the next acks (status codes), consumed in order; 200 when empty. */
  ackFailures: number[] = [];
  /** An unacknowledged command is handed out again this long after its last delivery. */
  redeliveryMs = 300;
  /** Status to answer on device endpoints instead of handling them (e.g. 401, 404). */
  deviceAnswer: number | undefined;
  /** Status to answer on the ingest endpoints instead of handling them (e.g. 503). */
  ingestAnswer: number | undefined;
  private nextId = 1;

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const wake of [...this.pollWaiters]) wake();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  publisherUrl(sessionId: string): string {
    return `${this.url}/live/publish/${sessionId}`;
  }

  /** Queues a command for the device; returns it. */
  queue(commandType: GatewayCommand['commandType'], sessionId: string, payload: Record<string, unknown> = {}): GatewayCommand {
    const command: GatewayCommand = { id: `cmd-${this.nextId++}`, sessionId, commandType, payload, createdAt: new Date().toISOString(), deliveredAt: null, acked: false };
    this.commands.push(command);
    for (const wake of [...this.pollWaiters]) wake();
    return command;
  }

  startStream(sessionId: string, overrides: Record<string, unknown> = {}): GatewayCommand {
    const publishToken = `publish-${sessionId}`;
    this.publishTokens.set(sessionId, publishToken);
    const relayProtocol = overrides.relayProtocol ?? 'hls';
    return this.queue('START_STREAM', sessionId, {
      sessionId,
      relayProtocol,
      // Like the project's cloud, the HLS publisher URL names the playlist; the JPEG relay's is the folder.
      publisherUrl: relayProtocol === 'hls' ? `${this.publisherUrl(sessionId)}/index.m3u8` : this.publisherUrl(sessionId),
      publishToken,
      qualityProfile: 'low',
      recordingMode: 'none',
      clipHandoffEnabled: false,
      ...overrides,
    });
  }

  eventsOf(sessionId: string): string[] {
    return this.events.filter((e) => e.sessionId === sessionId).map((e) => String(e.eventType));
  }

  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = (req.url ?? '/').split('?')[0]!;
    const json = (status: number, data: unknown) => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(data));
    };
    const publish = /^\/live\/publish\/([^/]+)\/([^/]+)$/.exec(path);
    if (publish) return this.handlePublish(req, res, publish[1]!, decodeURIComponent(publish[2]!), body, json);
    if (this.deviceAnswer === 404) return json(404, { error: `no route ${req.method} ${path}` });
    if (['/entrance/v1/movement', '/iot/v1/metrics', '/api/entrance-heatmaps/trajectories'].includes(path)) {
      if (this.ingestAnswer !== undefined) return json(this.ingestAnswer, { error: `scripted ${this.ingestAnswer}` });
      if (req.headers.authorization !== `Bearer ${this.deviceToken}`) return json(401, { error: 'invalid token' });
      this.ingested.push({ path, body: JSON.parse(body.toString()) as unknown });
      return json(200, { message: 'OK' });
    }
    if (!path.startsWith('/api/entrance-live/device/')) return json(404, { error: `no route ${req.method} ${path}` });
    if (this.deviceAnswer !== undefined) return json(this.deviceAnswer, { error: `scripted ${this.deviceAnswer}` });
    if (req.headers.authorization !== `Bearer ${this.deviceToken}`) return json(401, { error: 'invalid token' });
    const data = JSON.parse(body.toString() || '{}') as Record<string, unknown>;
    const check = checks[path]?.(data);
    if (check && !check.ok) {
      this.invalidBodies.push({ path, error: check.error });
      return json(400, { error: check.error });
    }
    switch (path) {
      case '/api/entrance-live/device/status':
        this.statuses.push(data);
        return json(200, { message: 'OK', serverTime: new Date().toISOString(), pendingCommands: this.deliverable().length });
      case '/api/entrance-live/device/poll': {
        this.polls.push(data);
        const waitMs = Math.min(Number(data.waitSeconds ?? 0), 25) * 1000;
        const deadline = Date.now() + waitMs;
        while (this.deliverable().length === 0 && Date.now() < deadline && !res.destroyed) {
          await new Promise<void>((resolve) => {
            const wake = () => {
              clearTimeout(timer);
              this.pollWaiters.delete(wake);
              resolve();
            };
            const timer = setTimeout(wake, Math.min(deadline - Date.now(), this.redeliveryMs));
            this.pollWaiters.add(wake);
          });
        }
        const commands = this.deliverable().slice(0, Number(data.limit ?? 10));
        const now = new Date().toISOString();
        for (const c of commands) c.deliveredAt = now;
        return json(200, { commands: commands.map(({ acked: _acked, ...c }) => c) });
      }
      case '/api/entrance-live/device/event':
        this.events.push(data);
        return json(200, { message: 'OK', sessionId: data.sessionId ?? null, sessionStatus: null, applied: true });
      case '/api/entrance-live/device/command-ack': {
        this.acks.push(data);
        const status = this.ackFailures.shift() ?? 200;
        if (status !== 200) return json(status, { error: 'scripted ack failure' });
        const command = this.commands.find((c) => c.id === data.commandId);
        if (!command) return json(404, { error: `no command "${String(data.commandId)}" for box "${String(data.boxId)}"` });
        const already = command?.acked ?? false;
        if (command) command.acked = true;
        return json(200, { message: 'OK', commandId: data.commandId, alreadyAcknowledged: already, sessionStatus: null });
      }
      default:
        return json(404, { error: `no route ${req.method} ${path}` });
    }
  }

  private deliverable(): GatewayCommand[] {
    const now = Date.now();
    return this.commands.filter((c) => !c.acked && (c.deliveredAt === null || now - Date.parse(c.deliveredAt) >= this.redeliveryMs));
  }

  private handlePublish(req: IncomingMessage, res: ServerResponse, sessionId: string, name: string, body: Buffer, json: (s: number, d: unknown) => void): void {
    const expected = this.publishTokens.get(sessionId);
    if (this.endedSessions.has(sessionId)) return json(410, { error: 'live session is over (EXPIRED); publishing is closed' });
    if (name === 'frame' && req.method === 'POST') {
      const token = req.headers['x-publish-token'] as string | undefined;
      if (!expected || token !== expected) return json(401, { error: 'invalid publish token' });
      this.frames.push({ at: Date.now(), body, token, contentType: req.headers['content-type'] });
      return json(200, { message: 'OK' });
    }
    if (!expected || req.headers.authorization !== `Bearer ${expected}`) return json(401, { error: 'invalid publish token' });
    this.uploads.push({ method: req.method ?? '', name, bytes: body.length, at: Date.now(), authorization: req.headers.authorization, contentType: req.headers['content-type'] });
    const files = this.files.get(sessionId) ?? new Map<string, Buffer>();
    this.files.set(sessionId, files);
    if (req.method === 'DELETE') files.delete(name);
    else files.set(name, body);
    res.writeHead(201);
    res.end();
  }
}
