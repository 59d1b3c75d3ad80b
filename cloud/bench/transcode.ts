/**
 * Transcode speed as a multiple of real time: the HLS rendition command the transcode job runs, and the whole job
 * (download from the blob store, transcode, measure every segment, poster, upload, READY) through a real upload,
 * against decoding the same clip with ffmpeg alone (`-f null`), all measured in this run on this machine.
 *   pnpm bench:transcode [--seconds 30] [--size 640x480] [--fps 30]
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.ts';
import { defaultConfig } from '../src/config.ts';
import { resolveBinary } from '../src/video/ffmpeg.ts';
import { hlsTranscodeArgs } from '../src/video/video-service.ts';
import { createTestDatabase } from '../test/helper.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, size: { type: 'string', default: '640x480' }, fps: { type: 'string', default: '30' } } });
const SECONDS = Number(values.seconds);
const FFMPEG = resolveBinary('ffmpeg', process.env.FFMPEG_PATH);

function timed(fn: () => void): number {
  const started = performance.now();
  fn();
  return (performance.now() - started) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), 'hivegate-bench-transcode-'));
  const database = await createTestDatabase();
  try {
    // A camera-like source: moving test pattern with noise (so the encoder has real work), a tone, H.264 in MP4.
    const clip = path.join(work, 'entrance.mp4');
    execFileSync(FFMPEG, [
      '-v', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${values.size}:rate=${values.fps},noise=alls=12:allf=t`,
      '-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=44100', '-t', String(SECONDS),
      '-c:v', 'libx264', '-preset', 'fast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clip,
    ]);

    const decode: number[] = [];
    const transcode: number[] = [];
    for (let run = 0; run < 3; run += 1) {
      decode.push(timed(() => execFileSync(FFMPEG, ['-v', 'error', '-i', clip, '-f', 'null', '-'])));
      const out = path.join(work, `hls-${run}`);
      mkdirSync(out);
      transcode.push(timed(() => execFileSync(FFMPEG, ['-v', 'error', '-nostdin', '-y', ...hlsTranscodeArgs(clip, out)])));
    }

    // The whole job, through the service: upload, then wait for READY.
    const config = defaultConfig({ databaseUrl: database.url, dataDir: path.join(work, 'data'), storage: { kind: 'fs', dir: path.join(work, 'data', 'blobs') }, logLevel: 'silent' });
    config.jobs = { workers: 1, leaseSeconds: 60, pollSeconds: 1 };
    const app = await buildApp(config, { logger: false });
    let jobSeconds: number;
    try {
      const user = await app.ctx.users.create('bench');
      const uploaded = await app.ctx.videoService.upload({
        ownerId: user.id,
        boxId: 'bench',
        file: { filename: 'entrance.mp4', mimetype: 'video/mp4', encoding: '7bit', createReadStream: () => createReadStream(clip) },
      });
      const started = performance.now();
      for (;;) {
        const video = await app.ctx.videos.get(user.id, uploaded.id);
        if (video?.state === 'READY') break;
        if (video?.state === 'FAILED') throw new Error(`transcode failed: ${video.failureReason}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      jobSeconds = (performance.now() - started) / 1000;
    } finally {
      await app.close();
    }

    const decodeX = SECONDS / median(decode);
    const transcodeX = SECONDS / median(transcode);
    const jobX = SECONDS / jobSeconds;
    console.log(`transcode: ${SECONDS} s clip, ${values.size} @ ${values.fps} fps H.264 + AAC, ffmpeg ${execFileSync(FFMPEG, ['-version']).toString().split(' ')[2]}; medians of 3 runs`);
    console.log(`baseline (decode only, -f null):           ${decodeX.toFixed(1)}× real time`);
    console.log(`HLS rendition (libx264 veryfast, 2 s segs): ${transcodeX.toFixed(1)}× real time  (ratio to decode ${(transcodeX / decodeX).toFixed(3)})`);
    console.log(`whole job (fetch, transcode, measure segments, poster, store): ${jobX.toFixed(1)}× real time  (ratio to decode ${(jobX / decodeX).toFixed(3)})`);
  } finally {
    await database.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
