import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolveTool, StderrTail } from './ffmpeg.ts';

export interface EncoderOptions {
  path: string;
  width: number;
  height: number;
  fps: number;
  /** x264 quality (higher: smaller file, more artefacts). */
  crf: number;
  /** x264 speed preset (default superfast: quick enough to run beside the renderer; slower presets make smaller files). */
  preset?: string;
  /** ISO 8601 instant written as the file's creation_time, so readers can align frames to the wall clock. */
  creationTime: string;
  /** Frames kept in flight between the renderer and ffmpeg. */
  buffers?: number;
}

/**
 * Encodes raw RGB frames to an H.264 mp4 with the system ffmpeg, frames piped to its stdin. Frame buffers
 * come from a small pool and return to it only once ffmpeg has taken the bytes, so a buffer is never
 * overwritten while the pipe still holds it; waiting for a free buffer is the backpressure.
 */
export class Mp4Encoder {
  private child: ChildProcess | undefined;
  private readonly stderr = new StderrTail();
  private readonly free: Buffer[] = [];
  private waiting: Array<{ resolve: (buffer: Buffer) => void; reject: (error: Error) => void }> = [];
  private exit: Promise<number | null> | undefined;
  /** Why encoding failed; ffmpeg's own words are added when the error is raised, once its stderr has arrived. */
  private failure: string | undefined;
  readonly frameBytes: number;

  constructor(private readonly options: EncoderOptions) {
    this.frameBytes = options.width * options.height * 3;
  }

  start(): void {
    if (this.child) throw new Error('encoder already started');
    const { width, height, fps, crf, path, creationTime } = this.options;
    const ffmpeg = resolveTool('ffmpeg');
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, '-r', String(fps), '-i', 'pipe:0',
      '-c:v', 'libx264', '-preset', this.options.preset ?? 'superfast', '-crf', String(crf),
      '-pix_fmt', 'yuv420p', '-g', String(Math.max(1, Math.round(fps * 2))), '-threads', '1',
      '-movflags', '+faststart',
      '-metadata', `creation_time=${creationTime}`,
      '-y', path,
    ];
    const child = spawn(ffmpeg, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.stdin?.on('error', (error: Error) => this.fail(`ffmpeg stopped taking frames (${error.message})`));
    this.exit = new Promise((resolve) => {
      child.on('error', (error) => {
        this.fail(`ffmpeg could not run (${error.message})`);
        resolve(null);
      });
      child.on('close', (code, signal) => {
        // How ffmpeg ended says more than the broken pipe that usually comes first.
        if (code !== 0) this.fail(`ffmpeg exited with ${signal ?? `code ${code}`}`, true);
        resolve(code);
      });
    });
    for (let i = 0; i < (this.options.buffers ?? 3); i++) this.free.push(Buffer.allocUnsafeSlow(this.frameBytes));
  }

  /** A buffer to render the next frame into (waits while all are in flight). */
  async acquire(): Promise<Buffer> {
    if (this.failure) throw this.error();
    const buffer = this.free.pop();
    if (buffer) return buffer;
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** Hands a rendered frame to ffmpeg; the buffer returns to the pool once written. */
  submit(buffer: Buffer): void {
    if (this.failure) throw this.error();
    const stdin = this.child?.stdin;
    if (!stdin) throw new Error('encoder not started');
    if (buffer.length !== this.frameBytes) throw new Error(`frame must be ${this.frameBytes} bytes, got ${buffer.length}`);
    stdin.write(buffer, () => this.release(buffer));
  }

  /** Closes the input and waits for ffmpeg to finish the file. */
  async finish(): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !this.exit) throw new Error('encoder not started');
    stdin.end();
    await this.exit;
    if (this.failure) throw this.error();
  }

  /** Aborts: kills ffmpeg (the output file is left incomplete). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'close').catch(() => undefined);
  }

  private release(buffer: Buffer): void {
    const next = this.waiting.shift();
    if (next) next.resolve(buffer);
    else this.free.push(buffer);
  }

  private fail(reason: string, overrides = false): void {
    if (overrides || !this.failure) this.failure = reason;
    // Wake anyone waiting for a buffer so the failure surfaces instead of hanging.
    const waiting = this.waiting;
    this.waiting = [];
    for (const waiter of waiting) waiter.reject(this.error());
  }

  private error(): Error {
    const said = this.stderr.toString();
    return new Error(said ? `${this.failure}: ${said}` : String(this.failure));
  }
}
