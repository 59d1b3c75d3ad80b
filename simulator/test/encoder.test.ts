import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Mp4Encoder } from '../src/io/encoder.ts';

describe('Mp4Encoder', () => {
  it('reports why ffmpeg failed instead of hanging', async () => {
    const encoder = new Mp4Encoder({ path: '/nonexistent-directory/clip.mp4', width: 640, height: 480, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
    await encoder.start();
    // Frames are refused once ffmpeg is gone; finishing then explains why, in ffmpeg's words. Submitting goes on
    // until then, however long ffmpeg takes to give up: a fixed number of small frames could all fit in the
    // loopback socket's buffer before a slow (loaded) ffmpeg died, and the loop ended without an error.
    const deadline = Date.now() + 10_000;
    await expect(
      (async () => {
        while (Date.now() < deadline) encoder.submit(await encoder.acquire());
      })(),
    ).rejects.toThrow(/ffmpeg/);
    await expect(encoder.finish()).rejects.toThrow(/ffmpeg exited with code 1: .*No such file or directory/s);
    await encoder.stop();
  }, 15_000);

  it('explains an ffmpeg that ends before it connects for frames, instead of waiting for it', async () => {
    // A stand-in for ffmpeg that passes the -version probe and then fails at once, as a broken build would.
    const dir = await mkdtemp(join(tmpdir(), 'hivegate-encoder-'));
    const fake = join(dir, 'ffmpeg');
    await writeFile(fake, '#!/bin/sh\n[ "$1" = -version ] && exit 0\necho "Unknown encoder libx264" >&2\nexit 3\n');
    await chmod(fake, 0o755);
    const saved = process.env.FFMPEG_PATH;
    process.env.FFMPEG_PATH = fake;
    try {
      const encoder = new Mp4Encoder({ path: join(dir, 'clip.mp4'), width: 64, height: 48, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
      await expect(encoder.start()).rejects.toThrow(/ffmpeg exited with code 3: Unknown encoder libx264/);
    } finally {
      if (saved === undefined) delete process.env.FFMPEG_PATH;
      else process.env.FFMPEG_PATH = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('encodes as a Raspberry Pi 5 camera does: x264 with rpicam-vid\'s options', async () => {
    await withTempDir(async (dir) => {
      const file = await encodeFrames(join(dir, 'clip.mp4'), 64, 48, 10, (p, i) => (p * 7 + i * 13) & 0xff);
      const settings = x264Settings(file);
      for (const option of ['me=dia', 'subme=0', 'chroma_me=0', 'weightp=0', 'weightb=0', 'mixed_ref=0', 'bframes=1', 'scenecut=0']) {
        expect(settings).toContain(` ${option} `);
      }
    });
  });

  it('writes the same file for the same frames, though x264 codes on two threads', async () => {
    await withTempDir(async (dir) => {
      // Moving noise-like texture: enough for x264 to make different choices if its threads raced.
      const texture = (p: number, i: number) => ((p * 2654435761 + i * 40503) >>> 24) & 0xff;
      const first = await encodeFrames(join(dir, 'a.mp4'), 160, 120, 30, texture);
      expect((await encodeFrames(join(dir, 'b.mp4'), 160, 120, 30, texture)).equals(first)).toBe(true);
      expect(x264Settings(first)).toContain(' threads=2 ');
    });
  });

  it('refuses frames of the wrong size and use before start', async () => {
    const encoder = new Mp4Encoder({ path: '/tmp/unused.mp4', width: 64, height: 48, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
    expect(() => encoder.submit(Buffer.alloc(64 * 48 * 3))).toThrow(/not started/);
    await expect(encoder.finish()).rejects.toThrow(/not started/);
  });
});

async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'hivegate-encoder-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Encodes `frames` frames whose byte `p` of frame `i` is `fill(p, i)`, and returns the file. */
async function encodeFrames(path: string, width: number, height: number, frames: number, fill: (p: number, i: number) => number): Promise<Buffer> {
  const encoder = new Mp4Encoder({ path, width, height, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
  await encoder.start();
  for (let i = 0; i < frames; i++) {
    const frame = await encoder.acquire();
    for (let p = 0; p < frame.length; p++) frame[p] = fill(p, i);
    encoder.submit(frame);
  }
  await encoder.finish();
  await encoder.stop();
  return readFile(path);
}

/** The settings x264 writes into the stream it coded (its SEI "options: …" string). */
function x264Settings(file: Buffer): string {
  return /options: ([^\0]*)/.exec(file.toString('latin1'))?.[1] ?? '';
}
