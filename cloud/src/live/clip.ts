import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../storage/index.ts';

/** A finished live session's recording, offered to the stored-video path. */
export interface LiveClip {
  sessionId: string;
  ownerId: number;
  boxId: string;
  /** When the stream became playable (or the session began, if it never did). */
  startedAt: Date;
  endedAt: Date;
  segmentCount: number;
  /** Assembles the clip (an MP4) on demand; the caller consumes or destroys the stream. */
  open(): Promise<Readable>;
}

/**
 * The hook through which a live session is handed back to stored video (the `uploadGateVideo` path). It returns the
 * stored stream's id, recorded as the session's handoffStreamId. Sessions with recordingMode "clip" are handed
 * over only when a hook is connected in app.ts; without one they are not marked clipHandoffEnabled.
 */
export type LiveClipHandoff = (clip: LiveClip) => Promise<{ streamId: string } | null>;

/**
 * Joins stored HLS segments (MPEG-TS, or fMP4 with its init segment first) into one MP4 without re-encoding:
 * the segments are byte-concatenated into ffmpeg's input, which remuxes them into a file (MP4 needs a seekable
 * output for its index), and the returned stream deletes the file once closed.
 */
export async function assembleClipFromSegments(blobs: BlobStore, keys: readonly string[], ffmpegPath: string): Promise<Readable> {
  if (keys.length === 0) throw new Error('no segments to assemble');
  const dir = await mkdtemp(path.join(tmpdir(), 'hivegate-clip-'));
  const output = path.join(dir, 'clip.mp4');
  try {
    const child = spawn(ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-map', '0', '-c', 'copy', '-movflags', '+faststart', '-y', output], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    const exited = new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(code));
    });
    // ffmpeg may stop reading early on bad input; its exit code tells, not the write error.
    child.stdin.on('error', () => undefined);
    let gone = false;
    void exited.finally(() => (gone = true)).catch(() => undefined);
    for (const key of keys) {
      if (gone) break;
      const blob = await blobs.get(key);
      if (!blob) continue;
      for await (const chunk of blob.body) {
        if (gone) break;
        if (!child.stdin.write(chunk)) await Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited.catch(() => undefined)]);
      }
      blob.body.destroy();
    }
    child.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`ffmpeg could not assemble the clip (exit ${code}): ${stderr.trim()}`);
    const stream = createReadStream(output);
    stream.once('close', () => void rm(dir, { recursive: true, force: true }));
    return stream;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
