import { describe, expect, it } from 'vitest';
import { Mp4Encoder } from '../src/io/encoder.ts';

describe('Mp4Encoder', () => {
  it('reports why ffmpeg failed instead of hanging', async () => {
    const encoder = new Mp4Encoder({ path: '/nonexistent-directory/clip.mp4', width: 64, height: 48, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
    encoder.start();
    // Frames are refused once ffmpeg is gone; finishing then explains why, in ffmpeg's words.
    await expect(
      (async () => {
        for (let i = 0; i < 200; i++) encoder.submit(await encoder.acquire());
      })(),
    ).rejects.toThrow(/ffmpeg/);
    await expect(encoder.finish()).rejects.toThrow(/ffmpeg exited with code 1: .*No such file or directory/s);
    await encoder.stop();
  }, 15_000);

  it('refuses frames of the wrong size and use before start', async () => {
    const encoder = new Mp4Encoder({ path: '/tmp/unused.mp4', width: 64, height: 48, fps: 10, crf: 23, creationTime: '2024-01-01T00:00:00.000Z' });
    expect(() => encoder.submit(Buffer.alloc(64 * 48 * 3))).toThrow(/not started/);
    await expect(encoder.finish()).rejects.toThrow(/not started/);
  });
});
