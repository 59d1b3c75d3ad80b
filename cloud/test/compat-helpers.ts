import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

/**
 * What the compatibility tests share: real JPEGs from ffmpeg, an MJPEG (multipart/x-mixed-replace) reader, the
 * existing clients' GraphQL documents, and a scripted entrance observer making exactly the existing device's REST
 * calls (its Pi camera cannot run here: ffmpeg's test pattern stands in for the picture).
 */

// ---- pictures ----

/** Cuts ffmpeg's image2pipe MJPEG output into pictures: each ends at FF D9 directly followed by the next FF D8. */
export function splitJpegs(stream: Buffer): Buffer[] {
  const pictures: Buffer[] = [];
  let start = 0;
  for (let at = stream.indexOf(Buffer.from([0xff, 0xd9, 0xff, 0xd8])); at >= 0; at = stream.indexOf(Buffer.from([0xff, 0xd9, 0xff, 0xd8]), at + 2)) {
    pictures.push(stream.subarray(start, at + 2));
    start = at + 2;
  }
  if (start < stream.length) pictures.push(stream.subarray(start));
  return pictures;
}

/** `count` JPEG pictures of an ffmpeg lavfi source (the test pattern by default), encoded by ffmpeg's mjpeg encoder. */
export function ffmpegJpegs(count: number, source = 'testsrc=size=320x240:rate=4', quality = 5): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', source, '-frames:v', String(count), '-c:v', 'mjpeg', '-q:v', String(quality), '-f', 'image2pipe', 'pipe:1']);
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`ffmpeg exited with ${code}: ${stderr}`));
      const pictures = splitJpegs(Buffer.concat(chunks));
      if (pictures.length !== count) return reject(new Error(`ffmpeg gave ${pictures.length} pictures, wanted ${count}`));
      resolve(pictures);
    });
  });
}

// ---- MJPEG reading ----

export interface MjpegPart {
  headers: Record<string, string>;
  bytes: Buffer;
  sequence: number;
}

/** Reads a multipart/x-mixed-replace body part by part, checking its framing as it goes. */
export class MultipartParser {
  readonly parts: MjpegPart[] = [];
  /** The closing delimiter arrived: the server ended the stream on purpose. */
  complete = false;
  private buffer = Buffer.alloc(0);
  private state: { kind: 'boundary' } | { kind: 'body'; headers: Record<string, string>; length: number } = { kind: 'boundary' };
  private readonly delimiter: Buffer;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`--${boundary}`, 'latin1');
  }

  static fromContentType(contentType: string | undefined): MultipartParser {
    const match = /^multipart\/x-mixed-replace;\s*boundary="?([^";]+)"?/i.exec(contentType ?? '');
    if (!match) throw new Error(`not a multipart/x-mixed-replace content type: ${contentType}`);
    return new MultipartParser(match[1]!);
  }

  push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.complete) return;
      if (this.state.kind === 'boundary') {
        if (this.buffer.length < this.delimiter.length + 2) return;
        if (!this.buffer.subarray(0, this.delimiter.length).equals(this.delimiter)) throw new Error(`expected the boundary, got ${JSON.stringify(this.buffer.subarray(0, 40).toString('latin1'))}`);
        const after = this.buffer.subarray(this.delimiter.length, this.delimiter.length + 2).toString('latin1');
        if (after === '--') {
          this.complete = true;
          return;
        }
        const headerEnd = this.buffer.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        const headers: Record<string, string> = {};
        for (const line of this.buffer.subarray(this.delimiter.length + 2, headerEnd).toString('latin1').split('\r\n')) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers['content-length']);
        if (!Number.isInteger(length)) throw new Error(`part without a Content-Length: ${JSON.stringify(headers)}`);
        this.buffer = this.buffer.subarray(headerEnd + 4);
        this.state = { kind: 'body', headers, length };
      } else {
        const { headers, length } = this.state;
        if (this.buffer.length < length + 2) return;
        if (this.buffer.subarray(length, length + 2).toString('latin1') !== '\r\n') throw new Error('part body is not followed by CRLF');
        this.parts.push({ headers, bytes: Buffer.from(this.buffer.subarray(0, length)), sequence: Number(headers['x-frame-sequence']) });
        this.buffer = this.buffer.subarray(length + 2);
        this.state = { kind: 'boundary' };
      }
    }
  }
}

