import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileValidator, MetricBody, MovementBody } from '@hivegate/shared';

export interface ReceivedRequest {
  path: string;
  authorization: string | undefined;
  body: unknown;
  status: number;
}

type Override = (request: ReceivedRequest, res: ServerResponse) => boolean;

const checkMovement = compileValidator(MovementBody);
const checkMetrics = compileValidator(MetricBody);

/**
 * A loopback stand-in for the cloud's ingest endpoints: bearer check, the shared schema validation (400 for a
 * batch with one bad item, as the cloud does), dedupe by the cloud's identities, and hooks to script failures.
 */
export class FakeCloud {
  private server: Server | undefined;
  readonly requests: ReceivedRequest[] = [];
  /** Accepted records per identity, counting repeats (the real cloud would dedupe them). */
  readonly accepted = new Map<string, number>();
  token = 'good-token';
  overrides: Override[] = [];
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  acceptedKeys(): string[] {
    return [...this.accepted.keys()];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: ReceivedRequest = { path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString() || 'null'), status: 0 };
    this.requests.push(request);
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      request.status = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const override = this.overrides.shift();
    if (override && override(request, res)) return;
    if (request.authorization !== `Bearer ${this.token}`) return reply(401, { error: 'invalid token' });
    const items = Array.isArray(request.body) ? request.body : [request.body];
    let keys: string[];
    if (request.path === '/entrance/v1/movement') {
      const result = checkMovement(request.body);
      if (!result.ok) return reply(400, { error: result.error });
      keys = items.map((m: { hiveId: unknown; boxId: unknown; timestamp: unknown }) => `${String(m.hiveId)}|${String(m.boxId)}|${String(m.timestamp)}`);
    } else if (request.path === '/iot/v1/metrics') {
      const result = checkMetrics(request.body);
      if (!result.ok) return reply(400, { error: result.error });
      keys = items.map((m: { dedupeKey?: string }) => m.dedupeKey ?? JSON.stringify(m));
    } else if (request.path === '/api/entrance-heatmaps/trajectories') {
      const body = request.body as { batchId?: string; trackHistory?: unknown };
      if (Array.isArray(request.body) || typeof body.trackHistory !== 'object') return reply(400, { error: 'trackHistory is required' });
      keys = [String(body.batchId)];
    } else {
      return reply(404, { error: 'not found' });
    }
    for (const key of keys) this.accepted.set(key, (this.accepted.get(key) ?? 0) + 1);
    reply(200, { message: 'OK' });
  }
}
