import { describe, expect, it } from 'vitest';
import { exactRate, FfmpegLog } from './ffmpeg-log.ts';

/** What ffmpeg 5.1 printed reading a 25 fps camera over HTTP at up to 30 fps (`-loglevel level+info`). */
const HEADER = `[info] Input #0, mpegts, from 'http://127.0.0.1:44161/camera.ts':
[info]   Duration: N/A, start: 0.000000, bitrate: N/A
[info]   Program 1 
[info]     Metadata:
[info]       service_name    : Service01
[info]   Stream #0:0[0x100]: Video: h264 (Constrained Baseline) ([27][0][0][0] / 0x001B), yuv420p(progressive), 320x240 [SAR 1:1 DAR 4:3], 30 fps, 30 tbr, 90k tbn
[info] Stream mapping:
[info]   Stream #0:0 -> #0:0 (h264 (native) -> rawvideo (native))
[info] Output #0, rawvideo, to 'pipe:1':
[info]   Metadata:
[info]     encoder         : Lavf59.27.100
[info]   Stream #0:0: Video: rawvideo (Y800 / 0x30303859), gray(pc, progressive), 320x240 [SAR 1:1 DAR 4:3], q=2-31, 15360 kb/s, 25 fps, 25 tbn`;

function readAll(log: FfmpegLog, text: string): string[] {
  return text.split('\n').flatMap((line) => log.read(line) ?? []);
}

describe('FfmpegLog', () => {
  it('takes the rate ffmpeg writes from the output stream, not the input', () => {
    const log = new FfmpegLog();
    expect(readAll(log, HEADER)).toEqual([]);
    expect(log.outputFps).toBe(25);
  });

  it('keeps errors (with the part of ffmpeg that raised them) and leaves out warnings and the header', () => {
    const log = new FfmpegLog();
    const kept = readAll(
      log,
      [
        '[warning] Past duration 0.999992 too large',
        '[tcp @ 0x5610afed0200] [error] Connection to tcp://127.0.0.1:1 failed: Connection refused',
        '[h264 @ 0x55d0] [warning] concealing 12 DC errors',
        '[fatal] Invalid argument',
        'a line from another program',
        '[error] ',
      ].join('\n'),
    );
    // The speaker's address (0x5610…) changes at every run: each reconnect's message read as a new failure.
    expect(kept).toEqual(['tcp: Connection to tcp://127.0.0.1:1 failed: Connection refused', 'Invalid argument', 'a line from another program']);
    expect(log.outputFps).toBeUndefined();
  });

  it('reads fractional and thousands rates, and the first output stream only', () => {
    const log = new FfmpegLog();
    readAll(log, "[info] Output #0, rawvideo, to 'pipe:1':\n[info]   Stream #0:0: Video: rawvideo, gray, 8x8, q=2-31, 29.97 fps, 29.97 tbn\n[info]   Stream #0:1: Video: rawvideo, gray, 8x8, 5 fps");
    expect(log.outputFps).toBeCloseTo(30000 / 1001, 10);
    const fast = new FfmpegLog();
    readAll(fast, "[info] Output #0, rawvideo, to 'pipe:1':\n[info]   Stream #0:0: Video: rawvideo, gray, 8x8, 1k fps, 1k tbn");
    expect(fast.outputFps).toBe(1000);
  });

  it('ignores a rate outside the output header', () => {
    const log = new FfmpegLog();
    readAll(log, HEADER.split('\n').slice(0, 7).join('\n'));
    expect(log.outputFps).toBeUndefined();
  });
});

describe('exactRate', () => {
  it('takes the two-decimal rates ffmpeg prints for the NTSC family as n × 1000/1001, and others as printed', () => {
    expect(exactRate(29.97)).toBeCloseTo(30000 / 1001, 12);
    expect(exactRate(23.98)).toBeCloseTo(24000 / 1001, 12);
    expect(exactRate(59.94)).toBeCloseTo(60000 / 1001, 12);
    expect(exactRate(12.5)).toBe(12.5);
    expect(exactRate(25)).toBe(25);
    expect(exactRate(7.5)).toBe(7.5);
  });
});