/** An MJPEG viewer over plain HTTP: reads as fast as frames come, or (paused) not at all. */
export class MjpegViewer {
  readonly parser: MultipartParser;
  /** The connection closed (after the closing delimiter, or cut). */
  closed = false;
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    private readonly response: IncomingMessage,
  ) {
    this.parser = MultipartParser.fromContentType(headers['content-type']);
    response.on('data', (chunk: Buffer) => {
      this.parser.push(chunk);
      this.wake();
    });
    const done = () => {
      this.closed = true;
      this.wake();
    };
    response.on('end', done).on('close', done).on('error', done);
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<MjpegViewer> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(url, { headers }, (response) => {
        if (response.statusCode !== 200) {
          let text = '';
          response.on('data', (c: Buffer) => (text += c.toString()));
          response.on('end', () => reject(Object.assign(new Error(`viewer got ${response.statusCode}: ${text}`), { status: response.statusCode, body: text })));
          return;
        }
        resolve(new MjpegViewer(response.statusCode, response.headers, response));
      });
      request.on('error', reject);
      request.end();
    });
  }

  get parts(): MjpegPart[] {
    return this.parser.parts;
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Waits until `accept` holds for this viewer, failing after `timeoutMs`. */
  async until(accept: (viewer: MjpegViewer) => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!accept(this)) {
      if (Date.now() > deadline) throw new Error(`viewer: ${what} not met within ${timeoutMs} ms (parts: ${this.parts.length}, complete: ${this.parser.complete}, closed: ${this.closed})`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 100);
        this.waiters.add(wake);
      });
    }
  }

  close(): void {
    this.response.destroy();
  }
}

// ---- GraphQL documents of the existing clients ----

const FIXTURES = new URL('./fixtures/existing-clients/', import.meta.url);

/** A fixture document; its fragment spreads are completed with the fragment files, as the web app interpolates them. */
export function clientDocument(name: string): string {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  const spreads = [...text.matchAll(/\.\.\.([A-Za-z_]\w*)/g)].map((m) => m[1]!);
  const fragments = [...new Set(spreads)].filter((f) => !new RegExp(`fragment\\s+${f}\\b`).test(text));
  return [text, ...fragments.map((f) => readFileSync(new URL(`web-app/fragments/${f}.graphql`, FIXTURES), 'utf8'))].join('\n');
}

// ---- the existing entrance observer ----

export interface ObserverOptions {
  baseUrl: string;
  /** The device's API token (sent as bearer on every call, frames included). */
  apiToken: string;
  boxId: string;
  appVersion?: string;
  /** The device's own setting `live_control_poll_interval_sec` (default 5 s, at least 1 s). */
  pollIntervalMs?: number;
  statusIntervalMs?: number;
  /** The device sends a frame every 0.25 s. */
  frameIntervalMs?: number;
  /** The pictures its camera gives, in turn. */
  frames: Buffer[];
  /** Diagnostics in its status (`status` object); the existing device sends `{}`. */
  diagnostics?: Record<string, unknown>;
}

export interface ObserverFrameResult {
  sessionId: string;
  status: number;
  body: Record<string, unknown>;
  bytes: Buffer;
}

/**
 * The live-control loop of the existing entrance observer, call for call: DEVICE_ONLINE at start; a poll (its status
 * fields plus `limit: 10`) every interval; START_STREAM acked "accepted" with `{sessionId, relayProtocol}`, then
 * STREAM_FAILED with UNSUPPORTED_RELAY_PROTOCOL unless the relay is http-jpeg-push, else STREAM_STARTING and
 * STREAM_ACTIVE right away and a JPEG POSTed every 0.25 s with `X-Publish-Token` (its API token as bearer);
 * STOP_STREAM stops the frames, is acked and followed by STREAM_STOPPED; other commands are acked "ignored".
 */
export class ExistingEntranceObserver {
  readonly frameResults: ObserverFrameResult[] = [];
  readonly calls: { path: string; body: unknown; status: number; answer: unknown }[] = [];
  readonly errors: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly publishers = new Map<string, { stop: () => Promise<void> }>();
  private frameIndex = 0;
  private readonly sleepers = new Set<() => void>();

  constructor(private readonly options: ObserverOptions) {}

  private statusBody(override: Record<string, unknown> = {}) {
    return {
      boxId: this.options.boxId,
      deviceId: 'entrance-observer',
      appVersion: this.options.appVersion ?? 'dev',
      cameraStatus: override.cameraStatus ?? 'ok',
      publisherState: override.publisherState ?? 'idle',
      lastErrorCode: override.lastErrorCode ?? null,
      lastErrorMessage: override.lastErrorMessage ?? null,
      status: override.status ?? this.options.diagnostics ?? {},
    };
  }

