export type PixelFormat = 'gray' | 'rgb24';

/** One decoded picture, tightly packed rows (`width * channels` bytes per row). */
export interface Frame {
  data: Uint8Array;
  width: number;
  height: number;
  format: PixelFormat;
  /** 0-based index of the frame since the capture started (across reconnects). */
  index: number;
  /** Wall-clock time the frame shows, Unix milliseconds. */
  timestampMs: number;
  /** Wall-clock time the capture got it from ffmpeg, Unix ms: later than `timestampMs` by how long it travelled and waited. */
  arrivalMs?: number;
}

export function channelsOf(format: PixelFormat): number {
  return format === 'gray' ? 1 : 3;
}

/**
 * Whether this machine stores the low byte of a word first (x86, arm64). Code that reads picture bytes four at a
 * time as 32-bit words relies on it and falls back to single bytes otherwise.
 */
export const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

export function frameBytes(width: number, height: number, format: PixelFormat): number {
  return width * height * channelsOf(format);
}
