import { describe, expect, it } from 'vitest';
import { buildFfmpegArgs, isLive, parseSource } from './source.ts';
import { FrameSplitter } from './frame-splitter.ts';
import { findOnPath } from './ffmpeg-binary.ts';

const size = { width: 640, height: 480, fps: 15 };

describe('parseSource', () => {
  it('recognises files, URLs, V4L2 devices and the Pi camera', () => {
    expect(parseSource('/data/clip.mp4', size)).toEqual({ kind: 'file', path: '/data/clip.mp4' });
    expect(parseSource('file:///data/my%20clip.mp4', size)).toEqual({ kind: 'file', path: '/data/my clip.mp4' });
    expect(parseSource('rtsp://cam.local/stream', size)).toMatchObject({ kind: 'url', protocol: 'rtsp' });
    expect(parseSource('http://127.0.0.1:8080/live.ts', size)).toMatchObject({ kind: 'url', protocol: 'http' });
    expect(parseSource('/dev/video0', size)).toEqual({ kind: 'v4l2', device: '/dev/video0' });
    const camera = parseSource('rpicam:--hflip --vflip', size);
    expect(camera.kind).toBe('rpicam');
    if (camera.kind === 'rpicam') {
      expect(camera.command[0]).toBe('rpicam-vid');
      expect(camera.command).toEqual(expect.arrayContaining(['--width', '640', '--height', '480', '--framerate', '15', '--hflip', '--vflip']));
      expect(camera.command.slice(-2)).toEqual(['-o', '-']);
    }
  });
  it('treats only files as replayable', () => {
    expect(isLive(parseSource('clip.mp4', size))).toBe(false);
    expect(isLive(parseSource('rtsp://x/y', size))).toBe(true);
    expect(isLive(parseSource('rpicam', size))).toBe(true);
  });
  it('names what is wrong with a bad source', () => {
    expect(() => parseSource('  ', size)).toThrow('source must not be empty');
    expect(() => parseSource('gopher://old/thing', size)).toThrow(/gopher:\/\/ is not supported/);
  });
});

describe('buildFfmpegArgs', () => {
  const out = { width: 320, height: 240, fps: 10, pixelFormat: 'gray' as const };
  it('decodes a file as fast as possible unless realtime pacing is asked for', () => {
    const fast = buildFfmpegArgs({ kind: 'file', path: 'a.mp4' }, out);
    expect(fast).not.toContain('-re');
    expect(fast.slice(-7)).toEqual(['-f', 'rawvideo', '-pix_fmt', 'gray', '-flush_packets', '1', 'pipe:1']);
    expect(fast).toContain('fps=10,scale=320:240:flags=bilinear,format=gray');
    expect(buildFfmpegArgs({ kind: 'file', path: 'a.mp4' }, out, { realtime: true })).toContain('-re');
  });
  it('sets transport and I/O timeouts on network sources', () => {
    const rtsp = buildFfmpegArgs({ kind: 'url', url: 'rtsp://h/s', protocol: 'rtsp' }, out, { ioTimeoutSeconds: 3 });
    expect(rtsp.join(' ')).toContain('-rtsp_transport tcp -timeout 3000000 -i rtsp://h/s');
    const http = buildFfmpegArgs({ kind: 'url', url: 'http://h/s', protocol: 'http' }, out, { ioTimeoutSeconds: 3 });
    expect(http.join(' ')).toContain('-rw_timeout 3000000 -i http://h/s');
  });
  it('reads a live source at up to the configured rate but no faster than it sends, and has ffmpeg name the rate', () => {
    const args = buildFfmpegArgs({ kind: 'url', url: 'http://h/s', protocol: 'http' }, out);
    expect(args).toContain("fps='if(gt(source_fps,0),min(source_fps,10),10)',scale=320:240:flags=bilinear,format=gray");
    expect(args.join(' ')).toContain('-loglevel level+info');
    expect(buildFfmpegArgs({ kind: 'file', path: 'a.mp4' }, out).join(' ')).toContain('-loglevel error');
  });
  it('reads the camera pipe as raw H.264 at the configured rate', () => {
    const args = buildFfmpegArgs({ kind: 'rpicam', command: ['rpicam-vid'] }, out).join(' ');
    expect(args).toContain('-f h264 -framerate 10 -i pipe:0');
    expect(args).not.toContain('-nostdin');
  });
});

describe('FrameSplitter', () => {
  it('reassembles frames across arbitrary chunk boundaries', () => {
    const splitter = new FrameSplitter(4);
    expect(splitter.push(Uint8Array.of(1, 2, 3))).toEqual([]);
    expect(splitter.pendingBytes).toBe(3);
    const frames = splitter.push(Uint8Array.of(4, 5, 6, 7, 8, 9, 10));
    expect(frames.map((f) => Array.from(f))).toEqual([[1, 2, 3, 4], [5, 6, 7, 8]]);
    expect(splitter.pendingBytes).toBe(2);
  });
  it('gives each frame its own buffer', () => {
    const splitter = new FrameSplitter(2);
    const [a, b] = splitter.push(Uint8Array.of(1, 2, 3, 4));
    expect(a).not.toBe(b);
    expect(Array.from(a!)).toEqual([1, 2]);
  });
  it('rejects a non-positive frame size', () => {
    expect(() => new FrameSplitter(0)).toThrow(/frame size/);
  });
});

describe('findOnPath', () => {
  it('finds an executable in a PATH list and skips empty entries', () => {
    expect(findOnPath('sh', ':/nonexistent:/bin')).toBe('/bin/sh');
    expect(findOnPath('definitely-not-a-binary', '/bin')).toBeUndefined();
  });
});
