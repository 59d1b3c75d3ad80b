import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the fake cloud answers one path: 'ok', an HTTP status, or 'stall' (read the request, never answer). */
export type Behaviour = 'ok' | 'stall' | number;

interface Command {
  id: string;
  sessionId: string;
  commandType: 'START_STREAM' | 'STOP_STREAM';
}

export interface FakeCloudOptions {
  /** Per request path (`/graphql` included); unlisted paths answer 'ok'. */
  behaviour?: Record<string, Behaviour>;
  /**
   * Answer startEntranceLiveStream only after its command went out in a poll's answer (a cloud whose mutation
   * answer is slower than the device's long-poll).
   */
  answerStartAfterDelivery?: boolean;
}

/**
 * The device side of the cloud's live gateway and ingest endpoints over real HTTP on loopback, enough for virtual
 * devices: long-polls wait up to their `waitSeconds` for commands, GraphQL starts and stops live sessions, and every
 * path can be made to fail or stall.
 */
export class FakeCloud {
  /** Requests received, by path. */
  readonly received: Record<string, number> = {};
  private readonly server = createServer((request, response) => void this.serve(request, response));
  private readonly queued = new Map<string, Command[]>();
  private readonly parked = new Map<string, Set<() => void>>();
  private readonly delivered = new Map<string, () => void>();
  private readonly sessionBoxes = new Map<string, string>();
  private nextId = 1;

  constructor(private readonly options: FakeCloudOptions = {}) {}

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = request.url ?? '/';
    this.received[path] = (this.received[path] ?? 0) + 1;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>;
    const behaviour = this.options.behaviour?.[path] ?? 'ok';
    if (behaviour === 'stall') return;
    if (typeof behaviour === 'number') return void json(response, behaviour, { message: `status ${behaviour}` });
    if (path === '/api/entrance-live/device/poll') return this.poll(String(body.boxId), Number(body.waitSeconds ?? 0), response);
    if (path === '/graphql') return this.graphql(body as { query: string; variables: Record<string, string> }, response);
    json(response, 200, { message: 'OK' });
  }

  private async poll(boxId: string, waitSeconds: number, response: ServerResponse): Promise<void> {
    if (!this.queued.get(boxId)?.length && waitSeconds > 0) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.parked.get(boxId)?.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, waitSeconds * 1000);
        response.once('close', wake);
        let waiting = this.parked.get(boxId);
        if (!waiting) this.parked.set(boxId, (waiting = new Set()));
        waiting.add(wake);
      });
    }
    const commands = this.queued.get(boxId) ?? [];
    this.queued.delete(boxId);
    if (response.destroyed) {
      if (commands.length) this.queued.set(boxId, commands);
      return;
    }
    json(response, 200, { commands });
    for (const command of commands) {
      this.delivered.get(command.id)?.();
      this.delivered.delete(command.id);
    }
  }

  private async graphql(body: { query: string; variables: Record<string, string> }, response: ServerResponse): Promise<void> {
    if (body.query.includes('startEntranceLiveStream')) {
      const boxId = body.variables.boxId!;
      const sessionId = `session-${this.nextId++}`;
      const command = this.enqueue(boxId, sessionId, 'START_STREAM');
      if (this.options.answerStartAfterDelivery) {
        await new Promise<void>((resolve) => this.delivered.set(command.id, resolve));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return void json(response, 200, { data: { startEntranceLiveStream: { id: sessionId, boxId } } });
    }
    if (body.query.includes('stopEntranceLiveStream')) {
      const sessionId = body.variables.id!;
      this.enqueue(this.sessionBoxes.get(sessionId) ?? '', sessionId, 'STOP_STREAM');
      return void json(response, 200, { data: { stopEntranceLiveStream: true } });
    }
    json(response, 200, { errors: [{ message: 'unknown operation' }] });
  }

  private enqueue(boxId: string, sessionId: string, commandType: Command['commandType']): Command {
    this.sessionBoxes.set(sessionId, boxId);
    const command = { id: `command-${this.nextId++}`, sessionId, commandType };
    const queue = this.queued.get(boxId) ?? [];
    queue.push(command);
    this.queued.set(boxId, queue);
    for (const wake of [...(this.parked.get(boxId) ?? [])]) wake();
    return command;
  }
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
