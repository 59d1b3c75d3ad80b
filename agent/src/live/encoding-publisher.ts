import type { Frame } from '../capture/frame.ts';
import { frameBytes } from '../capture/frame.ts';
import type { RelayProtocol } from '../device/commands.ts';
import type { RawInput } from './ffmpeg-args.ts';
import { FfmpegFeed, type FeedExit } from './ffmpeg-feed.ts';
import { FramePacer } from './frame-pacer.ts';
import { PublishHealth, type HealthVerdict, type UploadResult } from './publish-health.ts';
import type { Publisher, PublisherEvent, PublisherState, PublisherStats } from './publisher.ts';

/** What every relay's publisher is given. */
export interface EncodingPublisherOptions {
  ffmpegPath: string;
  publisherUrl: string;
  publishToken: string;
  input: RawInput;
  startTimeoutMs: number;
  /** Once active: failures only for this long end the stream. */
  unreachableAfterMs?: number;
  onEvent: (event: PublisherEvent) => void;
  now?: () => number;
}

/** How the encoder is run once the relay's side is ready. */
export interface EncoderPlan {
  args: string[];
  /** The encoder's stdout carries the encoded output (read by the subclass in `encoderStarted`). */
  readOutput: boolean;
  maxQueuedFrames?: number;
}

type Failure = Extract<HealthVerdict, { type: 'failed' }>;

/**
 * The life of one live stream, whatever the relay: the capture's frames paced into an ffmpeg encoder, the
 * gateway's answers judged by PublishHealth (ACTIVE once accepted, FAILED when refused or unreachable too long),
 * and the publisher states and events the device loop reports. Subclasses say where the encoded output goes.
 */
export abstract class EncodingPublisher implements Publisher {
  state: PublisherState = 'idle';
  protected feed: FfmpegFeed | undefined;
  protected health: PublishHealth | undefined;
  protected startedAt = 0;
  private readonly pacer: FramePacer;
  private timer: NodeJS.Timeout | undefined;
  private framesOffered = 0;
  private cleanup: Promise<void> = Promise.resolve();

  protected abstract readonly relayProtocol: RelayProtocol;
  /** Names the encoder in failure messages ("the ffmpeg HLS publisher exited…"). */
  protected abstract readonly encoderName: string;

  constructor(
    protected readonly base: EncodingPublisherOptions,
    fps: number,
  ) {
    this.pacer = new FramePacer(fps);
  }

  protected get now(): number {
    return (this.base.now ?? Date.now)();
  }

  /** Details of the `starting` event. */
  protected abstract startingDetails(): Record<string, unknown>;
  /** Readies the relay's side; undefined when the stream must not go on (failed, or stopped meanwhile). */
  protected abstract open(): Promise<EncoderPlan | undefined>;
  /** Called once the encoder runs. */
  protected encoderStarted(): void {}
  /** Graceful end: let what is encoded reach the gateway. */
  protected abstract finish(): Promise<void>;
  /** After a failure: drop everything at once. */
  protected abstract abandon(): Promise<void>;
  protected abstract framesSent(): number;
  protected abstract framesDropped(): number;
  /** Counters for the `active` and `stopped` events. */
  protected abstract summary(): Record<string, unknown>;

  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    this.startedAt = this.now;
    this.base.onEvent({ type: 'starting', details: { relayProtocol: this.relayProtocol, ...this.startingDetails() } });
    this.health = new PublishHealth({
      mode: this.relayProtocol === 'hls' ? 'hls' : 'jpeg',
      startedAtMs: this.startedAt,
      startTimeoutMs: this.base.startTimeoutMs,
      unreachableAfterMs: this.base.unreachableAfterMs ?? 15_000,
    });
    const plan = await this.open();
    if (!plan) return;
    const { input } = this.base;
    this.feed = new FfmpegFeed({
      ffmpegPath: this.base.ffmpegPath,
      args: plan.args,
      frameBytes: frameBytes(input.width, input.height, input.pixelFormat),
      ...(plan.maxQueuedFrames !== undefined ? { maxQueuedFrames: plan.maxQueuedFrames } : {}),
      onExit: (exit) => this.onEncoderExit(exit),
    });
    this.feed.start(plan.readOutput);
    this.encoderStarted();
    this.timer = setInterval(() => {
      const verdict = this.health?.check(this.now);
      if (verdict) this.verdict(verdict);
    }, 500);
  }

  offer(frame: Frame): void {
    if (!this.running) return;
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
      await this.finish();
      this.state = 'stopped';
      this.base.onEvent({ type: 'stopped', details: { reason, ...this.summary() } });
    })();
    return this.cleanup;
  }

  stats(): PublisherStats {
    return {
      relayProtocol: this.relayProtocol,
      state: this.state,
      framesOffered: this.framesOffered,
      framesSent: this.framesSent(),
      framesDropped: this.framesDropped(),
      uploadsAccepted: this.health?.uploadsAccepted ?? 0,
      uploadsFailed: this.health?.uploadsFailed ?? 0,
      startedAt: this.startedAt,
    };
  }

  protected get running(): boolean {
    return this.state === 'starting' || this.state === 'active';
  }

  /** One answer (or error) of the gateway to an upload. */
  protected recordUpload(result: UploadResult): void {
    const verdict = this.health?.record(result);
    if (verdict) this.verdict(verdict);
  }

  private verdict(verdict: HealthVerdict): void {
    if (verdict.type === 'active') {
      if (this.state !== 'starting') return;
      this.state = 'active';
      this.base.onEvent({ type: 'active', details: { relayProtocol: this.relayProtocol, startupMs: this.now - this.startedAt, ...this.summary() } });
      return;
    }
    if (verdict.type === 'ended') {
      void this.endedByGateway(verdict.reason);
      return;
    }
    void this.fail(verdict);
  }

  /** The gateway closed the session: stop as if told to (`stopped`, not `failed`), without flushing into a refusal. */
  private async endedByGateway(reason: string): Promise<void> {
    if (!this.running) return;
    this.state = 'stopping';
    clearInterval(this.timer);
    this.cleanup = (async () => {
      await this.abandon();
      this.state = 'stopped';
      this.base.onEvent({ type: 'stopped', details: { reason, ...this.summary() } });
    })();
    await this.cleanup;
  }

  private onEncoderExit(exit: FeedExit): void {
    if (exit.requested || !this.running) return;
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    void this.fail({ type: 'failed', errorCode: 'PUBLISHER_EXITED', errorMessage: `the ffmpeg ${this.encoderName} ${how}${exit.stderr ? `: ${exit.stderr}` : ''}` });
  }

  protected async fail(verdict: Failure): Promise<void> {
    if (this.state === 'failed' || this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'failed';
    clearInterval(this.timer);
    this.base.onEvent({ type: 'failed', errorCode: verdict.errorCode, errorMessage: verdict.errorMessage });
    this.cleanup = this.abandon();
    await this.cleanup;
  }
}
