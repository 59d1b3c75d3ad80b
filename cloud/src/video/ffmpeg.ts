import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { ProbeOutput } from './probe.ts';

/**
 * How ffprobe and ffmpeg open an uploaded file: from the local file alone, and only with the demuxers of videos and
 * of the stills, sounds and text refused by name (see probe.ts). ffmpeg guessed the format from the content, so an
 * "upload" that was an HLS playlist made it read the files the playlist named: another user's stored original
 * (../../blobs/videos/1/original.mp4) came back as the uploader's clip. A playlist, a concat list or any other
 * demuxer that opens further files is not on the list and fails as "no video format was recognised".
 */
export const UPLOAD_DEMUXERS = [
  // videos: MP4/MOV (its external data references stay off, ffmpeg's default), Matroska/WebM, MPEG-TS, AVI, raw H.264
  // and H.265 as a Pi camera writes them, Motion JPEG
  'mov', 'matroska', 'webm', 'mpegts', 'avi', 'h264', 'hevc', 'mjpeg', 'mpjpeg', 'jpeg_pipe',
  // refused with a reason rather than "not recognised": stills, sounds, text
  'png_pipe', 'image2', 'gif', 'apng', 'mp3', 'wav', 'aac', 'ogg', 'flac', 'tty',
];
export const UPLOAD_INPUT_OPTIONS = ['-protocol_whitelist', 'file', '-format_whitelist', UPLOAD_DEMUXERS.join(',')];

export class MediaToolMissingError extends Error {
  override readonly name = 'MediaToolMissingError';
}

export class MediaToolError extends Error {
  override readonly name = 'MediaToolError';
}

/** `explicit` (FFMPEG_PATH / FFPROBE_PATH) → the first executable named `name` on PATH; a clear error if none. */
export function resolveBinary(name: 'ffmpeg' | 'ffprobe', explicit: string | undefined, envPath = process.env.PATH ?? ''): string {
  const variable = name === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH';
  if (explicit) {
    const problem = executableProblem(explicit);
    if (problem) throw new MediaToolMissingError(`${variable} ${explicit} ${problem}`);
    return explicit;
  }
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  throw new MediaToolMissingError(`${name} was not found on PATH: install it (Debian: apt-get install ffmpeg) or set ${variable}`);
}

const isExecutable = (file: string): boolean => executableProblem(file) === undefined;

/** Why `file` cannot be run, or undefined when it can (a folder passes the X_OK check, so that is asked apart). */
export function executableProblem(file: string): string | undefined {
  try {
    if (!statSync(file).isFile()) return 'is not a file';
    accessSync(file, constants.X_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : code === 'EACCES' ? 'is not executable by this user' : `cannot be read (${code ?? String(err)})`;
  }
}

/**
 * Said at start when FFMPEG_PATH / FFPROBE_PATH are unset and PATH lacks the tool. Not a refusal: telemetry, live
 * and accounts need no ffmpeg, and a machine that only serves those (or an instance with JOB_WORKERS=0) runs fine.
 */
export function missingMediaToolsWarning(paths: { ffmpegPath?: string; ffprobePath?: string }, envPath = process.env.PATH ?? ''): string | undefined {
  const missing: string[] = [];
  for (const [name, explicit] of [['ffmpeg', paths.ffmpegPath], ['ffprobe', paths.ffprobePath]] as const) {
    try {
      resolveBinary(name, explicit, envPath);
    } catch (err) {
      if (!(err instanceof MediaToolMissingError)) throw err;
      missing.push(err.message);
    }
  }
  if (missing.length === 0) return undefined;
  return `${missing.join('; ')}; until then video uploads, transcodes and heatmap images fail`;
}

export interface RunOptions {
  signal?: AbortSignal;
  cwd?: string;
  /** Called with stdout chunks as they arrive (ffmpeg `-progress pipe:1`). */
  onStdout?: (chunk: string) => void;
}

/** How much of stderr to keep for an error message: the end is where ffmpeg says what went wrong. */
const STDERR_TAIL = 4000;

/**
 * Runs ffmpeg and ffprobe. Binaries are resolved on first use, so a machine without ffmpeg still serves everything
 * else and the error names what to install.
 */
export class MediaTools {
  private ffmpegBinary?: string;
  private ffprobeBinary?: string;

  constructor(private readonly paths: { ffmpegPath?: string; ffprobePath?: string } = {}) {}

  get ffmpeg(): string {
    this.ffmpegBinary ??= resolveBinary('ffmpeg', this.paths.ffmpegPath);
    return this.ffmpegBinary;
  }

  get ffprobe(): string {
    this.ffprobeBinary ??= resolveBinary('ffprobe', this.paths.ffprobePath);
    return this.ffprobeBinary;
  }

  /** ffprobe's JSON for an uploaded file, or null when ffprobe cannot read it at all; `countPackets` reads the whole file. */
  async probe(file: string, options: { signal?: AbortSignal; countPackets?: boolean } = {}): Promise<ProbeOutput | null> {
    try {
      const args = ['-v', 'error', ...UPLOAD_INPUT_OPTIONS, '-print_format', 'json', '-show_format', '-show_streams', ...(options.countPackets ? ['-count_packets'] : []), file];
      const { stdout } = await run(this.ffprobe, args, { signal: options.signal });
      return JSON.parse(stdout) as ProbeOutput;
    } catch (err) {
      if (err instanceof MediaToolError) return null;
      throw err;
    }
  }

  /**
   * `pts,duration,pos` CSV lines of the video packets of files read back to back (ffmpeg's concat protocol: one
   * ffprobe for many HLS segments); `pos` is the byte offset in the concatenation. Names are relative to `dir`.
   */
  async concatenatedVideoPackets(dir: string, files: readonly string[], signal?: AbortSignal): Promise<string> {
    if (files.some((f) => f.includes('|') || f.includes('/'))) throw new TypeError('concatenated file names must be plain names without "|"');
    const { stdout } = await run(
      this.ffprobe,
      ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,duration_time,pos', '-of', 'csv=p=0', `concat:${files.join('|')}`],
      { signal, cwd: dir },
    );
    return stdout;
  }

  runFfmpeg(args: string[], options: RunOptions = {}): Promise<{ stdout: string; stderr: string }> {
    return run(this.ffmpeg, ['-hide_banner', '-nostdin', '-y', ...args], options);
  }
}

function run(binary: string, args: string[], options: RunOptions = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted'));
      return;
    }
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (options.onStdout) options.onStdout(chunk);
      else stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    child.on('error', (err) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(new MediaToolError(`${path.basename(binary)} could not start: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) {
        reject(options.signal.reason instanceof Error ? options.signal.reason : new Error('aborted'));
      } else if (code === 0) {
        resolve({ stdout, stderr });
      } else {
        const last = stderr.trim().split('\n').slice(-3).join(' | ');
        reject(new MediaToolError(`${path.basename(binary)} failed (${signal ?? `exit ${code}`}): ${last || 'no output'}`));
      }
    });
  });
}
