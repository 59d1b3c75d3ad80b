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
    const dir = await mkdtemp(join(tmpdir(), 'hivegate-encoder-'));
    try {
      const path = join(dir, 'clip.mp4');
      const encoder = new Mp4Encoder({ path, width: 64, height: 48, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
      await encoder.start();
      for (let i = 0; i < 10; i++) {
        const frame = await encoder.acquire();
        for (let p = 0; p < frame.length; p++) frame[p] = (p * 7 + i * 13) & 0xff;
        encoder.submit(frame);
      }
      await encoder.finish();
      await encoder.stop();
      // x264 writes the settings it ran with into the stream itself.
      const settings = /options: ([^\0]*)/.exec((await readFile(path)).toString('latin1'))?.[1] ?? '';
      for (const option of ['me=dia', 'subme=0', 'chroma_me=0', 'weightp=0', 'weightb=0', 'mixed_ref=0', 'bframes=1', 'scenecut=0']) {
        expect(settings).toContain(` ${option} `);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes the same file for the same frames, though x264 codes on two threads', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hivegate-encoder-'));
    try {
      const encode = async (name: string): Promise<Buffer> => {
        const path = join(dir, name);
        const encoder = new Mp4Encoder({ path, width: 160, height: 120, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
        await encoder.start();
        for (let i = 0; i < 30; i++) {
          const frame = await encoder.acquire();
          // Moving noise-like texture: enough for x264 to make different choices if its threads raced.
          for (let p = 0; p < frame.length; p++) frame[p] = ((p * 2654435761 + i * 40503) >>> 24) & 0xff;
          encoder.submit(frame);
        }
        await encoder.finish();
        await encoder.stop();
        return readFile(path);
      };
      const first = await encode('a.mp4');
      expect((await encode('b.mp4')).equals(first)).toBe(true);
      expect(/options: [^\0]* threads=2 /.test(first.toString('latin1'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses frames of the wrong size and use before start', async () => {
    const encoder = new Mp4Encoder({ path: '/tmp/unused.mp4', width: 64, height: 48, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
    expect(() => encoder.submit(Buffer.alloc(64 * 48 * 3))).toThrow(/not started/);
    await expect(encoder.finish()).rejects.toThrow(/not started/);
  });
});
