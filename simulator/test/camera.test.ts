import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileCamera } from '../src/io/camera.ts';
import { run } from './helpers.ts';

const FRAME_BYTES = 32 * 24;

/**
 * Reads the camera with a separate ffmpeg, as the agent will, and notes when each decoded frame arrives.
 * Stops `windowMs` after the first frame, or when the stream ends.
 */
async function readFrames(url: string, windowMs: number, timeoutMs = 20_000): Promise<{ arrivals: number[]; ended: boolean }> {
  const reader = spawn(
    'ffmpeg',
    ['-v', 'error', '-probesize', '65536', '-analyzeduration', '200000', '-i', url, '-an', '-vf', 'scale=32:24', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const arrivals: number[] = [];
  let bytes = 0;
  let ended = false;
  let windowTimer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    reader.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      while (arrivals.length < Math.floor(bytes / FRAME_BYTES)) arrivals.push(performance.now());
      if (arrivals.length > 0 && !windowTimer) windowTimer = setTimeout(resolve, windowMs);
    });
    reader.on('close', () => {
      ended = true;
      resolve();
    });
  });
  const timer = setTimeout(() => reader.kill('SIGKILL'), timeoutMs);
  await done;
  const endedByItself = ended;
  clearTimeout(timer);
  clearTimeout(windowTimer);
  if (reader.exitCode === null && reader.signalCode === null) {
    reader.kill('SIGKILL');
    await once(reader, 'close');
  }
  return { arrivals, ended: endedByItself };
}

function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'HEAD' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('FileCamera', () => {
  let dir: string;
  let mp4: string;
  let mjpeg: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hivegate-camera-'));
    mp4 = join(dir, 'one-second.mp4');
    mjpeg = join(dir, 'two-seconds.mjpeg');
    const source = ['-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=30'];
    for (const [file, seconds, codec] of [[mp4, '1', ['-c:v', 'libx264', '-pix_fmt', 'yuv420p']], [mjpeg, '2', ['-c:v', 'mjpeg', '-f', 'mjpeg']]] as const) {
      const made = await run('ffmpeg', ['-v', 'error', ...source, '-t', seconds, ...codec, '-y', file]);
      if (made.code !== 0) throw new Error(made.stderr);
    }
  }, 30_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('plays a looping recording in real time, to readers that come and go', async () => {
    const camera = new FileCamera({ file: mp4, loop: true, port: 0 });
    const url = await camera.start();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/camera\.ts$/);
      // Three seconds of a one-second clip: only a loop lasts that long. Paced at 30 fps that is about 90
      // frames (plus the burst a reader gets while it probes); unpaced it would be thousands.
      const first = await readFrames(url, 3000);
      expect(first.ended).toBe(false);
      expect(first.arrivals.length).toBeGreaterThan(45);
      expect(first.arrivals.length).toBeLessThan(180);

      const again = await readFrames(url, 1000);
      expect(again.arrivals.length).toBeGreaterThan(10);
    } finally {
      await camera.stop();
    }
    await expect(status(url)).rejects.toThrow(/ECONNREFUSED/);
  }, 40_000);

  it('plays an MJPEG recording once and then ends the stream', async () => {
    const camera = new FileCamera({ file: mjpeg, port: 0 });
    const url = await camera.start();
    try {
      const started = performance.now();
      const { arrivals, ended } = await readFrames(url, 10_000);
      expect(ended).toBe(true);
      expect(arrivals.length).toBeGreaterThan(10);
      expect(arrivals.length).toBeLessThanOrEqual(60);
      // Two seconds of video cannot be over much sooner than two seconds after it started playing.
      expect(performance.now() - started).toBeGreaterThan(1200);
      expect(await status(url)).toBe(410);
    } finally {
      await camera.stop();
    }
  }, 40_000);

  it('waits for its first reader to start playing when asked, so that reader gets the recording from its first frame', async () => {
    const camera = new FileCamera({ file: mjpeg, port: 0, startWhenWatched: true });
    const url = await camera.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 2500)); // longer than the recording
      const { arrivals, ended } = await readFrames(url, 10_000);
      expect(ended).toBe(true);
      // All 60 frames of the two seconds; a camera that had played from start() would have ended already (410).
      expect(arrivals.length).toBe(60);
    } finally {
      await camera.stop();
    }
  }, 40_000);

  it('fails to start, with the reason ffmpeg gives, on a file that is no video, and leaves no port open', async () => {
    // Before, start() returned the URL of a camera whose ffmpeg exited at once and was restarted every second, forever.
    const noVideo = join(dir, 'no-video.mp4');
    await writeFile(noVideo, 'this is text, not a recording\n'.repeat(40));
    const lines: string[] = [];
    const port = await freePort();
    const camera = new FileCamera({ file: noVideo, port, log: (line) => lines.push(line) });
    await expect(camera.start()).rejects.toThrow(/ffmpeg cannot play .*no-video\.mp4: .*Invalid data found/s);
    await expect(status(`http://127.0.0.1:${port}/camera.ts`)).rejects.toThrow(/ECONNREFUSED/);
    expect(lines).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the old restart delay
    expect(lines).toEqual([]);
  }, 20_000);

  it('tells its readers why, instead of restarting, when a camera that waits for a reader cannot play the file', async () => {
    const noVideo = join(dir, 'no-video-watched.mp4');
    await writeFile(noVideo, 'not a recording either\n'.repeat(40));
    const lines: string[] = [];
    const camera = new FileCamera({ file: noVideo, port: 0, startWhenWatched: true, log: (line) => lines.push(line) });
    const url = await camera.start();
    try {
      const { arrivals } = await readFrames(url, 1000, 10_000);
      expect(arrivals).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await status(url)).toBe(500);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/ffmpeg cannot play .*Invalid data found/s);
    } finally {
      await camera.stop();
    }
  }, 30_000);

  it('refuses an unreadable file before opening any port', async () => {
    await expect(new FileCamera({ file: join(dir, 'missing.mp4') }).start()).rejects.toThrow(/file cannot be read/);
    await expect(new FileCamera({ file: mp4, port: 70_000 }).start()).rejects.toThrow(/port must be an integer/);
  });
});
