import type { Frame } from '../capture/frame.ts';
import { frameBytes } from '../capture/frame.ts';
import { FfmpegFeed, type FeedExit } from './ffmpeg-feed.ts';
import { hlsPublisherArgs, type RawInput } from './ffmpeg-args.ts';
import { FramePacer } from './frame-pacer.ts';
import { PublishHealth, type HealthVerdict, type UploadResult } from './publish-health.ts';
import type { Publisher, PublisherEvent, PublisherState, PublisherStats } from './publisher.ts';
import type { StreamFormat } from './quality.ts';
import { UploadRelay } from './upload-relay.ts';

export interface HlsPublisherOptions {
  ffmpegPath: string;
  publisherUrl: string;
  /** Defaults to index.m3u8. */
  playlistName?: string;
  publishToken: string;
  input: RawInput;
  format: StreamFormat;
  startTimeoutMs: number;
  /** Once active: failures only for this long end the stream. */
  unreachableAfterMs?: number;
  onEvent: (event: PublisherEvent) => void;
  now?: () => number;
}

/**
 * Live stream as HLS: the capture's frames → ffmpeg (x264, 1 s segments) → PUTs to a loopback relay → the session's
 * publisher URL. The relay's view of the gateway's answers decides ACTIVE and FAILED.
 */
export class HlsPublisher implements Publisher {
  private feed: FfmpegFeed | undefined;
  private relay: UploadRelay | undefined;
  private health: PublishHealth | undefined;
  private pacer: FramePacer;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private framesOffered = 0;
  private cleanup: Promise<void> = Promise.resolve();
  state: PublisherState = 'idle';

  constructor(private readonly options: HlsPublisherOptions) {
    this.pacer = new FramePacer(options.format.fps);
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    this.startedAt = this.now;
    const { format } = this.options;
    this.options.onEvent({ type: 'starting', details: { relayProtocol: 'hls', qualityProfile: format.profile, width: format.width, height: format.height, fps: format.fps, bitrateKbps: format.bitrateKbps } });
    this.health = new PublishHealth({ mode: 'hls', startedAtMs: this.startedAt, startTimeoutMs: this.options.startTimeoutMs, unreachableAfterMs: this.options.unreachableAfterMs ?? 15_000 });
    const relay = new UploadRelay({ targetUrl: this.options.publisherUrl, publishToken: this.options.publishToken, onResult: (r) => this.onUpload(r), ...(this.options.now ? { now: this.options.now } : {}) });
    this.relay = relay;
    try {
      await relay.start();
    } catch (error) {
      return this.fail({ type: 'failed', errorCode: 'PUBLISHER_START_FAILED', errorMessage: `cannot open the local upload relay: ${(error as Error).message}` });
    }
    if (this.state !== 'starting') {
      // Stopped while the relay was opening.
      await relay.stop(0);
      return;
    }
    const input = this.options.input;
    this.feed = new FfmpegFeed({
      ffmpegPath: this.options.ffmpegPath,
      args: hlsPublisherArgs(input, format, { url: relay.url, playlistName: this.options.playlistName ?? 'index.m3u8', authorizationHeader: relay.authorizationHeader }),
      frameBytes: frameBytes(input.width, input.height, input.pixelFormat),
      onExit: (exit) => this.onFfmpegExit(exit),
    });
    this.feed.start(false);
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
      await this.feed?.stop();
      // The last segment and the ENDLIST playlist are still on their way through the relay.
      await this.relay?.stop(3000);
      this.state = 'stopped';
      this.options.onEvent({ type: 'stopped', details: { reason, ...this.summary() } });
    })();
    return this.cleanup;
  }

  stats(): PublisherStats {
    return {
      relayProtocol: 'hls',
      state: this.state,
      framesOffered: this.framesOffered,
      framesSent: this.feed?.framesWritten ?? 0,
      framesDropped: this.feed?.framesDropped ?? 0,
      uploadsAccepted: this.health?.uploadsAccepted ?? 0,
      uploadsFailed: this.health?.uploadsFailed ?? 0,
      startedAt: this.startedAt,
    };
  }

  private summary(): Record<string, unknown> {
    const stats = this.stats();
    return { framesSent: stats.framesSent, framesDropped: stats.framesDropped, uploadsAccepted: stats.uploadsAccepted, uploadsFailed: stats.uploadsFailed, uploadsDropped: this.relay?.uploadsDropped ?? 0 };
  }

  private onUpload(result: UploadResult): void {
    const verdict = this.health?.record(result);
    if (verdict) this.verdict(verdict);
  }

  private verdict(verdict: HealthVerdict): void {
    if (verdict.type === 'active') {
      if (this.state !== 'starting') return;
      this.state = 'active';
      this.options.onEvent({ type: 'active', details: { relayProtocol: 'hls', startupMs: this.now - this.startedAt, ...this.summary() } });
      return;
    }
    void this.fail(verdict);
  }

  private onFfmpegExit(exit: FeedExit): void {
    if (exit.requested || this.state === 'stopping' || this.state === 'stopped' || this.state === 'failed') return;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    void this.fail({ type: 'failed', errorCode: 'PUBLISHER_EXITED', errorMessage: `the ffmpeg HLS publisher ${how}${exit.stderr ? `: ${exit.stderr}` : ''}` });
  }

  private async fail(verdict: Extract<HealthVerdict, { type: 'failed' }>): Promise<void> {
    if (this.state === 'failed' || this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'failed';
    clearInterval(this.timer);
    this.options.onEvent({ type: 'failed', errorCode: verdict.errorCode, errorMessage: verdict.errorMessage });
    this.cleanup = (async () => {
      await this.feed?.kill();
      await this.relay?.stop(0);
    })();
    await this.cleanup;
  }
}
