import axios, { type AxiosInstance } from 'axios';
import type { Frame } from '../capture/frame.ts';
import { frameBytes } from '../capture/frame.ts';
import { FfmpegFeed, type FeedExit } from './ffmpeg-feed.ts';
import { jpegEncoderArgs, type RawInput } from './ffmpeg-args.ts';
import { FramePacer } from './frame-pacer.ts';
import { JpegSplitter } from './jpeg-splitter.ts';
import { PublishHealth, type HealthVerdict } from './publish-health.ts';
import type { Publisher, PublisherEvent, PublisherState, PublisherStats } from './publisher.ts';
import { errorText, fileUrl } from './upload-relay.ts';

export interface JpegPublisherOptions {
  ffmpegPath: string;
  publisherUrl: string;
  publishToken: string;
  input: RawInput;
  picture: { width: number; height: number; fps: number; quality: number };
  startTimeoutMs: number;
  unreachableAfterMs?: number;
  requestTimeoutMs?: number;
  onEvent: (event: PublisherEvent) => void;
  now?: () => number;
}

/**
 * The `http-jpeg-push` relay: a few frames a second are encoded to JPEG by an ffmpeg child (no native image library
 * needed) and POSTed to the publisher URL (`…/frame`, appended when the URL names the session only) with `X-Publish-Token`. One POST at a time; a picture that comes
 * while one is on its way replaces any older one waiting, so a slow uplink shows fewer, current pictures.
 */
export class JpegPushPublisher implements Publisher {
  private feed: FfmpegFeed | undefined;
  private http: AxiosInstance | undefined;
  private health: PublishHealth | undefined;
  private readonly pacer: FramePacer;
  private readonly splitter = new JpegSplitter();
  private timer: NodeJS.Timeout | undefined;
  private waiting: Buffer | undefined;
  private sending: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private cleanup: Promise<void> = Promise.resolve();
  private startedAt = 0;
  private framesOffered = 0;
  picturesSent = 0;
  picturesReplaced = 0;
  state: PublisherState = 'idle';

  constructor(private readonly options: JpegPublisherOptions) {
    this.pacer = new FramePacer(options.picture.fps);
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    this.startedAt = this.now;
    const { picture, input } = this.options;
    this.options.onEvent({ type: 'starting', details: { relayProtocol: 'http-jpeg-push', width: picture.width, height: picture.height, fps: picture.fps } });
    this.health = new PublishHealth({ mode: 'jpeg', startedAtMs: this.startedAt, startTimeoutMs: this.options.startTimeoutMs, unreachableAfterMs: this.options.unreachableAfterMs ?? 15_000 });
    this.http = axios.create({ timeout: this.options.requestTimeoutMs ?? 5000, validateStatus: () => true, maxRedirects: 0, responseType: 'text' });
    this.feed = new FfmpegFeed({
      ffmpegPath: this.options.ffmpegPath,
      args: jpegEncoderArgs(input, picture),
      frameBytes: frameBytes(input.width, input.height, input.pixelFormat),
      maxQueuedFrames: 1,
      onExit: (exit) => this.onFfmpegExit(exit),
    });
    this.feed.start(true);
    this.feed.stdout!.on('data', (chunk: Buffer) => {
      for (const jpeg of this.splitter.push(chunk)) this.queue(jpeg);
    });
    this.timer = setInterval(() => {
      const verdict = this.health?.check(this.now);
      if (verdict) this.verdict(verdict);
    }, 500);
  }

  offer(frame: Frame): void {
    if (this.state !== 'starting' && this.state !== 'active') return;
    this.framesOffered++;
    if (!this.pacer.take(this.now)) return;
    this.feed?.write(frame.data);
  }

