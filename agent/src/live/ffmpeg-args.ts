import type { PixelFormat } from '../capture/frame.ts';
import type { StreamFormat } from './quality.ts';

/** The raw frames the capture produces, as ffmpeg's rawvideo input reads them. */
export interface RawInput {
  width: number;
  height: number;
  pixelFormat: PixelFormat;
}

function rawInput(input: RawInput, wallclock: boolean): string[] {
  return [
    '-f', 'rawvideo', '-pix_fmt', input.pixelFormat, '-s', `${input.width}x${input.height}`,
    // Frames are stamped when they arrive, so dropped frames leave a gap instead of speeding the video up.
    ...(wallclock ? ['-use_wallclock_as_timestamps', '1'] : []),
    '-i', 'pipe:0',
  ];
}

/**
 * ffmpeg arguments for the HLS publisher: raw frames in, H.264 (ultrafast, zerolatency, a keyframe every second) in
 * 1 s MPEG-TS segments PUT with a persistent connection to `<targetUrl>/<playlistName>` (segments next to it), keeping six segments listed and
 * stamping each with its wall-clock time.
 */
export function hlsPublisherArgs(input: RawInput, format: StreamFormat, target: { url: string; playlistName: string; authorizationHeader: string }): string[] {
  const gop = String(format.keyframeInterval);
  return [
    '-hide_banner', '-loglevel', 'error', '-nostats',
    ...rawInput(input, true),
    '-an',
    '-vf', `fps=${format.fps},scale=${format.width}:${format.height}:flags=bilinear,format=yuv420p`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency',
    '-b:v', `${format.bitrateKbps}k`, '-maxrate', `${format.maxrateKbps}k`, '-bufsize', `${format.bufsizeKbits}k`,
    '-g', gop, '-keyint_min', gop, '-sc_threshold', '0', '-force_key_frames', 'expr:gte(t,n_forced*1)',
    '-f', 'hls', '-method', 'PUT', '-http_persistent', '1',
    '-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments+program_date_time',
    '-headers', `${target.authorizationHeader}\r\n`,
    `${target.url}/${target.playlistName}`,
  ];
}

/** ffmpeg arguments that turn each raw frame on stdin into one JPEG on stdout. */
export function jpegEncoderArgs(input: RawInput, picture: { width: number; height: number; quality: number }): string[] {
  return [
    '-hide_banner', '-loglevel', 'error', '-nostats',
    ...rawInput(input, false),
    '-an',
    '-vf', `scale=${picture.width}:${picture.height}:flags=bilinear,format=yuvj420p`,
    '-c:v', 'mjpeg', '-q:v', String(picture.quality),
    '-f', 'image2pipe', '-flush_packets', '1', 'pipe:1',
  ];
}
