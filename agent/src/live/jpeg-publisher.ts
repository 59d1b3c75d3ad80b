import axios, { type AxiosInstance } from 'axios';
import { EncodingPublisher, type EncoderPlan, type EncodingPublisherOptions } from './encoding-publisher.ts';
import { jpegEncoderArgs } from './ffmpeg-args.ts';
import { JpegSplitter } from './jpeg-splitter.ts';
import { errorText, fileUrl } from './upload-relay.ts';

export interface JpegPublisherOptions extends EncodingPublisherOptions {
  picture: { width: number; height: number; fps: number; quality: number };
  requestTimeoutMs?: number;
}

/**
 * The `http-jpeg-push` relay: a few frames a second are encoded to JPEG by an ffmpeg child (no native image library
 * needed) and POSTed to the publisher URL (`…/frame`, appended when the URL names the session only) with
 * `X-Publish-Token`. One POST at a time; a picture that comes while one is on its way replaces any older one
 * waiting, so a slow uplink shows fewer, current pictures.
 */
export class JpegPushPublisher extends EncodingPublisher {
  protected readonly relayProtocol = 'http-jpeg-push' as const;
  protected readonly encoderName = 'JPEG encoder';
  private http: AxiosInstance | undefined;
  private readonly splitter = new JpegSplitter();
  private waiting: Buffer | undefined;
  private sending: Promise<void> | undefined;
  private readonly abort = new AbortController();
  picturesSent = 0;
  picturesReplaced = 0;

  constructor(private readonly options: JpegPublisherOptions) {
    super(options, options.picture.fps);
  }

  protected startingDetails(): Record<string, unknown> {
    const { picture } = this.options;
    return { width: picture.width, height: picture.height, fps: picture.fps };
  }

  protected open(): Promise<EncoderPlan> {
    this.http = axios.create({ timeout: this.options.requestTimeoutMs ?? 5000, validateStatus: () => true, maxRedirects: 0, responseType: 'text' });
    return Promise.resolve({ args: jpegEncoderArgs(this.options.input, this.options.picture), readOutput: true, maxQueuedFrames: 1 });
  }

  protected override encoderStarted(): void {
    this.feed!.stdout!.on('data', (chunk: Buffer) => {
      for (const jpeg of this.splitter.push(chunk)) this.queue(jpeg);
    });
  }

  protected async finish(): Promise<void> {
    this.waiting = undefined;
    await this.feed?.stop(2000);
    await this.sending;
    this.abort.abort();
  }

  protected async abandon(): Promise<void> {
    this.waiting = undefined;
    this.abort.abort();
    await this.feed?.kill();
  }

  protected framesSent(): number {
    return this.picturesSent;
  }

  protected framesDropped(): number {
    return (this.feed?.framesDropped ?? 0) + this.picturesReplaced;
  }

  protected summary(): Record<string, unknown> {
    return { framesSent: this.picturesSent, picturesReplaced: this.picturesReplaced, uploadsAccepted: this.health?.uploadsAccepted ?? 0, uploadsFailed: this.health?.uploadsFailed ?? 0 };
  }

  private queue(jpeg: Buffer): void {
    if (!this.running) return;
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
      this.recordUpload({ kind: 'frame', method: 'POST', name, atMs: this.now, ...(status !== undefined ? { status } : {}), ...(error ? { error } : {}) });
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
}

/** The gateway hands out the frame URL itself (`…/{sessionId}/frame`); a URL naming only the session gets `/frame`. */
export function frameUrl(publisherUrl: string): string {
  return new URL(publisherUrl).pathname.replace(/\/+$/, '').endsWith('/frame') ? publisherUrl : fileUrl(publisherUrl, 'frame');
}
