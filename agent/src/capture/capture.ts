import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { backoffDelay, type BackoffOptions } from '../uplink/retry-policy.ts';
import { resolveFfmpeg, resolveFfprobe } from './ffmpeg-binary.ts';
import { FfmpegLog } from './ffmpeg-log.ts';
import { frameBytes, type Frame, type PixelFormat } from './frame.ts';
import { FrameSplitter } from './frame-splitter.ts';
import { shownFrameTimes } from './resample.ts';
import { startBurstOver, StreamClock } from './stream-clock.ts';
import { buildFfmpegArgs, isLive, parseSource, type SourceSpec } from './source.ts';

const execFileAsync = promisify(execFile);

export type CaptureState = 'starting' | 'running' | 'reconnecting' | 'ended' | 'failed' | 'stopped';

export interface CaptureStatus {
  state: CaptureState;
  message?: string;
  /** Reconnect attempt number (live sources). */
  attempt?: number;
  retryInMs?: number;
  framesRead: number;
  framesDropped: number;
}

export interface CaptureOptions {
  /** File path, `rtsp://…`/`http://…` URL, `/dev/videoN`, or `rpicam[:extra args]`. */
  source: string;
  width: number;
  height: number;
  fps: number;
  pixelFormat: PixelFormat;
  /** Files only: pace frames at the clip's own speed instead of as fast as possible. */
  realtime?: boolean;
  /** Files only: wall clock of the clip's start when the file carries no `creation_time`. */
  startTime?: Date;
  reconnect?: BackoffOptions;
  /** A live source that delivers nothing for this long is restarted. */
  stallSeconds?: number;
  /** Frames buffered for a slow consumer: a live source drops the oldest beyond this, a file waits. */
  maxQueuedFrames?: number;
  /** Replaces the `rpicam-vid` command (tests, other camera tools). */
  cameraCommand?: string[];
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  onStatus?: (status: CaptureStatus) => void;
}

const DEFAULT_RECONNECT: BackoffOptions = { initialMs: 500, maxMs: 30_000 };
/** Live frames held while ffmpeg has not yet named the rate it writes; beyond these the configured rate is taken. */
const MAX_FRAMES_BEFORE_RATE = 8;
/**
 * At most this long of a live run's first frames is held for its start-up burst to end: ffmpeg probes 0.5 s of the
 * stream (source.ts), and each frame held is a whole picture in memory.
 */
const MAX_START_HOLD_SECONDS = 1;

/**
 * Raw frames from ffmpeg. Iterate it for frames; the iteration ends when a file is done, when the source
 * fails for good, or on `stop()`. Live sources reconnect with backoff forever and never throw.
 */
export class FfmpegCapture implements AsyncIterable<Frame> {
  private spec: SourceSpec | undefined;
  private ffmpegPath = '';
  private ffmpeg: ChildProcess | undefined;
  private camera: ChildProcess | undefined;
  private readonly queue: Frame[] = [];
  private waiter: ((result: IteratorResult<Frame>) => void) | undefined;
  private finished = false;
  private stopping = false;
  private paused = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private lastFrameAt = 0;
  private stderrTail: string[] = [];
  private fileStartMs = 0;
  /** Frames this ffmpeg run has delivered (it restarts at 0 on a reconnect). */
  private runFrameIndex = 0;
  private streamClock: StreamClock | undefined;
  /**
   * The first frames of a live run, with their arrival times, held until ffmpeg has named the rate and its start-up
   * burst is over (stream-clock.ts); undefined once they are stamped and the run's frames flow straight through.
   */
  private startOfRun: { data: Uint8Array; arrivalMs: number }[] | undefined;
  private startOfRunTimer: NodeJS.Timeout | undefined;
  /** A file frame's time from the file's start, by its index in the run (set at start). */
  private fileFrameOffsetMs: (outputIndex: number) => number = () => 0;
  private exited: Promise<void> = Promise.resolve();
  framesRead = 0;
  framesDropped = 0;
  /** A file's own frame rate, once started (when the file says); `fps` is what it is read at. */
  sourceFps: number | undefined;
  /**
   * The rate frames come at: `fps` for a file; for a live source, once its run has begun, what ffmpeg writes: `fps`,
   * or the source's own rate where that is lower.
   */
  readFps: number | undefined;
  reconnects = 0;
  state: CaptureState = 'starting';
  /** Why the source is reconnecting or has failed; undefined while it runs. */
  problem: string | undefined;

