import type { LiveDeviceEventType } from '@hivegate/shared';
import type { Frame } from '../capture/frame.ts';
import type { CurrentStream, StartStream } from '../device/commands.ts';
import type { RawInput } from './ffmpeg-args.ts';
import { HlsPublisher } from './hls-publisher.ts';
import { JpegPushPublisher } from './jpeg-publisher.ts';
import type { Publisher, PublisherEvent, PublisherState, PublisherStats } from './publisher.ts';
import { jpegFormat, streamFormat } from './quality.ts';

/** Device events the live gateway understands (`POST /api/entrance-live/device/event`). */
export type StreamEventType = Exclude<LiveDeviceEventType, 'DEVICE_ONLINE'>;

export interface StreamEvent {
  sessionId: string;
  eventType: StreamEventType;
  payload: Record<string, unknown>;
}

export interface LiveStreamerOptions {
  ffmpegPath: string;
  /** The capture's frames: size, rate and pixel format. */
  camera: RawInput & { fps: number };
  jpegFps: number;
  startTimeoutMs: number;
  onEvent: (event: StreamEvent) => void;
  log?: (message: string) => void;
  /** Replaces the publisher factory (tests). */
  createPublisher?: (start: StartStream, onEvent: (event: PublisherEvent) => void) => Publisher;
}

/**
 * Runs at most one live stream (the gateway holds one open session per box) and feeds it the frames the pipeline
 * sees: the camera is opened once, for counting, and the stream gets a copy of each frame it can take.
 */
export class LiveStreamer {
  private active: { sessionId: string; relayProtocol: StartStream['relayProtocol']; publisher: Publisher } | undefined;
  lastError: { code: string; message: string; at: number } | undefined;

  constructor(private readonly options: LiveStreamerOptions) {}

  get current(): CurrentStream | undefined {
    return this.active ? { sessionId: this.active.sessionId, relayProtocol: this.active.relayProtocol } : undefined;
  }

  get state(): PublisherState {
    return this.active?.publisher.state ?? 'idle';
  }

  stats(): (PublisherStats & { sessionId: string }) | undefined {
    return this.active ? { sessionId: this.active.sessionId, ...this.active.publisher.stats() } : undefined;
  }

  /** The pipeline calls this for every frame, before detection. Never blocks. */
  offer(frame: Frame): void {
    this.active?.publisher.offer(frame);
  }

  /** Starts the session's stream; a different session's stream is stopped first. */
  async start(start: StartStream): Promise<void> {
    if (this.active?.sessionId === start.sessionId) return;
    if (this.active) await this.stop(this.active.sessionId, `replaced by session ${start.sessionId}`);
    const sessionId = start.sessionId;
    let publisher: Publisher;
    const onEvent = (event: PublisherEvent) => this.onPublisherEvent(sessionId, publisher, event);
    try {
      publisher = this.options.createPublisher ? this.options.createPublisher(start, onEvent) : this.create(start, onEvent);
    } catch (error) {
      // Nothing ran: report the session as failed straight away.
      this.options.onEvent({ sessionId, eventType: 'STREAM_STARTING', payload: { relayProtocol: start.relayProtocol } });
      this.report(sessionId, 'PUBLISHER_START_FAILED', (error as Error).message);
      return;
    }
    this.active = { sessionId, relayProtocol: start.relayProtocol, publisher };
    this.options.log?.(`live: starting ${start.relayProtocol} stream for session ${sessionId} (${start.qualityProfile})`);
    await publisher.start();
  }

  /** Stops the session's stream; false when that session is not streaming. */
  async stop(sessionId: string, reason: string): Promise<boolean> {
    const active = this.active;
    if (!active || active.sessionId !== sessionId) return false;
    this.options.log?.(`live: stopping stream for session ${sessionId} (${reason})`);
    await active.publisher.stop(reason);
    if (this.active === active) this.active = undefined;
    return true;
  }

  async stopAll(reason: string): Promise<void> {
    if (this.active) await this.stop(this.active.sessionId, reason);
  }

  private create(start: StartStream, onEvent: (event: PublisherEvent) => void): Publisher {
    const { camera } = this.options;
    const ffmpegPath = this.options.ffmpegPath;
    const input: RawInput = { width: camera.width, height: camera.height, pixelFormat: camera.pixelFormat };
    if (start.relayProtocol === 'http-jpeg-push') {
      return new JpegPushPublisher({
        ffmpegPath,
        publisherUrl: start.publisherUrl,
        publishToken: start.publishToken,
        input,
        picture: jpegFormat(start.qualityProfile, camera, this.options.jpegFps),
        startTimeoutMs: this.options.startTimeoutMs,
        onEvent,
      });
    }
    return new HlsPublisher({
      ffmpegPath,
      publisherUrl: start.publisherUrl,
      playlistName: start.playlistName,
      publishToken: start.publishToken,
      input,
      format: streamFormat(start.qualityProfile, camera),
      startTimeoutMs: this.options.startTimeoutMs,
      onEvent,
    });
  }

  private onPublisherEvent(sessionId: string, publisher: Publisher, event: PublisherEvent): void {
    switch (event.type) {
      case 'starting':
        this.options.onEvent({ sessionId, eventType: 'STREAM_STARTING', payload: event.details });
        break;
      case 'active':
        this.options.log?.(`live: session ${sessionId} is streaming`);
        this.options.onEvent({ sessionId, eventType: 'STREAM_ACTIVE', payload: event.details });
        break;
      case 'failed':
        // A failed stream frees the slot: the next START_STREAM starts afresh.
        if (this.active?.publisher === publisher) this.active = undefined;
        this.report(sessionId, event.errorCode, event.errorMessage);
        break;
      case 'stopped':
        // Also when the publisher ended by itself (the gateway closed the session): the slot is free again.
        if (this.active?.publisher === publisher) this.active = undefined;
        this.options.onEvent({ sessionId, eventType: 'STREAM_STOPPED', payload: event.details });
        break;
    }
  }

  private report(sessionId: string, errorCode: string, errorMessage: string): void {
    this.lastError = { code: errorCode, message: errorMessage, at: Date.now() };
    this.options.log?.(`live: stream for session ${sessionId} failed: ${errorCode}: ${errorMessage}`);
    this.options.onEvent({ sessionId, eventType: 'STREAM_FAILED', payload: { errorCode, errorMessage } });
  }
}