  async stop(reason: string): Promise<void> {
    if (this.state === 'stopped' || this.state === 'failed' || this.state === 'stopping') return this.cleanup;
    if (this.state === 'idle') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    clearInterval(this.timer);
    this.cleanup = (async () => {
      this.waiting = undefined;
      await this.feed?.stop(2000);
      await this.sending;
      this.abort.abort();
      this.state = 'stopped';
      this.options.onEvent({ type: 'stopped', details: { reason, ...this.summary() } });
    })();
    return this.cleanup;
  }

  stats(): PublisherStats {
    return {
      relayProtocol: 'http-jpeg-push',
      state: this.state,
      framesOffered: this.framesOffered,
      framesSent: this.picturesSent,
      framesDropped: (this.feed?.framesDropped ?? 0) + this.picturesReplaced,
      uploadsAccepted: this.health?.uploadsAccepted ?? 0,
      uploadsFailed: this.health?.uploadsFailed ?? 0,
      startedAt: this.startedAt,
    };
  }

  private summary(): Record<string, unknown> {
    return { framesSent: this.picturesSent, picturesReplaced: this.picturesReplaced, uploadsAccepted: this.health?.uploadsAccepted ?? 0, uploadsFailed: this.health?.uploadsFailed ?? 0 };
  }

  private queue(jpeg: Buffer): void {
    if (this.state !== 'starting' && this.state !== 'active') return;
    if (this.sending) {
      if (this.waiting) this.picturesReplaced++;
      this.waiting = jpeg;
      return;
    }
    this.sending = this.send(jpeg).finally(() => {
      this.sending = undefined;
      const next = this.waiting;
      this.waiting = undefined;
      if (next) this.queue(next);
    });
  }

  private async send(jpeg: Buffer): Promise<void> {
    const name = 'frame';
    const report = (status: number | undefined, error?: string) => {
      const verdict = this.health?.record({ kind: 'frame', method: 'POST', name, atMs: this.now, ...(status !== undefined ? { status } : {}), ...(error ? { error } : {}) });
      if (verdict) this.verdict(verdict);
    };
    try {
      const response = await this.http!.post(frameUrl(this.options.publisherUrl), jpeg, {
        headers: { 'content-type': 'image/jpeg', 'x-publish-token': this.options.publishToken },
        signal: this.abort.signal,
      });
      if (response.status < 300) this.picturesSent++;
      report(response.status, response.status >= 300 ? errorText(response.data) : undefined);
    } catch (error) {
      if (!this.abort.signal.aborted) report(undefined, (error as Error).message);
    }
  }

  private verdict(verdict: HealthVerdict): void {
    if (verdict.type === 'active') {
      if (this.state !== 'starting') return;
      this.state = 'active';
      this.options.onEvent({ type: 'active', details: { relayProtocol: 'http-jpeg-push', startupMs: this.now - this.startedAt, ...this.summary() } });
      return;
    }
    void this.fail(verdict);
  }

  private onFfmpegExit(exit: FeedExit): void {
    if (exit.requested || this.state === 'stopping' || this.state === 'stopped' || this.state === 'failed') return;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    void this.fail({ type: 'failed', errorCode: 'PUBLISHER_EXITED', errorMessage: `the ffmpeg JPEG encoder ${how}${exit.stderr ? `: ${exit.stderr}` : ''}` });
  }

  private async fail(verdict: Extract<HealthVerdict, { type: 'failed' }>): Promise<void> {
    if (this.state === 'failed' || this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'failed';
    clearInterval(this.timer);
    this.waiting = undefined;
    this.options.onEvent({ type: 'failed', errorCode: verdict.errorCode, errorMessage: verdict.errorMessage });
    this.cleanup = (async () => {
      this.abort.abort();
      await this.feed?.kill();
    })();
    await this.cleanup;
  }
}

/** The gateway hands out the frame URL itself (`…/{sessionId}/frame`); a URL naming only the session gets `/frame`. */
export function frameUrl(publisherUrl: string): string {
  return new URL(publisherUrl).pathname.replace(/\/+$/, '').endsWith('/frame') ? publisherUrl : fileUrl(publisherUrl, 'frame');
}