  constructor(private readonly options: CaptureOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  async start(): Promise<void> {
    this.ffmpegPath = resolveFfmpeg(this.options.env);
    this.spec = parseSource(this.options.source, this.options);
    if (this.spec.kind === 'rpicam' && this.options.cameraCommand) this.spec = { kind: 'rpicam', command: this.options.cameraCommand };
    if (this.spec.kind === 'file') {
      const probe = await probeFileStart(resolveFfprobe(this.options.env), this.spec.path).catch(() => undefined);
      const base = probe?.creationTimeMs ?? this.options.startTime?.getTime() ?? this.now;
      this.fileStartMs = base + (probe?.startSeconds ?? 0) * 1000;
      this.sourceFps = probe?.fps;
      // Read at another rate than its own, output frame k shows the clip frame resample.ts names and gets that frame's
      // time: a 25 fps clip read at 30 keeps its 40 ms steps instead of slots 33 ms apart. A rate that is no simple
      // fraction keeps the slots' own times.
      const fps = this.options.fps;
      const clipTimes = this.sourceFps !== undefined && this.sourceFps !== fps ? shownFrameTimes(this.sourceFps, fps) : undefined;
      this.fileFrameOffsetMs = clipTimes ?? ((outputIndex) => (outputIndex * 1000) / fps);
      this.readFps = fps;
    }
    this.emit('starting');
    this.launch();
    if (isLive(this.spec)) this.startStallWatch();
  }

  /**
   * The agent is stopping, and stops this later (after the live stream has ended on its frames): ffmpeg ending from
   * now on is part of the stop, not a lost source. A Ctrl-C reaches ffmpeg too, as systemd's SIGTERM did to every
   * process of the service, and each stop logged "source lost: ffmpeg exited with code 255" and set a reconnect.
   */
  stopComing(): void {
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
  }

  async stop(): Promise<void> {
    if (this.finished && !this.ffmpeg) return;
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.stallTimer);
    this.killChildren();
    await this.exited;
    this.finish('stopped');
  }

