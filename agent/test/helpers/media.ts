import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';

const run = promisify(execFile);

export function tempDir(prefix: string): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), `hivegate-${prefix}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export interface ClipOptions {
  seconds: number;
  fps: number;
  width: number;
  height: number;
  /** ISO time written as `creation_time` metadata. */
  creationTime?: string;
  /** lavfi source expression; defaults to ffmpeg's test pattern. */
  lavfi?: string;
  container?: 'mp4' | 'mpegts';
}

/** Generates a short H.264 clip with ffmpeg's lavfi sources (no media is committed to the repo). */
export async function generateClip(path: string, options: ClipOptions): Promise<string> {
  const source = options.lavfi ?? `testsrc=size=${options.width}x${options.height}:rate=${options.fps}`;
  const args = [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', source, '-t', String(options.seconds),
    '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', String(options.fps),
    ...(options.creationTime ? ['-metadata', `creation_time=${options.creationTime}`] : []),
    ...(options.container === 'mpegts' ? ['-f', 'mpegts'] : []),
    path,
  ];
  await run('ffmpeg', args);
  return path;
}

/**
 * A landing board with two dark "bees" (16×40 px): one flies down into the lower half of the frame (the
 * default entrance zone) and one flies up out of it, 110 px/s, at 640×480.
 */
export function twoBeesLavfi(fps: number): string {
  return (
    `color=c=0xb4a078:s=640x480:r=${fps}[bg];color=c=0x302010:s=16x40:r=${fps}[b1];color=c=0x302010:s=16x40:r=${fps}[b2];` +
    `[bg][b1]overlay=x=200:y='-40+t*110':shortest=1[s1];[s1][b2]overlay=x=420:y='500-t*110':shortest=1`
  );
}

/** The two bees of `twoBeesLavfi` (6 s at 30 fps, the rate the agent reads at by default; MPEG-TS in `dir`) as a camera on loopback. */
export async function startTwoBeesCamera(dir: string, options: { loop: boolean }): Promise<NetworkCamera> {
  const clip = await generateClip(join(dir, 'two-bees.ts'), { seconds: 6, fps: 30, width: 640, height: 480, lavfi: twoBeesLavfi(30), container: 'mpegts' });
  return startNetworkCamera(clip, options);
}

/**
 * For the calling test file: a temporary folder and the two-bees camera on loopback, with the fake server its
 * agents talk to, started before the file's tests and stopped after them. `camera()` is the running camera.
 */
export function useTwoBeesCamera(prefix: string, options: { loop: boolean; server?: { start(): Promise<unknown>; stop(): Promise<unknown> } }) {
  const dir = tempDir(prefix);
  let running: NetworkCamera | undefined;
  beforeAll(async () => {
    running = await startTwoBeesCamera(dir.path, { loop: options.loop });
    await options.server?.start();
  }, 60_000);
  afterAll(async () => {
    await running?.close();
    await options.server?.stop();
    dir.cleanup();
  });
  const camera = (): NetworkCamera => {
    if (!running) throw new Error('the two-bees camera has not started');
    return running;
  };
  return { dir, camera };
}

export interface NetworkCamera {
  url: string;
  close(): Promise<void>;
}

/**
 * A network camera on loopback (the Pi camera cannot run here): serves an MPEG-TS clip at about real time, over
 * and over, or once and then hangs up (`loop: false`, to make the agent reconnect); on `port` when given (a camera that
 * comes back where it was).
 */
export async function startNetworkCamera(clip: string, options: { loop: boolean; port?: number }): Promise<NetworkCamera> {
  const bytes = readFileSync(clip);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp2t' });
    const chunk = Math.ceil(bytes.length / 60);
    let offset = 0;
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      if (offset >= bytes.length) {
        if (!options.loop) {
          clearInterval(timer);
          res.end();
          return;
        }
        offset = 0;
      }
      res.write(bytes.subarray(offset, offset + chunk));
      offset += chunk;
    }, 100);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream.ts`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
