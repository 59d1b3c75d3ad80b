import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { resolveTool, StderrTail } from './ffmpeg.ts';

/** ffmpeg connects within milliseconds; this long means it is stuck. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * What rpicam-vid asks of libx264 on a Raspberry Pi 5 (which has no hardware H.264 encoder) outside its low-latency
 * mode: on top of the superfast preset, diamond motion search without sub-pixel refinement or chroma, no look-ahead,
 * one B-frame, no weighted prediction, no scene-cut keyframes. Clips then carry the compression of the camera the
 * agent runs beside, and x264 spends far less on the sensor noise of dim scenes than with the preset alone.
 */
const CAMERA_X264_PARAMS = 'me=dia:subme=0:merange=16:chroma-me=0:weightp=0:weightb=0:rc-lookahead=0:mixed-refs=0:partitions=i8x8,i4x4:bframes=1:scenecut=0';

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
 * Encodes raw BGR frames (blue, green, red bytes; see `BgrFrame`) to an H.264 mp4 with the system ffmpeg. Frame
 * buffers come from a small pool and return to it only once the bytes have left, so a buffer is never overwritten
 * while in flight; waiting for a free buffer is the backpressure.
 *
 * Frames travel over a loopback TCP connection that ffmpeg opens to us, not through its stdin. A pipe holds
 * 64 KiB, so a 900 KB frame crosses it in a dozen hand-overs that each need this (busy, rendering) event loop
 * and a wake-up of ffmpeg: renderer and encoder ended up taking turns. A loopback socket's buffer grows to
 * several frames, so a frame is handed over in one write and both sides work at once (render + encode went
 * from 4.6× to 6.4× real time at 640×480 in `pnpm bench:render`).
 */
export class Mp4Encoder {
  private child: ChildProcess | undefined;
  private socket: Socket | undefined;
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

  /** Starts ffmpeg and waits until it has connected for frames (or explains why it could not). */
  async start(): Promise<void> {
    if (this.child) throw new Error('encoder already started');
    const { width, height, fps, crf, path, creationTime } = this.options;
    const ffmpeg = resolveTool('ffmpeg');
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      '-f', 'rawvideo', '-pix_fmt', 'bgr24', '-s', `${width}x${height}`, '-r', String(fps), '-i', `tcp://127.0.0.1:${port}`,
      '-c:v', 'libx264', '-preset', this.options.preset ?? 'superfast', '-crf', String(crf), '-x264-params', CAMERA_X264_PARAMS,
      // Two x264 threads: the renderer leaves part of its core idle, and in noisy scenes x264 is what limits the
      // render (faster in each of eleven paired runs, 1–22 %; `docs/benchmarks.md`). The output stays the same for
      // the same input.
      '-pix_fmt', 'yuv420p', '-g', String(Math.max(1, Math.round(fps * 2))), '-threads', '2',
      '-movflags', '+faststart',
      '-metadata', `creation_time=${creationTime}`,
      '-y', path,
    ];
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    this.exit = new Promise((resolve) => {
      child.on('error', (error) => {
        this.fail(`ffmpeg could not run (${error.message})`);
        resolve(null);
      });
      child.on('close', (code, signal) => {
        // How ffmpeg ended says more than the broken connection that usually comes first.
        if (code !== 0) this.fail(`ffmpeg exited with ${signal ?? `code ${code}`}`, true);
        resolve(code);
      });
    });
    try {
      // The first connection is ffmpeg's; nothing else is accepted, and the port closes once it is in.
      const connected = once(server, 'connection') as Promise<[Socket]>;
      let timer: NodeJS.Timeout | undefined;
      const patience = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), CONNECT_TIMEOUT_MS)));
      const outcome = await Promise.race([connected.then(([socket]) => socket), this.exit, patience]).finally(() => clearTimeout(timer));
      if (!(outcome instanceof Socket)) {
        if (outcome === 'timeout') {
          this.fail(`ffmpeg did not connect for frames within ${CONNECT_TIMEOUT_MS / 1000} s`);
          await this.stop();
        } else {
          this.fail(this.failure ?? 'ffmpeg ended before it took any frames');
        }
        throw this.error();
      }
      this.socket = outcome;
      outcome.setNoDelay(true);
      outcome.on('error', (error: Error) => this.fail(`ffmpeg stopped taking frames (${error.message})`));
    } finally {
      server.close();
    }
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
    const socket = this.socket;
    if (!socket) throw new Error('encoder not started');
    if (buffer.length !== this.frameBytes) throw new Error(`frame must be ${this.frameBytes} bytes, got ${buffer.length}`);
    socket.write(buffer, () => this.release(buffer));
  }

  /** Closes the input and waits for ffmpeg to finish the file. */
  async finish(): Promise<void> {
    const socket = this.socket;
    if (!socket || !this.exit) throw new Error('encoder not started');
    socket.end();
    await this.exit;
    if (this.failure) throw this.error();
  }

  /** Aborts: kills ffmpeg (the output file is left incomplete). */
  async stop(): Promise<void> {
    this.socket?.destroy();
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