  async call(path: string, body: unknown): Promise<{ status: number; answer: unknown }> {
    const response = await fetch(`${this.options.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const answer = text ? (JSON.parse(text) as unknown) : undefined;
    this.calls.push({ path, body, status: response.status, answer });
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
    return { status: response.status, answer };
  }

  private event(eventType: string, sessionId: string | null, payload: Record<string, unknown>) {
    return this.call('/api/entrance-live/device/event', { boxId: this.options.boxId, sessionId, eventType, payload });
  }

  private ack(commandId: string, status: string, payload: Record<string, unknown>) {
    return this.call('/api/entrance-live/device/command-ack', { boxId: this.options.boxId, commandId, status, payload });
  }

  async start(): Promise<void> {
    this.running = true;
    await this.event('DEVICE_ONLINE', null, { cameraStatus: 'ok', publisherState: 'idle' });
    this.loops.push(this.every(this.options.pollIntervalMs ?? 5000, () => this.pollOnce()));
    this.loops.push(this.every(this.options.statusIntervalMs ?? 5000, () => this.call('/api/entrance-live/device/status', this.statusBody())));
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const wake of [...this.sleepers]) wake();
    await Promise.all(this.loops);
    for (const publisher of this.publishers.values()) await publisher.stop();
    this.publishers.clear();
  }

  /** Sessions the device is publishing frames for right now. */
  get publishing(): string[] {
    return [...this.publishers.keys()];
  }

  private async every(intervalMs: number, action: () => Promise<unknown>): Promise<void> {
    while (this.running) {
      try {
        await action();
      } catch (error) {
        this.errors.push((error as Error).message);
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, intervalMs);
        this.sleepers.add(wake);
      });
    }
  }

  async pollOnce(): Promise<void> {
    const { answer } = await this.call('/api/entrance-live/device/poll', { ...this.statusBody({ publisherState: this.publishers.size > 0 ? 'active' : 'idle' }), limit: 10 });
    const commands = (answer as { commands?: { id: string; sessionId: string; commandType: string; payload?: Record<string, unknown> }[] }).commands ?? [];
    for (const command of commands) await this.handle(command);
  }

  private async handle(command: { id: string; sessionId: string; commandType: string; payload?: Record<string, unknown> }): Promise<void> {
    const payload = command.payload ?? {};
    const sessionId = command.sessionId;
    if (command.commandType === 'START_STREAM') {
      await this.ack(command.id, 'accepted', { sessionId, relayProtocol: payload.relayProtocol });
      const relayProtocol = payload.relayProtocol;
      const publisherUrl = payload.publisherUrl as string | undefined;
      const publishToken = payload.publishToken as string | undefined;
      if (relayProtocol !== 'http-jpeg-push' || !publisherUrl || !publishToken) {
        await this.event('STREAM_FAILED', sessionId, {
          cameraStatus: 'error',
          publisherState: 'error',
          relayProtocol,
          errorCode: 'UNSUPPORTED_RELAY_PROTOCOL',
          message: `Unsupported or incomplete relay config: ${String(relayProtocol)}`,
        });
        return;
      }
      await this.publishers.get(sessionId)?.stop();
      this.publishers.set(sessionId, this.publish(sessionId, publisherUrl, publishToken));
      const details = { qualityProfile: payload.qualityProfile, recordingMode: payload.recordingMode, relayProtocol, publisherUrl };
      await this.event('STREAM_STARTING', sessionId, { cameraStatus: 'ok', publisherState: 'starting', ...details });
      await this.event('STREAM_ACTIVE', sessionId, { cameraStatus: 'ok', publisherState: 'active', ...details, clipHandoffEnabled: Boolean(payload.clipHandoffEnabled) });
    } else if (command.commandType === 'STOP_STREAM') {
      await this.publishers.get(sessionId)?.stop();
      this.publishers.delete(sessionId);
      await this.ack(command.id, 'accepted', { sessionId });
      await this.event('STREAM_STOPPED', sessionId, { cameraStatus: 'ok', publisherState: 'idle', reason: 'commanded-stop' });
    } else {
      await this.ack(command.id, 'ignored', { sessionId, reason: `Unsupported command type ${command.commandType}` });
    }
  }

  /** POSTs one frame as the device does. */
  async postFrame(sessionId: string, publisherUrl: string, publishToken: string, bytes: Buffer): Promise<ObserverFrameResult> {
    const response = await fetch(publisherUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiToken}`, 'x-publish-token': publishToken, 'content-type': 'image/jpeg' },
      body: bytes,
    });
    const result = { sessionId, status: response.status, body: (await response.json()) as Record<string, unknown>, bytes };
    this.frameResults.push(result);
    return result;
  }

  private publish(sessionId: string, publisherUrl: string, publishToken: string): { stop: () => Promise<void> } {
    let stopped = false;
    let lastError: string | undefined;
    let wake: (() => void) | undefined;
    const loop = (async () => {
      while (!stopped) {
        const bytes = this.options.frames[this.frameIndex++ % this.options.frames.length]!;
        try {
          const result = await this.postFrame(sessionId, publisherUrl, publishToken, bytes);
          if (result.status >= 400) throw new Error(`${result.status} ${JSON.stringify(result.body)}`);
          lastError = undefined;
        } catch (error) {
          const message = (error as Error).message;
          // The device reports each new kind of publish error once, in its status.
          if (message !== lastError) {
            lastError = message;
            await this.call(
              '/api/entrance-live/device/status',
              this.statusBody({ publisherState: 'error', lastErrorCode: 'LIVE_FRAME_PUBLISH_ERROR', lastErrorMessage: message, status: { publisherSessionId: sessionId, publisherUrl } }),
            ).catch(() => undefined);
          }
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.frameIntervalMs ?? 250);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        wake?.();
        await loop;
      },
    };
  }
}
