import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios, { type AxiosInstance } from 'axios';
import { uploadKind, type UploadResult } from './publish-health.ts';

export interface UploadRelayOptions {
  /** The session's publisher URL; files go to `<targetUrl>/<name>`. */
  targetUrl: string;
  /** Sent upstream as `Authorization: Bearer …`; ffmpeg never sees it. */
  publishToken: string;
  onResult: (result: UploadResult) => void;
  requestTimeoutMs?: number;
  /** Uploads waiting for the gateway beyond this are dropped (a slow uplink must not grow memory without end). */
  maxBacklog?: number;
  maxBodyBytes?: number;
  now?: () => number;
}

interface Job {
  method: string;
  name: string;
  body: Buffer;
  contentType: string | undefined;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * A loopback HTTP endpoint ffmpeg's HLS muxer PUTs to; it forwards each file to the live gateway, in order, with the
 * publish token, and reports every answer. Needed because ffmpeg ignores the answers to its PUTs: relayed, a 401 or
 * a vanished session is seen at once. It also keeps the token out of ffmpeg's command line (readable in `ps` by any
 * local user); ffmpeg authenticates to the relay with a random per-stream secret instead.
 */
export class UploadRelay {
  private server: Server | undefined;
  private http: AxiosInstance | undefined;
  private chain: Promise<void> = Promise.resolve();
  private backlog = 0;
  private readonly secret = randomBytes(18).toString('base64url');
  private readonly abort = new AbortController();
  url = '';
  uploadsDropped = 0;
  bytesForwarded = 0;

  constructor(private readonly options: UploadRelayOptions) {}

  /** Header ffmpeg must send (its `-headers` value). */
  get authorizationHeader(): string {
    return `Authorization: Bearer ${this.secret}`;
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.http = axios.create({ timeout: this.options.requestTimeoutMs ?? 10_000, validateStatus: () => true, maxBodyLength: Infinity, maxRedirects: 0 });
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 60_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Waits up to `graceMs` for queued uploads (the final segment and playlist), then closes. */
  async stop(graceMs = 3000): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const timer = setTimeout(() => this.abort.abort(), graceMs);
    await this.chain;
    clearTimeout(timer);
    this.abort.abort();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Uploads received but not yet answered by the gateway. */
  get pending(): number {
    return this.backlog;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number) => {
      res.writeHead(status, { 'content-length': '0' });
      res.end();
    };
    if (req.headers.authorization !== `Bearer ${this.secret}`) {
      req.resume();
      return answer(401);
    }
    const name = decodeURIComponent((req.url ?? '/').split('?')[0]!.replace(/^\/+/, ''));
    const method = (req.method ?? 'GET').toUpperCase();
    if (!NAME.test(name) || !['PUT', 'POST', 'DELETE'].includes(method)) {
      req.resume();
      return answer(400);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const limit = this.options.maxBodyBytes ?? 64 * 1024 * 1024;
    try {
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > limit) throw new Error(`upload larger than ${limit} bytes`);
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      this.report({ method, name, error: (error as Error).message });
      return answer(413);
    }
    // ffmpeg does not read the answer; reply at once so its connection stays usable.
    answer(204);
    if (this.backlog >= (this.options.maxBacklog ?? 12)) {
      this.uploadsDropped++;
      this.report({ method, name, error: `dropped: ${this.backlog} uploads already wait for the gateway` });
      return;
    }
    this.enqueue({ method, name, body: Buffer.concat(chunks), contentType: req.headers['content-type'] });
  }

  /** One upload at a time, in arrival order: a playlist must never reach the gateway before its segment. */
  private enqueue(job: Job): void {
    this.backlog++;
    this.chain = this.chain.then(async () => {
      try {
        await this.forward(job);
      } finally {
        this.backlog--;
      }
    });
  }

  private async forward(job: Job): Promise<void> {
    const url = fileUrl(this.options.targetUrl, job.name);
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.publishToken}` };
    if (job.method !== 'DELETE') headers['content-type'] = job.contentType ?? contentTypeOf(job.name);
    // One quick retry for a dropped connection or a 5xx: a segment is only worth something for a few seconds.
    for (let attempt = 1; attempt <= 2; attempt++) {
      if (this.abort.signal.aborted) return this.report({ method: job.method, name: job.name, error: 'relay stopped' });
      try {
        const response = await this.http!.request({ url, method: job.method, data: job.method === 'DELETE' ? undefined : job.body, headers, signal: this.abort.signal, responseType: 'text' });
        if (response.status >= 500 && attempt === 1) {
          await delay(200);
          continue;
        }
        if (response.status < 300) this.bytesForwarded += job.body.length;
        return this.report({ method: job.method, name: job.name, status: response.status, ...(response.status >= 300 ? { error: errorText(response.data) } : {}) });
      } catch (error) {
        if (attempt === 2 || this.abort.signal.aborted) return this.report({ method: job.method, name: job.name, error: (error as Error).message });
        await delay(200);
      }
    }
  }

  private report(result: { method: string; name: string; status?: number; error?: string }): void {
    this.options.onResult({ ...result, kind: uploadKind(result.name), atMs: (this.options.now ?? Date.now)() });
  }
}

/** `<base>/<name>`, keeping a query string the gateway may have put on the base. */
export function fileUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(name)}`;
  return url.toString();
}

function contentTypeOf(name: string): string {
  if (name.endsWith('.m3u8')) return 'application/vnd.apple.mpegurl';
  if (name.endsWith('.ts')) return 'video/mp2t';
  if (name.endsWith('.m4s') || name.endsWith('.mp4')) return 'video/mp4';
  return 'application/octet-stream';
}

/** The gateway's `{"error": "…"}` text, or the start of whatever else it answered. */
export function errorText(data: unknown): string {
  if (typeof data !== 'string' || data === '') return '';
  try {
    const parsed = JSON.parse(data) as unknown;
    if (parsed && typeof parsed === 'object' && 'error' in parsed && typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return data.slice(0, 200);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
