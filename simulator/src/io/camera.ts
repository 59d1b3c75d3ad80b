import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { access, constants } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveTool, StderrTail } from './ffmpeg.ts';

export interface FileCameraOptions {
  /** A recorded video (mp4, mkv, mjpeg, … anything ffmpeg reads). */
  file: string;
  /** Start over at the end instead of ending the stream. */
  loop?: boolean;
  /** Port on 127.0.0.1; 0 picks a free one. */
  port?: number;
  /** Where ffmpeg's complaints go (default: nowhere). */
  log?: (line: string) => void;
  /**
   * Start playing when the first reader connects rather than at `start()`, so that reader sees the recording from its
   * first frame however long it took to connect (a test or a benchmark of what follows; a real camera does not wait).
   */
  startWhenWatched?: boolean;
}

const MPEGTS_PACKET = 188;
/** A client this far behind is dropped rather than buffered without bound. */
const MAX_CLIENT_BACKLOG = 8 * 1024 * 1024;
const RESTART_DELAY_MS = 1000;

/**
 * Plays a recorded file as a live camera: ffmpeg reads it at its own frame rate (`-re`, looping with
 * `-stream_loop -1` when asked), re-encodes it to H.264 with a keyframe every second and muxes MPEG-TS to
 * its stdout; a small HTTP server on loopback fans that stream out to every client. Clients join the live
 * stream where it is, like a real camera: each starts at the next keyframe, preceded by the stream's
 * program tables, so its decoder has everything it needs from the first byte. Any number may connect,
 * disconnect and reconnect. (ffmpeg's own `-listen 1` server takes one client and exits when it leaves,
 * which would restart the clip for each reconnect.)
 */
export class FileCamera {
  private server: Server | undefined;
  private ffmpeg: ChildProcess | undefined;
  private readonly clients = new Set<ServerResponse>();
  /** Clients that connected and wait for the next keyframe. */
  private readonly joining = new Set<ServerResponse>();
  private readonly tables = new ProgramTables();
  private pending = Buffer.alloc(0);
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private ended = false;
  private url_: string | undefined;
  private ffmpegPath: string | undefined;
  /** Whether ffmpeg ever produced a frame: before it did, its exit means the file cannot be played at all. */
  private played = false;
  /** Why the recording cannot be played, once ffmpeg gave up on it without a frame. */
  private failure: Error | undefined;
  private firstFrame: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(private readonly options: FileCameraOptions) {}

  /** Stream address, e.g. http://127.0.0.1:8554/camera.ts (after start). */
  get url(): string {
    if (!this.url_) throw new Error('camera not started');
    return this.url_;
  }

