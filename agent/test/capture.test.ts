import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { FileCamera } from '@hivegate/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FfmpegCapture, type CaptureStatus } from '../src/capture/capture.ts';
import type { Frame } from '../src/capture/frame.ts';
import { resolveFfmpeg } from '../src/capture/ffmpeg-binary.ts';
import { resampledFrameCount, sourceFrameAt } from '../src/capture/resample.ts';
import { generateClip, startNetworkCamera, tempDir } from './helpers/media.ts';

const dir = tempDir('capture');
let clipWithTime: string;
let clipWithoutTime: string;
let streamFile: string;
/** 61 frames at 30 fps, frame n a flat grey of level 16 + 3n: which clip frame a captured frame shows is readable. */
let rampClip: string;

beforeAll(async () => {
  clipWithTime = await generateClip(join(dir.path, 'with-time.mp4'), { seconds: 2, fps: 10, width: 320, height: 240, creationTime: '2026-05-01T10:00:00.000000Z' });
  clipWithoutTime = await generateClip(join(dir.path, 'plain.mp4'), { seconds: 1, fps: 10, width: 320, height: 240 });
  streamFile = await generateClip(join(dir.path, 'stream.ts'), { seconds: 4, fps: 10, width: 320, height: 240, container: 'mpegts' });
  rampClip = await generateClip(join(dir.path, 'ramp.mp4'), { seconds: 61 / 30, fps: 30, width: 32, height: 32, lavfi: "color=c=black:s=32x32:r=30,geq=lum='16+3*N':cb=128:cr=128" });
}, 60_000);
afterAll(() => dir.cleanup());

async function collect(capture: FfmpegCapture, limit = Infinity): Promise<Frame[]> {
  const frames: Frame[] = [];
  for await (const frame of capture) {
    frames.push(frame);
    if (frames.length >= limit) break;
  }
  return frames;
}

