import { EncodingPublisher, type EncoderPlan, type EncodingPublisherOptions } from './encoding-publisher.ts';
import { hlsPublisherArgs } from './ffmpeg-args.ts';
import type { StreamFormat } from './quality.ts';
import { UploadRelay } from './upload-relay.ts';

export interface HlsPublisherOptions extends EncodingPublisherOptions {
  /** Defaults to index.m3u8. */
  playlistName?: string;
  format: StreamFormat;
}

/**
 * Live stream as HLS: the capture's frames → ffmpeg (x264, 1 s segments) → PUTs to a loopback relay → the session's
 * publisher URL. The relay's view of the gateway's answers decides ACTIVE and FAILED.
 */
export class HlsPublisher extends EncodingPublisher {
  protected readonly relayProtocol = 'hls' as const;
  protected readonly encoderName = 'HLS publisher';
  private relay: UploadRelay | undefined;

  constructor(private readonly options: HlsPublisherOptions) {
    super(options, options.format.fps);
  }

  protected startingDetails(): Record<string, unknown> {
    const { format } = this.options;
    return { qualityProfile: format.profile, width: format.width, height: format.height, fps: format.fps, bitrateKbps: format.bitrateKbps };
  }

  protected async open(): Promise<EncoderPlan | undefined> {
    const relay = new UploadRelay({ targetUrl: this.options.publisherUrl, publishToken: this.options.publishToken, onResult: (r) => this.recordUpload(r), ...(this.options.now ? { now: this.options.now } : {}) });
    this.relay = relay;
    try {
      await relay.start();
    } catch (error) {
      await this.fail({ type: 'failed', errorCode: 'PUBLISHER_START_FAILED', errorMessage: `cannot open the local upload relay: ${(error as Error).message}` });
      return undefined;
    }
    if (this.state !== 'starting') {
      // Stopped while the relay was opening.
      await relay.stop(0);
      return undefined;
    }
    return {
      args: hlsPublisherArgs(this.options.input, this.options.format, { url: relay.url, playlistName: this.options.playlistName ?? 'index.m3u8', authorizationHeader: relay.authorizationHeader }),
      readOutput: false,
    };
  }

  protected async finish(): Promise<void> {
    await this.feed?.stop();
    // The last segment and the ENDLIST playlist are still on their way through the relay.
    await this.relay?.stop(3000);
  }

  protected async abandon(): Promise<void> {
    await this.feed?.kill();
    await this.relay?.stop(0);
  }

  protected framesSent(): number {
    return this.feed?.framesWritten ?? 0;
  }

  protected framesDropped(): number {
    return this.feed?.framesDropped ?? 0;
  }

  protected summary(): Record<string, unknown> {
    return {
      framesSent: this.framesSent(),
      framesDropped: this.framesDropped(),
      uploadsAccepted: this.health?.uploadsAccepted ?? 0,
      uploadsFailed: this.health?.uploadsFailed ?? 0,
      uploadsDropped: this.relay?.uploadsDropped ?? 0,
    };
  }
}