  [Symbol.asyncIterator](): AsyncIterator<Frame> {
    return {
      next: () => {
        const frame = this.queue.shift();
        if (frame) {
          if (this.paused && this.queue.length <= this.maxQueued / 2) {
            this.paused = false;
            this.ffmpeg?.stdout?.resume();
          }
          return Promise.resolve({ value: frame, done: false });
        }
        if (this.finished) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      return: async () => {
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  private get maxQueued(): number {
    return this.options.maxQueuedFrames ?? 4;
  }

  private launch(): void {
    const spec = this.spec!;
    const size = frameBytes(this.options.width, this.options.height, this.options.pixelFormat);
    const splitter = new FrameSplitter(size);
    const args = buildFfmpegArgs(spec, this.options, { realtime: this.options.realtime });
    this.stderrTail = [];
    this.runFrameIndex = 0;
    const live = isLive(spec);
    if (live) {
      this.readFps = undefined;
      this.startOfRun = [];
      clearTimeout(this.startOfRunTimer);
    }

    const ffmpeg = spawn(this.ffmpegPath, args, { stdio: [spec.kind === 'rpicam' ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    this.ffmpeg = ffmpeg;
    let camera: ChildProcess | undefined;
    if (spec.kind === 'rpicam') {
      const [command, ...cameraArgs] = spec.command;
      camera = spawn(command!, cameraArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
      this.camera = camera;
      camera.stdout!.pipe(ffmpeg.stdin!);
      ffmpeg.stdin!.on('error', () => {}); // EPIPE when ffmpeg dies first; its exit is handled below
      camera.stderr!.on('data', (chunk: Buffer) => chunk.toString('utf8').split('\n').forEach((line) => this.keepStderr(line)));
      camera.on('error', (error) => {
        this.keepStderr(`camera command failed: ${error.message}`);
        ffmpeg.kill('SIGKILL');
      });
      camera.on('exit', () => ffmpeg.stdin?.end());
    }

    ffmpeg.stdout!.on('data', (chunk: Buffer) => {
      for (const data of splitter.push(chunk)) this.receive(data);
    });
    const log = new FfmpegLog();
    createInterface({ input: ffmpeg.stderr!, crlfDelay: Infinity }).on('line', (line) => {
      const kept = log.read(line);
      if (kept !== undefined) this.keepStderr(kept);
      if (live && this.readFps === undefined && log.outputFps !== undefined) {
        this.readFps = log.outputFps;
        this.releaseStartOfRun(false);
      }
    });
    this.exited = new Promise((resolve) => {
      let done = false;
      const onEnd = (code: number | null, error?: Error) => {
        if (done) return;
        done = true;
        if (error) this.keepStderr(error.message);
        // Frames held at the start of a run that ended are still frames.
        if (this.ffmpeg === ffmpeg) this.releaseStartOfRun(true);
        if (camera && camera.exitCode === null) camera.kill('SIGKILL');
        if (this.ffmpeg === ffmpeg) this.ffmpeg = undefined;
        if (this.camera === camera) this.camera = undefined;
        resolve();
        this.onExit(code, splitter.pendingBytes);
      };
      ffmpeg.on('error', (error) => onEnd(null, error));
      // 'close' (not 'exit') so every stdout byte has been read first.
      ffmpeg.on('close', (code) => onEnd(code));
    });
  }

  private receive(data: Uint8Array): void {
    const arrivalMs = this.now;
    // Only a live run starts with frames held (files never do).
    if (this.startOfRun === undefined) {
      this.deliver(data, arrivalMs);
      return;
    }
    this.startOfRun.push({ data, arrivalMs });
    this.releaseStartOfRun(false);
    // A stream that pauses right after its first frames does not keep them waiting.
    clearTimeout(this.startOfRunTimer);
    if (this.startOfRun !== undefined) this.startOfRunTimer = setTimeout(() => this.releaseStartOfRun(true), 2000 / (this.readFps ?? this.options.fps));
  }

  /**
   * Stamps and delivers the frames held at the start of a live run once ffmpeg has named its rate (it prints its header
   * before it writes a frame, but the two pipes are read in no set order) and its start-up burst is over; `now` does
   * it at once, at the configured rate if ffmpeg named none.
   */
  private releaseStartOfRun(now: boolean): void {
    const held = this.startOfRun;
    // A run that ended before its first frame leaves nothing to stamp, nor a rate to go by.
    if (held === undefined || (now && held.length === 0)) return;
    if (this.readFps === undefined && (now || held.length >= MAX_FRAMES_BEFORE_RATE)) this.readFps = this.options.fps;
    if (this.readFps === undefined) return;
    const periodMs = 1000 / this.readFps;
    const arrivals = held.map((frame) => frame.arrivalMs);
    if (!now && !startBurstOver(arrivals, periodMs, Math.max(MAX_FRAMES_BEFORE_RATE, MAX_START_HOLD_SECONDS * this.readFps))) return;
    clearTimeout(this.startOfRunTimer);
    this.startOfRun = undefined;
    if (this.streamClock) this.streamClock.restart(periodMs);
    else this.streamClock = new StreamClock(periodMs);
    arrivals.forEach((arrivalMs, index) => this.streamClock!.anchor(index, arrivalMs));
    for (const { data, arrivalMs } of held) this.deliver(data, arrivalMs);
  }

  private deliver(data: Uint8Array, arrivalMs: number): void {
    const live = isLive(this.spec!);
    const timestampMs = live ? this.streamClock!.stamp(this.runFrameIndex, arrivalMs) : this.fileStartMs + this.fileFrameOffsetMs(this.runFrameIndex);
    this.runFrameIndex++;
    const frame: Frame = {
      data,
      width: this.options.width,
      height: this.options.height,
      format: this.options.pixelFormat,
      index: this.framesRead++,
      timestampMs,
      arrivalMs,
    };
    this.lastFrameAt = this.now;
    if (this.state !== 'running') {
      this.attempt = 0;
      this.emit('running');
    }
    if (this.waiter) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter({ value: frame, done: false });
      return;
    }
    this.queue.push(frame);
    if (this.queue.length > this.maxQueued) {
      if (live) {
        // A late frame is worth less than a current one: keep the pipe drained and drop the oldest.
        this.queue.shift();
        this.framesDropped++;
      } else if (!this.paused) {
        this.paused = true;
        this.ffmpeg?.stdout?.pause();
      }
    }
  }

  private onExit(code: number | null, partialBytes: number): void {
    if (this.stopping) return;
    // Exit code 0 from a live source is its stream coming to an end (a camera restarting, a relay closing). It was
    // logged as "ffmpeg exited with code 0", or as the decoder's complaints about the cut-off last frame.
    const reason =
      code === 0 ? 'the stream ended' : this.stderrTail.join('; ').trim() || (code === null ? 'ffmpeg could not start' : `ffmpeg exited with code ${code}`);
    if (!isLive(this.spec!)) {
      if (code === 0) this.finish('ended');
      else this.finish('failed', reason);
      return;
    }
    this.attempt++;
    this.reconnects++;
    const retryInMs = backoffDelay(this.attempt, this.options.reconnect ?? DEFAULT_RECONNECT);
    const detail = partialBytes > 0 ? `${reason} (a partial frame was dropped)` : reason;
    this.emit('reconnecting', { message: `source lost: ${detail}`, attempt: this.attempt, retryInMs });
    this.reconnectTimer = setTimeout(() => {
      if (this.stopping) return;
      this.emit('starting', { attempt: this.attempt });
      this.launch();
    }, retryInMs);
  }

  private startStallWatch(): void {
    const stallMs = (this.options.stallSeconds ?? 20) * 1000;
    this.lastFrameAt = this.now;
    this.stallTimer = setInterval(() => {
      if (this.ffmpeg && this.now - this.lastFrameAt > stallMs) {
        this.keepStderr(`no frame for ${stallMs / 1000} s`);
        this.lastFrameAt = this.now;
        this.killChildren();
      }
    }, Math.min(stallMs, 1000));
    this.stallTimer.unref();
  }

  private killChildren(): void {
    this.camera?.kill('SIGKILL');
    const ffmpeg = this.ffmpeg;
    if (!ffmpeg) return;
    ffmpeg.stdout?.resume();
    ffmpeg.kill('SIGTERM');
    const force = setTimeout(() => ffmpeg.kill('SIGKILL'), 2000);
    force.unref();
    ffmpeg.once('close', () => clearTimeout(force));
  }

  /** Keeps the last lines of what ffmpeg and the camera command complained of, for the failure message. */
  private keepStderr(line: string): void {
    if (line.trim()) this.stderrTail.push(line.trim());
    if (this.stderrTail.length > 5) this.stderrTail.splice(0, this.stderrTail.length - 5);
  }

  private finish(state: 'ended' | 'failed' | 'stopped', message?: string): void {
    if (this.finished) return;
    this.finished = true;
    clearInterval(this.stallTimer);
    clearTimeout(this.startOfRunTimer);
    this.emit(state, message === undefined ? {} : { message });
    if (this.waiter && this.queue.length === 0) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter({ value: undefined, done: true });
    }
  }

  private emit(state: CaptureState, extra: Partial<CaptureStatus> = {}): void {
    this.state = state;
    if (state === 'reconnecting' || state === 'failed') this.problem = extra.message;
    else if (state === 'running') this.problem = undefined;
    this.options.onStatus?.({ state, framesRead: this.framesRead, framesDropped: this.framesDropped, ...extra });
  }
}

export interface FileStart {
  /** `creation_time` of the video stream (or container), Unix ms. */
  creationTimeMs?: number;
  /** The stream's first presentation time, seconds. */
  startSeconds: number;
  /** Its average frame rate, when the file says. */
  fps?: number;
}

/** Reads the wall clock a recording started at from its metadata. */
export async function probeFileStart(ffprobePath: string, path: string): Promise<FileStart> {
  const { stdout } = await execFileAsync(
    ffprobePath,
    ['-v', 'error', '-print_format', 'json', '-select_streams', 'v:0', '-show_entries', 'format_tags=creation_time:stream=start_time,avg_frame_rate:stream_tags=creation_time', path],
    { timeout: 15_000 },
  );
  const parsed = JSON.parse(stdout) as {
    streams?: { start_time?: string; avg_frame_rate?: string; tags?: { creation_time?: string } }[];
    format?: { tags?: { creation_time?: string } };
  };
  const stream = parsed.streams?.[0];
  const created = stream?.tags?.creation_time ?? parsed.format?.tags?.creation_time;
  const creationTimeMs = created === undefined ? undefined : Date.parse(created);
  const startSeconds = Number(stream?.start_time ?? 0);
  // "25/1", "30000/1001"; "0/0" when the container does not say.
  const [numerator, denominator] = (stream?.avg_frame_rate ?? '').split('/').map(Number);
  const fps = numerator! / denominator!;
  return {
    ...(creationTimeMs !== undefined && !Number.isNaN(creationTimeMs) ? { creationTimeMs } : {}),
    startSeconds: Number.isFinite(startSeconds) ? startSeconds : 0,
    ...(fps > 0 && Number.isFinite(fps) ? { fps } : {}),
  };
}