describe('file capture', () => {
  it('delivers every frame at the configured size with timestamps from creation_time + pts', async () => {
    const statuses: string[] = [];
    const capture = new FfmpegCapture({ source: clipWithTime, width: 160, height: 120, fps: 10, pixelFormat: 'gray', onStatus: (s) => statuses.push(s.state) });
    await capture.start();
    const frames = await collect(capture);
    expect(frames).toHaveLength(20);
    expect(frames[0]!.data).toHaveLength(160 * 120);
    expect(frames[0]!.timestampMs).toBe(Date.parse('2026-05-01T10:00:00Z'));
    expect(frames[19]!.timestampMs - frames[0]!.timestampMs).toBeCloseTo(1900, 6);
    expect(frames.map((f) => f.index)).toEqual([...Array(20).keys()]);
    expect(capture.sourceFps).toBe(10);
    // testsrc moves between frames: consecutive pictures differ, and are not blank.
    expect(Buffer.compare(frames[0]!.data, frames[5]!.data)).not.toBe(0);
    expect(new Set(frames[0]!.data).size).toBeGreaterThan(10);
    expect(statuses).toEqual(['starting', 'running', 'ended']);
  });

  it('falls back to --start-time when the file has no creation_time, and gives rgb24 frames', async () => {
    const capture = new FfmpegCapture({ source: clipWithoutTime, width: 64, height: 48, fps: 5, pixelFormat: 'rgb24', startTime: new Date('2026-01-02T03:04:05Z') });
    await capture.start();
    const frames = await collect(capture);
    expect(frames).toHaveLength(5);
    expect(frames[0]!.data).toHaveLength(64 * 48 * 3);
    expect(frames[0]!.timestampMs).toBe(Date.parse('2026-01-02T03:04:05Z'));
    expect(frames[1]!.timestampMs - frames[0]!.timestampMs).toBe(200);
  });

  it('reports a missing file as a failed status instead of throwing', async () => {
    const statuses: CaptureStatus[] = [];
    const capture = new FfmpegCapture({ source: join(dir.path, 'nope.mp4'), width: 64, height: 48, fps: 5, pixelFormat: 'gray', onStatus: (s) => statuses.push(s) });
    await capture.start();
    expect(await collect(capture)).toEqual([]);
    const last = statuses.at(-1)!;
    expect(last.state).toBe('failed');
    expect(last.message).toMatch(/nope\.mp4/);
  });

  it('waits for a slow consumer instead of dropping file frames', async () => {
    const capture = new FfmpegCapture({ source: clipWithTime, width: 160, height: 120, fps: 10, pixelFormat: 'gray', maxQueuedFrames: 2 });
    await capture.start();
    const frames: Frame[] = [];
    for await (const frame of capture) {
      frames.push(frame);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(frames).toHaveLength(20);
    expect(capture.framesDropped).toBe(0);
  });

  it('resamples a clip to the configured fps exactly as resample.ts predicts (drops and repeats)', async () => {
    const levels = async (fps: number) => {
      const capture = new FfmpegCapture({ source: rampClip, width: 32, height: 32, fps, pixelFormat: 'gray' });
      await capture.start();
      return (await collect(capture)).map((frame) => frame.data[16 * 32 + 16]!);
    };
    const clip = await levels(30);
    expect(clip).toHaveLength(61);
    expect(new Set(clip).size).toBe(61);
    for (const fps of [15, 25, 12, 40]) {
      const expected = Array.from({ length: resampledFrameCount(clip.length, 30, fps) }, (_, k) => clip[sourceFrameAt(k, 30, fps)]);
      expect({ fps, levels: await levels(fps) }).toEqual({ fps, levels: expected });
    }
  });

  it('stamps each frame read at another rate with the time of the clip frame it shows', async () => {
    const start = Date.parse('2026-06-01T12:00:00Z');
    const read = async (fps: number) => {
      const capture = new FfmpegCapture({ source: rampClip, width: 32, height: 32, fps, pixelFormat: 'gray', startTime: new Date(start) });
      await capture.start();
      return (await collect(capture)).map((frame) => ({ level: frame.data[16 * 32 + 16]!, offsetMs: frame.timestampMs - start }));
    };
    // Every clip frame has its own level: a picture's level says which clip frame n it is, shown at n / 30 s.
    const clipLevels = (await read(30)).map((frame) => frame.level);
    for (const fps of [25, 40, 12]) {
      const frames = await read(fps);
      const shownAt = frames.map((frame) => (clipLevels.indexOf(frame.level) * 1000) / 30);
      expect({ fps, offsets: frames.map((frame) => frame.offsetMs) }).toEqual({ fps, offsets: shownAt.map((t) => expect.closeTo(t, 2)) });
    }
  });

  it('names FFMPEG_PATH when it points nowhere', () => {
    expect(() => resolveFfmpeg({ FFMPEG_PATH: '/nonexistent/ffmpeg' })).toThrow(/FFMPEG_PATH points to \/nonexistent\/ffmpeg/);
    expect(() => resolveFfmpeg({ PATH: '/nonexistent' })).toThrow(/ffmpeg not found/);
  });
});

describe('live capture', () => {
  let server: Server;
  let requests = 0;
  let url = '';

  beforeAll(async () => {
    const bytes = readFileSync(streamFile);
    server = createServer((req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'video/mp2t' });
      if (requests === 1) {
        // The first connection breaks after a third of the stream, the way a camera on flaky Wi-Fi does.
        res.write(bytes.subarray(0, Math.floor(bytes.length / 3)), () => setTimeout(() => res.socket?.destroy(), 50));
      } else if (requests === 2) {
        res.end(); // comes back empty once, then recovers
      } else {
        res.end(bytes);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/live.ts`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reconnects with backoff when an HTTP source drops and keeps delivering frames', async () => {
    const statuses: CaptureStatus[] = [];
    const capture = new FfmpegCapture({
      source: url, width: 80, height: 60, fps: 10, pixelFormat: 'gray', maxQueuedFrames: 1000,
      reconnect: { initialMs: 100, maxMs: 400 }, onStatus: (s) => statuses.push(s),
    });
    await capture.start();
    const frames = await collect(capture, 45);
    await capture.stop();
    expect(frames).toHaveLength(45);
    expect(requests).toBeGreaterThanOrEqual(3);
    const reconnecting = statuses.filter((s) => s.state === 'reconnecting');
    expect(reconnecting.length).toBeGreaterThanOrEqual(2);
    expect(reconnecting[0]!.attempt).toBe(1);
    expect(reconnecting[1]!.attempt).toBe(2); // the empty answer does not count as recovery
    expect(reconnecting[0]!.retryInMs).toBeLessThanOrEqual(100);
    // A stream that ended was logged as "ffmpeg exited with code 0".
    expect(reconnecting[0]!.message).toMatch(/^source lost: the stream ended/);
    expect(statuses.filter((s) => s.state === 'running').length).toBeGreaterThanOrEqual(2);
    expect(statuses.at(-1)!.state).toBe('stopped');
    // Live frames carry the wall clock (of when they were taken, see below), in order.
    const times = frames.map((f) => f.timestampMs);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(Math.abs(times.at(-1)! - Date.now())).toBeLessThan(10_000);
  }, 30_000);

  it('reads a camera command piped into ffmpeg (the Pi camera is replaced by ffmpeg writing H.264)', async () => {
    // rpicam-vid cannot run without a Pi camera; an ffmpeg producing the same raw H.264 stream stands in for it.
    const fakeCamera = ['ffmpeg', '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'h264', '-'];
    const statuses: string[] = [];
    const capture = new FfmpegCapture({ source: 'rpicam', width: 80, height: 60, fps: 10, pixelFormat: 'gray', cameraCommand: fakeCamera, onStatus: (s) => statuses.push(s.state) });
    await capture.start();
    const frames = await collect(capture, 8);
    expect(frames).toHaveLength(8);
    expect(frames[0]!.data).toHaveLength(80 * 60);
    expect(statuses).toContain('running');
    expect(statuses.at(-1)).toBe('stopped');
  }, 30_000);

  it('stamps live frames with the time the camera took them, not the time a busy agent read them', async () => {
    // Stands in for the Pi camera: a real-time 10 fps H.264 stream.
    const fakeCamera = ['ffmpeg', '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'h264', '-'];
    const capture = new FfmpegCapture({ source: 'rpicam', width: 80, height: 60, fps: 10, pixelFormat: 'gray', cameraCommand: fakeCamera });
    await capture.start();
    const received: { stamp: number; at: number }[] = [];
    for await (const frame of capture) {
      received.push({ stamp: frame.timestampMs, at: Date.now() });
      // Busy as inference is: the event loop blocked 0–60 ms after each frame, so frames wait to be read.
      const busyUntil = Date.now() + ((received.length * 37) % 61);
      while (Date.now() < busyUntil);
      if (received.length === 30) break;
    }
    await capture.stop();
    const steps = received.slice(1).map((r, i) => r.stamp - received[i]!.stamp);
    // Stamped on arrival, these steps stray 2–7 ms from 100 here (tried), more on a busier machine; by the stream's
    // clock they are its 100 ms, but for a few ms where the clock moves back to a frame that came through sooner
    // than all before it (a machine busy with other tests delays even those: once a 95 ms step in CI).
    const errors = steps.slice(10).map((step) => Math.abs(step - 100));
    const shown = `steps ${steps.map((step) => step.toFixed(1)).join(' ')}`;
    expect(errors.reduce((sum, e) => sum + e, 0) / errors.length, shown).toBeLessThan(2);
    expect([...errors].sort((a, b) => a - b)[Math.floor(errors.length / 2)], shown).toBeLessThan(0.5);
    for (const { stamp, at } of received) {
      expect(stamp).toBeLessThanOrEqual(at);
      expect(at - stamp).toBeLessThan(2000);
    }
  }, 30_000);

  it('reads a camera slower than source.fps at its own rate, each frame a new picture stamped on its clock', async () => {
    // 25 fps, frame n a flat grey of video level 16 + 2n (2n × 255/219 in the full-range gray frames): a repeated
    // picture or a skipped one shows in the levels.
    const clip = await generateClip(join(dir.path, 'ramp25.ts'), { seconds: 4, fps: 25, width: 32, height: 32, lavfi: "color=c=black:s=32x32:r=25,geq=lum='16+2*N':cb=128:cr=128", container: 'mpegts' });
    const camera = await startNetworkCamera(clip, { loop: false });
    const capture = new FfmpegCapture({ source: camera.url, width: 32, height: 32, fps: 30, pixelFormat: 'gray', maxQueuedFrames: 1000 });
    try {
      await capture.start();
      const frames = await collect(capture, 60);
      expect(capture.readFps).toBe(25);
      // Read at 30 through the fps filter, one picture in six came twice and every step was a 30 fps slot.
      const levelSteps = frames.slice(1).map((frame, i) => Math.round((frame.data[16 * 32 + 16]! - frames[i]!.data[16 * 32 + 16]!) / ((2 * 255) / 219)));
      expect(levelSteps.every((step) => step === 1), `level steps ${levelSteps.join(' ')}`).toBe(true);
      const stampErrors = frames.slice(11).map((frame, i) => Math.abs(frame.timestampMs - frames[i + 10]!.timestampMs - 40));
      expect([...stampErrors].sort((a, b) => a - b)[Math.floor(stampErrors.length / 2)]).toBeLessThan(0.5);
    } finally {
      await capture.stop();
      await camera.close();
    }
  }, 30_000);

  it("stamps the burst of frames a connection starts with a period apart, from the stream's clock", async () => {
    // A camera playing in real time; ffmpeg hands over what it decoded while probing the stream in one burst.
    const clip = await generateClip(join(dir.path, 'camera30.mp4'), { seconds: 4, fps: 30, width: 320, height: 240 });
    const camera = new FileCamera({ file: clip, loop: true });
    const capture = new FfmpegCapture({ source: await camera.start(), width: 80, height: 60, fps: 30, pixelFormat: 'gray', maxQueuedFrames: 1000 });
    try {
      await capture.start();
      const frames = await collect(capture, 30);
      const arrivals = frames.map((frame) => frame.arrivalMs!);
      expect(arrivals[5]! - arrivals[0]!, 'the first frames came in a burst').toBeLessThan(50);
      // Stamped as they came, the burst's frames were all within a few ms of each other.
      const steps = frames.slice(1, 12).map((frame, i) => frame.timestampMs - frames[i]!.timestampMs);
      steps.forEach((step) => expect(step).toBeCloseTo(1000 / 30, 0));
      frames.forEach((frame) => expect(frame.timestampMs).toBeLessThanOrEqual(frame.arrivalMs!));
    } finally {
      await capture.stop();
      await camera.stop();
    }
  }, 30_000);

  // Every service stop logged "capture reconnecting (attempt 1): source lost: ffmpeg exited with code 255" and set a
  // reconnect: the stop signal had reached ffmpeg too, before the agent stopped its capture.
  it('takes ffmpeg ending once a stop is coming as part of the stop, not as a lost source', async () => {
    const fakeCamera = ['ffmpeg', '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=10', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'h264', '-'];
    const statuses: CaptureStatus[] = [];
    const capture = new FfmpegCapture({ source: 'rpicam', width: 80, height: 60, fps: 10, pixelFormat: 'gray', cameraCommand: fakeCamera, reconnect: { initialMs: 20, maxMs: 40 }, onStatus: (s) => statuses.push(s) });
    await capture.start();
    const iterator = capture[Symbol.asyncIterator]();
    await iterator.next();
    capture.stopComing();
    const ffmpeg = (capture as unknown as { ffmpeg: ChildProcess }).ffmpeg;
    const closed = new Promise((resolve) => ffmpeg.once('close', resolve));
    ffmpeg.kill('SIGTERM');
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 100)); // longer than a reconnect would wait
    await capture.stop();
    expect(statuses.map((s) => s.state)).toEqual(['starting', 'running', 'stopped']);
  }, 30_000);

  it('keeps retrying a camera command that does not exist without crashing', async () => {
    const statuses: CaptureStatus[] = [];
    const capture = new FfmpegCapture({
      source: 'rpicam', width: 80, height: 60, fps: 10, pixelFormat: 'gray', cameraCommand: ['/nonexistent/rpicam-vid'],
      reconnect: { initialMs: 20, maxMs: 40 }, onStatus: (s) => statuses.push(s),
    });
    await capture.start();
    await new Promise((r) => setTimeout(r, 400));
    await capture.stop();
    const reconnecting = statuses.filter((s) => s.state === 'reconnecting');
    expect(reconnecting.length).toBeGreaterThanOrEqual(2);
    expect(reconnecting[0]!.message).toMatch(/camera command failed/);
  }, 10_000);
});
