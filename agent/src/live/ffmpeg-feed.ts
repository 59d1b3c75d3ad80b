import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface FeedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines ffmpeg wrote to stderr (its reason, when it failed). */
  stderr: string;
  /** True when `stop()` asked it to end. */
  requested: boolean;
}

export interface FfmpegFeedOptions {
  ffmpegPath: string;
  args: string[];
  /** Bytes of one input frame: a frame is written whole or not at all. */
  frameBytes: number;
  /** Frames that may wait in the pipe before new ones are dropped. */
  maxQueuedFrames?: number;
  onExit: (exit: FeedExit) => void;
}

/**
 * An ffmpeg child fed raw frames on stdin. Feeding never blocks the caller: when ffmpeg falls behind (a slow encoder
 * on a busy Pi), frames are dropped here instead of queueing, so detection and counting keep their pace.
 */
export class FfmpegFeed {
  private child: ChildProcess | undefined;
  private stderrTail: string[] = [];
  private stopRequested = false;
  private exited: Promise<void> = Promise.resolve();
  framesWritten = 0;
  framesDropped = 0;

  constructor(private readonly options: FfmpegFeedOptions) {}

  get stdout(): Readable | null | undefined {
    return this.child?.stdout;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  start(withStdout: boolean): void {
    const child = spawn(this.options.ffmpegPath, this.options.args, { stdio: ['pipe', withStdout ? 'pipe' : 'ignore', 'pipe'] });
    this.child = child;
    // EPIPE when ffmpeg dies with frames in flight; its exit is reported below.
    child.stdin!.on('error', () => {});
    child.stderr!.on('data', (chunk: Buffer) => this.keepStderr(chunk));
    this.exited = new Promise((resolve) => {
      let done = false;
      const onEnd = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
        if (done) return;
        done = true;
        if (error) this.keepStderr(Buffer.from(error.message));
        this.child = undefined;
        resolve();
        this.options.onExit({ code, signal, stderr: this.stderrTail.join(' | '), requested: this.stopRequested });
      };
      child.on('error', (error) => onEnd(null, null, error));
      child.on('close', (code, signal) => onEnd(code, signal));
    });
  }

  /** Writes the frame unless ffmpeg is behind; true when written. */
  write(data: Uint8Array): boolean {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded || this.stopRequested) return false;
    if (data.length !== this.options.frameBytes) {
      this.framesDropped++;
      return false;
    }
    if (stdin.writableLength >= this.options.frameBytes * (this.options.maxQueuedFrames ?? 2)) {
      this.framesDropped++;
      return false;
    }
    stdin.write(data);
    this.framesWritten++;
    return true;
  }

  /**
   * Ends the input so ffmpeg finishes what it has (the HLS muxer writes the last segment and an ENDLIST playlist),
   * then interrupts and finally kills it if it does not exit in time.
   */
  async stop(graceMs = 4000): Promise<void> {
    const child = this.child;
    this.stopRequested = true;
    if (!child) return this.exited;
    child.stdin?.end();
    const interrupt = setTimeout(() => child.kill('SIGINT'), graceMs);
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs + 2000);
    await this.exited;
    clearTimeout(interrupt);
    clearTimeout(kill);
  }

  /** Stops at once (failure paths). */
  async kill(): Promise<void> {
    this.stopRequested = true;
    const child = this.child;
    if (child) {
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 2000);
      await this.exited;
      clearTimeout(force);
    }
  }

  private keepStderr(chunk: Buffer): void {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) if (line.trim()) this.stderrTail.push(line.trim());
    if (this.stderrTail.length > 6) this.stderrTail.splice(0, this.stderrTail.length - 6);
  }
}
