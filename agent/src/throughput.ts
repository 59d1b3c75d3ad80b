import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Crossing } from '@hivegate/shared';
import { createCapture, createVision, followPictureRate } from './agent.ts';
import { resolveFfmpeg } from './capture/ffmpeg-binary.ts';
import { RepeatedFrameFilter } from './capture/repeated-frames.ts';
import { buildFfmpegArgs, isLive, parseSource } from './capture/source.ts';
import { ConfigError, type AgentConfig } from './config/config.ts';

const run = promisify(execFile);

/** One run of the configured pipeline over a file, as fast as it goes, with nothing queued or sent. */
export interface PipelineThroughput {
  /** Frames the capture delivered (what the decode baseline is asked for). */
  framesRead: number;
  /** Frames that reached the detector (repeats skipped, as the agent skips them). */
  frames: number;
  ms: number;
  /** Time in the detector, all frames together. */
  detectMs: number;
  /** Frames on which the motion gate skipped inference. */
  inferenceSkipped: number;
  beesIn: number;
  beesOut: number;
  /** What the detector says it is (models, slot pass, gate). */
  detector: string;
  /** Peak resident memory of this process so far, bytes. */
  peakRssBytes: number;
}

/** The clip's path; a camera or stream, which delivers at its own pace, cannot be measured as fast as it goes. */
export function recordedFile(config: AgentConfig): string {
  const spec = parseSource(config.source.url, config.source);
  if (isLive(spec) || spec.kind !== 'file') throw new ConfigError(`source must be a video file to measure throughput, got ${config.source.url} (record a clip from the camera first)`);
  return spec.path;
}

/**
 * Decodes the file's first `frames` frames as the agent's capture does (same rate, size and pixel format) into
 * nothing: the floor that a pipeline's frames per second are compared with, on the same machine in the same minute.
 */
export async function measureDecode(config: AgentConfig, frames: number): Promise<{ frames: number; ms: number }> {
  const path = recordedFile(config);
  const { width, height, fps, pixelFormat } = config.source;
  const args = buildFfmpegArgs({ kind: 'file', path }, { width, height, fps, pixelFormat });
  // The capture's arguments up to its raw output, then a null one: decoding, resampling, scaling and conversion stay.
  const output = args.lastIndexOf('-f');
  const start = performance.now();
  await run(resolveFfmpeg(), [...args.slice(0, output), '-frames:v', String(frames), '-f', 'null', '-'], { maxBuffer: 1 << 20 });
  return { frames, ms: performance.now() - start };
}

/** The agent's capture, detector, tracker and counter over the file's first `maxFrames` frames (repeats included), timed. */
export async function measurePipeline(config: AgentConfig, maxFrames = Infinity): Promise<PipelineThroughput> {
  recordedFile(config);
  let failure: string | undefined;
  const capture = createCapture({ ...config, source: { ...config.source, realtime: false } }, (status) => {
    if (status.state === 'failed') failure = status.message;
  });
  const { detector, tracker, counter } = await createVision(config);
  const repeats = new RepeatedFrameFilter();
  let framesRead = 0;
  let frames = 0;
  let detectMs = 0;
  let beesIn = 0;
  let beesOut = 0;
  const tally = (crossings: readonly Crossing[]) => {
    for (const crossing of crossings) {
      if (crossing.direction === 'in') beesIn++;
      else beesOut++;
    }
  };
  const start = performance.now();
  let ms = 0;
  try {
    await capture.start();
    // As the agent: a clip slower than source.fps has its repeats skipped, and the frame-counted settings follow its rate.
    followPictureRate(config, Math.min(capture.sourceFps ?? config.source.fps, config.source.fps), { tracker, counter });
    for await (const frame of capture) {
      if (!repeats.isRepeat(frame)) {
        const t0 = performance.now();
        const detections = await detector.detect(frame);
        detectMs += performance.now() - t0;
        const update = tracker.update(frame.timestampMs, detections, detector.lastLooked?.());
        tally(counter.onFrame(frame.timestampMs, update.tracks, update.ended).crossings);
        frames++;
      }
      if (++framesRead >= maxFrames) break;
    }
    tally(counter.flush(tracker.flush()).crossings);
    ms = performance.now() - start;
  } finally {
    await capture.stop();
    await detector.release?.();
  }
  if (capture.state === 'failed') throw new Error(`could not read ${config.source.url}${failure ? `: ${failure}` : ''}`);
  if (frames === 0) throw new Error(`${config.source.url} gave no frames`);
  return {
    framesRead,
    frames,
    ms,
    detectMs,
    inferenceSkipped: detector.skippedFrames ?? 0,
    beesIn,
    beesOut,
    detector: detector.describe(),
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

/** What a pipeline's frames per second mean for a live camera read at `cameraFps`. */
export function cameraVerdict(pipelineFps: number, cameraFps: number): string {
  const realTime = pipelineFps / cameraFps;
  if (realTime >= 1) return `keeps up with a ${cameraFps} fps camera, ${realTime.toFixed(1)}× real time (busy ${(100 / realTime).toFixed(0)} % of each frame's time)`;
  // A live capture drops the oldest queued frames when behind (status counts them), so the share lost follows.
  return (
    `falls behind a ${cameraFps} fps camera (${realTime.toFixed(2)}× real time): a live camera would lose about ${(100 * (1 - realTime)).toFixed(0)} % of its frames, ` +
    'and counting goes on with the rest (agent/README.md, "How fast is this machine?")'
  );
}
