// Frames per second of the agent's vision pipeline (capture → motion detector → tracker → counting) on a
// generated 640×480 clip, against decoding the same clip with ffmpeg alone in the same run.
//   pnpm bench:agent [-- --seconds 20 --fps 30]
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { FfmpegCapture } from '../src/capture/capture.ts';
import { resolveFfmpeg } from '../src/capture/ffmpeg-binary.ts';
import { defaultZone } from '../src/config/config.ts';
import { EntranceCounter } from '../src/count/entrance-counter.ts';
import { MotionDetector } from '../src/detect/motion.ts';
import { BeeTracker } from '../src/track/tracker.ts';

const run = promisify(execFile);
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, fps: { type: 'string', default: '30' } } });
const seconds = Number(values.seconds);
const fps = Number(values.fps);
const width = 640;
const height = 480;

/** Eight dark bees crossing a textured board in different directions and speeds. */
function scene(): string {
  const bees = [
    [100, 'y', -40, 90], [220, 'y', 520, -120], [340, 'y', -40, 150], [460, 'y', 520, -70],
    [560, 'y', -40, 200], [150, 'x', -40, 160], [300, 'x', 680, -110], [400, 'x', -40, 60],
  ] as const;
  let graph = `color=c=0xb4a078:s=${width}x${height}:r=${fps},format=yuv420p,noise=alls=10:allf=t[bg];`;
  bees.forEach((_, i) => (graph += `color=c=0x302010:s=16x40:r=${fps}[b${i}];`));
  let last = 'bg';
  bees.forEach(([fixed, axis, start, speed], i) => {
    // Each bee loops across the frame every few seconds so the scene stays busy for the whole clip.
    const span = axis === 'y' ? height + 80 : width + 80;
    const moving = `mod(${start}+t*${speed}+${span * 10},${span})-40`;
    const [x, y] = axis === 'y' ? [String(fixed), moving] : [moving, String(fixed)];
    graph += `[${last}][b${i}]overlay=x='${x}':y='${y}':shortest=1[s${i}];`;
    last = `s${i}`;
  });
  return graph.replace(/\[s7\];$/, '');
}

async function timeIt<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

async function main(): Promise<void> {
  const ffmpeg = resolveFfmpeg();
  const dir = mkdtempSync(join(tmpdir(), 'hivegate-bench-'));
  try {
    const clip = join(dir, 'bench.mp4');
    await run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', scene(), '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-g', String(fps * 2), '-pix_fmt', 'yuv420p', clip]);
    const frames = seconds * fps;

    // Baseline: ffmpeg decoding, resampling and converting to gray, writing nowhere.
    const decode = await timeIt(() => run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-i', clip, '-vf', `fps=${fps},scale=${width}:${height},format=gray`, '-f', 'null', '-']));

    // Capture alone: the same decode plus the pipe into Node and frame splitting.
    const captureOnly = await timeIt(async () => {
      const capture = new FfmpegCapture({ source: clip, width, height, fps, pixelFormat: 'gray' });
      await capture.start();
      let n = 0;
      for await (const _frame of capture) n++;
      return n;
    });

    // The whole vision pipeline.
    const detector = new MotionDetector({ beeLengthPx: 40 });
    const tracker = new BeeTracker();
    const counter = new EntranceCounter({ counting: { zone: defaultZone(width, height), fps }, hiveId: 'bench', boxId: 'bench', frameWidth: width, frameHeight: height });
    let detectMs = 0;
    let crossings = 0;
    let tracksReported = 0;
    const full = await timeIt(async () => {
      const capture = new FfmpegCapture({ source: clip, width, height, fps, pixelFormat: 'gray', startTime: new Date('2026-05-01T10:00:00Z') });
      await capture.start();
      let n = 0;
      for await (const frame of capture) {
        const t0 = performance.now();
        const detections = await detector.detect(frame);
        detectMs += performance.now() - t0;
        const update = tracker.update(frame.timestampMs, detections);
        tracksReported += update.tracks.length;
        crossings += counter.onFrame(frame.timestampMs, update.tracks, update.ended).crossings.length;
        n++;
      }
      crossings += counter.flush(tracker.flush()).crossings.length;
      return n;
    });

    const fpsOf = (n: number, ms: number) => (n / ms) * 1000;
    const decodeFps = fpsOf(frames, decode.ms);
    const captureFps = fpsOf(captureOnly.value, captureOnly.ms);
    const fullFps = fpsOf(full.value, full.ms);
    const peakRssMb = process.resourceUsage().maxRSS / 1024;
    console.log(`clip: ${width}x${height} @ ${fps} fps, ${seconds} s (${frames} frames), 8 moving bees`);
    console.log(`ffmpeg decode only:              ${decodeFps.toFixed(1)} frames/s`);
    console.log(`capture (ffmpeg → Node frames):  ${captureFps.toFixed(1)} frames/s`);
    console.log(`full pipeline:                   ${fullFps.toFixed(1)} frames/s (motion detector ${(detectMs / full.value).toFixed(2)} ms/frame)`);
    console.log(`ratio full pipeline / decode:    ${(fullFps / decodeFps).toFixed(2)}`);
    console.log(`ratio full pipeline / capture:   ${(fullFps / captureFps).toFixed(2)}`);
    console.log(`tracks reported per frame: ${(tracksReported / full.value).toFixed(2)}, crossings decided: ${crossings}`);
    console.log(`peak RSS (agent process): ${peakRssMb.toFixed(0)} MB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
