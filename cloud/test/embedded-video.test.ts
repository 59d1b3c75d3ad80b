import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { resolveBinary } from '../src/video/ffmpeg.ts';
import { FFMPEG_WAIT_MS, waitFor } from './helper.ts';

// The same job queue, transcode and heatmap SQL on the embedded database (no DATABASE_URL).
const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-embedded-video-'));
let app: FastifyInstance;

beforeAll(async () => {
  const config = defaultConfig({ dataDir, storage: { kind: 'fs', dir: path.join(dataDir, 'blobs') }, logLevel: 'silent' });
  config.jobs = { workers: 1, leaseSeconds: 30, pollSeconds: 1 };
  config.heatmaps = { grid: { cols: 64, rows: 48 }, renderDebounceSeconds: 0.1 };
  app = await buildApp(config, { logger: false });
  expect(app.ctx.db.kind).toBe('embedded');
}, 60_000);

afterAll(async () => {
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('video and heatmaps on the embedded database', () => {
  it('adds trajectories, renders the day and transcodes a video to READY', async () => {
    const user = await app.ctx.users.create('embedded-bees');
    const { token } = await app.ctx.tokens.issue({ userId: user.id, name: 't', scopes: ['*'], boxIds: null });
    const body = { boxId: 1, timestamp: '2026-05-01T10:00:00', frameDimensions: { width: 640, height: 480 }, trackHistory: { a: [[0, 0], [639, 479]] }, batchId: 'e1' };
    for (let i = 0; i < 2; i += 1) {
      const response = await app.inject({ method: 'POST', url: '/api/entrance-heatmaps/trajectories', headers: { authorization: `Bearer ${token}` }, payload: body });
      expect(response.statusCode).toBe(200);
    }
    const day = await waitFor(async () => {
      const d = await app.ctx.heatmaps.get(user.id, '1', '2026-05-01');
      return d?.renderedAt ? d : null;
    }, 'the render', FFMPEG_WAIT_MS);
    expect(day).toMatchObject({ trajectoryCount: 1, pointCount: 2, maxCount: 1, cols: 64, rows: 48 });
    expect(await app.ctx.blobs.head(day.imageKey!)).not.toBeNull();

    const clip = path.join(dataDir, 'clip.mp4');
    execFileSync(resolveBinary('ffmpeg', undefined), ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clip]);
    const video = await app.ctx.videoService.upload({
      ownerId: user.id,
      boxId: '1',
      file: { filename: 'clip.mp4', mimetype: 'video/mp4', encoding: '7bit', createReadStream: () => createReadStream(clip) },
    });
    const ready = await waitFor(async () => {
      const v = await app.ctx.videos.get(user.id, video.id);
      if (v?.state === 'FAILED') throw new Error(`transcode failed: ${v.failureReason}`);
      return v?.state === 'READY' ? v : null;
    }, 'READY', FFMPEG_WAIT_MS);
    expect(ready.segmentCount).toBe(2);
    expect(ready.durationSeconds).toBeCloseTo(3, 1);
  });
});
