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
}

export function channelsOf(format: PixelFormat): number {
  return format === 'gray' ? 1 : 3;
}

export function frameBytes(width: number, height: number, format: PixelFormat): number {
  return width * height * channelsOf(format);
}
