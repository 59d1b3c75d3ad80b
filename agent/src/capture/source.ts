import type { PixelFormat } from './frame.ts';

/**
 * Where frames come from. A file is replayed (its own clock); everything else is live (the wall clock at read
 * is the frame time, and a dropped connection is retried).
 */
export type SourceSpec =
  | { kind: 'file'; path: string }
  | { kind: 'url'; url: string; protocol: string }
  | { kind: 'v4l2'; device: string }
  | { kind: 'rpicam'; command: string[] };

const URL_PROTOCOLS = ['rtsp', 'rtsps', 'rtmp', 'http', 'https', 'udp', 'tcp', 'srt'];

/**
 * `rpicam` or `rpicam:<extra rpicam-vid args>` selects the Pi camera; `/dev/videoN` a V4L2 device;
 * `scheme://…` a network stream; anything else is a file path.
 */
export function parseSource(source: string, size: { width: number; height: number; fps: number }): SourceSpec {
  const trimmed = source.trim();
  if (trimmed === '') throw new Error('source must not be empty');
  if (trimmed === 'rpicam' || trimmed.startsWith('rpicam:')) {
    const extra = trimmed.slice('rpicam'.length).replace(/^:/, '').split(/\s+/).filter(Boolean);
    return { kind: 'rpicam', command: rpicamCommand(size, extra) };
  }
  if (/^\/dev\/video\d+$/.test(trimmed)) return { kind: 'v4l2', device: trimmed };
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme) {
    if (scheme === 'file') return { kind: 'file', path: decodeURIComponent(new URL(trimmed).pathname) };
    if (!URL_PROTOCOLS.includes(scheme)) throw new Error(`source protocol ${scheme}:// is not supported (use one of ${URL_PROTOCOLS.join(', ')})`);
    return { kind: 'url', url: trimmed, protocol: scheme };
  }
  return { kind: 'file', path: trimmed };
}

/** rpicam-vid writing an H.264 elementary stream to stdout, forever, without preview. */
export function rpicamCommand(size: { width: number; height: number; fps: number }, extra: string[] = []): string[] {
  return [
    'rpicam-vid', '-t', '0', '--nopreview', '--inline', '--codec', 'h264',
    '--width', String(size.width), '--height', String(size.height), '--framerate', String(size.fps),
    ...extra, '-o', '-',
  ];
}

export function isLive(spec: SourceSpec): boolean {
  return spec.kind !== 'file';
}

export interface OutputFormat {
  width: number;
  height: number;
  fps: number;
  pixelFormat: PixelFormat;
}

/** ffmpeg arguments that decode the source, resample to a constant fps, scale, convert, and write raw frames to stdout. */
export function buildFfmpegArgs(spec: SourceSpec, out: OutputFormat, options: { realtime?: boolean; ioTimeoutSeconds?: number } = {}): string[] {
  const timeoutMicros = String(Math.round((options.ioTimeoutSeconds ?? 10) * 1_000_000));
  const input: string[] = [];
  // Live: probe little so the first frame comes within about a second (the default probes ~5 MB).
  // `-fflags nobuffer` looks tempting but stalls the fps filter on ffmpeg 5.1.
  const lowLatency = ['-probesize', '32768', '-analyzeduration', '500000'];
  switch (spec.kind) {
    case 'file':
      if (options.realtime) input.push('-re');
      input.push('-i', spec.path);
      break;
    case 'url':
      input.push(...lowLatency);
      if (spec.protocol === 'rtsp' || spec.protocol === 'rtsps') input.push('-rtsp_transport', 'tcp', '-timeout', timeoutMicros);
      else if (spec.protocol === 'http' || spec.protocol === 'https') input.push('-rw_timeout', timeoutMicros);
      input.push('-i', spec.url);
      break;
    case 'v4l2':
      input.push(...lowLatency, '-f', 'v4l2', '-framerate', String(out.fps), '-i', spec.device);
      break;
    case 'rpicam':
      // A raw H.264 stream carries no timestamps: tell the demuxer the camera's rate.
      input.push(...lowLatency, '-f', 'h264', '-framerate', String(out.fps), '-i', 'pipe:0');
      break;
  }
  const live = isLive(spec);
  // A file is read at exactly `out.fps`: its frames' times follow from the two rates (resample.ts). A live source is
  // read at up to `out.fps` but no faster than it sends: filling the gaps of a 25 fps camera read at 30 would only
  // repeat frames, which the tracker cannot time. ffmpeg's header then names the rate it writes (ffmpeg-log.ts).
  const rate = live ? `'if(gt(source_fps,0),min(source_fps,${out.fps}),${out.fps})'` : String(out.fps);
  return [
    '-hide_banner', '-loglevel', live ? 'level+info' : 'error', '-nostats',
    ...(spec.kind === 'rpicam' ? [] : ['-nostdin']),
    ...input,
    '-an', '-sn', '-dn',
    '-vf', `fps=${rate},scale=${out.width}:${out.height}:flags=bilinear,format=${out.pixelFormat}`,
    // Without flush_packets small frames sit in ffmpeg's 32 KB output buffer, adding latency on live sources.
    '-f', 'rawvideo', '-pix_fmt', out.pixelFormat, '-flush_packets', '1', 'pipe:1',
  ];
}