  async start(): Promise<string> {
    if (this.server) throw new Error('camera already started');
    const { file, port = 0 } = this.options;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`port must be an integer from 0 to 65535, got ${port}`);
    await access(file, constants.R_OK).catch(() => {
      throw new Error(`file cannot be read: ${file}`);
    });
    const ffmpegPath = resolveTool('ffmpeg');
    this.stopping = false;
    this.played = false;
    this.failure = undefined;
    const server = createServer((request, response) => this.serve(request, response));
    this.server = server;
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address() as AddressInfo;
    this.url_ = `http://127.0.0.1:${address.port}/camera.ts`;
    this.ffmpegPath = ffmpegPath;
    if (!this.options.startWhenWatched) {
      // Playing means a first frame: a file ffmpeg cannot decode fails here, with ffmpeg's reason.
      const playing = new Promise<void>((resolve, reject) => (this.firstFrame = { resolve, reject }));
      this.spawnFfmpeg(ffmpegPath);
      try {
        await playing;
      } catch (error) {
        await this.stop();
        throw error;
      }
    }
    return this.url_;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.ffmpeg;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await once(child, 'close').catch(() => undefined);
      clearTimeout(killer);
    }
    this.ffmpeg = undefined;
    for (const client of [...this.clients, ...this.joining]) client.destroy();
    this.clients.clear();
    this.joining.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if (this.failure) {
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${this.failure.message}\n`);
      return;
    }
    if (this.ended) {
      response.writeHead(410, { 'Content-Type': 'text/plain' }).end('the recording has ended\n');
      return;
    }
    response.writeHead(200, { 'Content-Type': 'video/mp2t', 'Cache-Control': 'no-store' });
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    this.joining.add(response);
    response.on('close', () => {
      this.joining.delete(response);
      this.clients.delete(response);
    });
    if (!this.ffmpeg && this.ffmpegPath && !this.stopping) this.spawnFfmpeg(this.ffmpegPath);
  }

  private spawnFfmpeg(ffmpegPath: string): void {
    const { file, loop } = this.options;
    const args = [
      '-hide_banner', '-loglevel', 'error', '-nostdin',
      '-re', ...(loop ? ['-stream_loop', '-1'] : []), '-i', file,
      '-map', '0:v:0', '-an',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-pix_fmt', 'yuv420p',
      // A keyframe every second, each carrying the stream headers, so a reader can start at any of them.
      '-force_key_frames', 'expr:gte(t,n_forced*1)', '-x264-params', 'repeat-headers=1',
      '-f', 'mpegts', '-muxdelay', '0', '-flush_packets', '1', 'pipe:1',
    ];
    const stderr = new StderrTail();
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.ffmpeg = child;
    this.pending = Buffer.alloc(0);
    // A new ffmpeg starts a new stream: everyone rejoins at its first keyframe.
    for (const client of this.clients) this.joining.add(client);
    this.clients.clear();
    this.tables.reset();
    child.stdout?.on('data', (chunk: Buffer) => this.broadcast(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => this.options.log?.(`ffmpeg failed to start: ${error.message}`));
    child.on('close', (code, signal) => {
      if (this.stopping) return;
      if (!this.played) {
        this.giveUp(new Error(`ffmpeg cannot play ${file}: ${stderr.toString() || `it exited (${signal ?? `code ${code}`}) before its first frame`}`));
        return;
      }
      if (code === 0 && !loop) {
        // The recording played to its end: close the streams so readers see end-of-file.
        this.ended = true;
        for (const client of [...this.clients, ...this.joining]) client.end();
        this.clients.clear();
        this.joining.clear();
        return;
      }
      this.options.log?.(`ffmpeg exited (${signal ?? `code ${code}`}), restarting: ${stderr}`);
      this.restartTimer = setTimeout(() => this.spawnFfmpeg(ffmpegPath), RESTART_DELAY_MS);
    });
  }

  /**
   * ffmpeg exited before its first frame: restarting would fail the same way every second, so the camera stops
   * playing, tells its readers and any later one why, and `start` rejects with the reason.
   */
  private giveUp(failure: Error): void {
    this.failure = failure;
    for (const client of [...this.clients, ...this.joining]) client.destroy();
    this.clients.clear();
    this.joining.clear();
    if (this.firstFrame) this.firstFrame.reject(failure);
    else this.options.log?.(failure.message);
    this.firstFrame = undefined;
  }

  /** Sends whole MPEG-TS packets to every live client, and lets joining clients in at a keyframe. */
  private broadcast(chunk: Buffer): void {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const whole = data.length - (data.length % MPEGTS_PACKET);
    this.pending = Buffer.from(data.subarray(whole));
    for (let offset = 0; offset < whole; offset += MPEGTS_PACKET) {
      const packet = data.subarray(offset, offset + MPEGTS_PACKET);
      this.tables.observe(packet);
      const keyframe = isRandomAccessPoint(packet);
      if (keyframe && !this.played) {
        this.played = true;
        this.firstFrame?.resolve();
        this.firstFrame = undefined;
      }
      if (this.joining.size > 0 && keyframe && this.tables.ready) {
        const header = this.tables.packets();
        for (const client of this.joining) {
          client.write(header);
          this.clients.add(client);
        }
        this.joining.clear();
      }
    }
    if (whole === 0 || this.clients.size === 0) return;
    const packets = data.subarray(0, whole);
    for (const client of this.clients) {
      if (client.writableLength > MAX_CLIENT_BACKLOG) {
        client.destroy();
        this.clients.delete(client);
        continue;
      }
      client.write(packets);
    }
  }
}

function packetId(packet: Buffer): number {
  return (((packet[1] as number) & 0x1f) << 8) | (packet[2] as number);
}

/** A packet whose adaptation field marks a random access point: ffmpeg sets it on video keyframes. */
export function isRandomAccessPoint(packet: Buffer): boolean {
  if (packet[0] !== 0x47) return false;
  const hasAdaptation = ((packet[3] as number) & 0x20) !== 0;
  return hasAdaptation && (packet[4] as number) > 0 && ((packet[5] as number) & 0x40) !== 0;
}

/** Keeps the latest program association and program map packets, to hand to a client that joins. */
class ProgramTables {
  private pat: Buffer | undefined;
  private pmt: Buffer | undefined;
  private pmtPid: number | undefined;

  get ready(): boolean {
    return this.pat !== undefined && this.pmt !== undefined;
  }

  reset(): void {
    this.pat = this.pmt = this.pmtPid = undefined;
  }

  packets(): Buffer {
    return Buffer.concat([this.pat as Buffer, this.pmt as Buffer]);
  }

  observe(packet: Buffer): void {
    if (packet[0] !== 0x47) return;
    const pid = packetId(packet);
    const startsSection = ((packet[1] as number) & 0x40) !== 0;
    if (pid === 0 && startsSection) {
      this.pat = Buffer.from(packet);
      // Payload: pointer field, then the section; its first program entry names the PMT's PID.
      const payload = 4 + (((packet[3] as number) & 0x20) !== 0 ? 1 + (packet[4] as number) : 0);
      const section = payload + 1 + (packet[payload] as number);
      const entry = section + 8;
      this.pmtPid = (((packet[entry + 2] as number) & 0x1f) << 8) | (packet[entry + 3] as number);
    } else if (pid === this.pmtPid && startsSection) {
      this.pmt = Buffer.from(packet);
    }
  }
}
