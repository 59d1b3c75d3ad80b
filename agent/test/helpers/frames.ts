import type { Frame } from '../../src/capture/frame.ts';

/**
 * Gray frames of a bar sweeping across a gradient, delivered on a timer like a live camera (stands in for the
 * capture where a test only needs frames, not counting).
 */
export function syntheticCamera(options: { width: number; height: number; fps: number }, onFrame: (frame: Frame) => void): { stop: () => void; readonly delivered: number } {
  const { width, height, fps } = options;
  let index = 0;
  const timer = setInterval(() => {
    const data = new Uint8Array(width * height);
    const bar = (index * 8) % width;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) data[y * width + x] = Math.abs(x - bar) < 12 ? 20 : (x + y + index) & 0xff;
    }
    onFrame({ data, width, height, format: 'gray', index: index++, timestampMs: Date.now() });
  }, 1000 / fps);
  return {
    stop: () => clearInterval(timer),
    get delivered() {
      return index;
    },
  };
}
