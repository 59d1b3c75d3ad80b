import type { Prng } from '../random/prng.ts';

/**
 * The camera's last step: sensor noise, added to the whole frame in one pass. Per-byte random numbers
 * would cost more than the rest of the frame, so the noise comes from a precomputed Gaussian table read
 * from a random offset each frame (one contiguous stretch, so it never repeats within a frame), and it is
 * added four bytes at a time: the table is split into its positive and negative parts, and the scene keeps
 * `headroom` levels clear of 0 and 255 (a raised black level, as real sensors have), so adding and
 * subtracting packed bytes can never carry from one byte into the next.
 */
export class Sensor {
  /** Scene values must stay within [headroom, 255 - headroom]. */
  readonly headroom: number;
  private readonly positive: Uint32Array;
  private readonly negative: Uint32Array;
  private readonly slackWords: number;
  private readonly frameWords: number;

  constructor(
    frameBytes: number,
    sigma: number,
    private readonly rng: Prng,
  ) {
    if (frameBytes % 4 !== 0) throw new Error(`frame size in bytes must be a multiple of 4, got ${frameBytes}`);
    this.frameWords = frameBytes / 4;
    this.slackWords = Math.max(1024, Math.ceil(this.frameWords / 2));
    const length = (this.frameWords + this.slackWords) * 4;
    const positive = new Uint8Array(length);
    const negative = new Uint8Array(length);
    this.headroom = sigma > 0 ? Math.min(40, Math.ceil(3 * sigma)) : 0;
    if (sigma > 0) {
      const limit = this.headroom;
      for (let i = 0; i < length; i++) {
        const n = Math.max(-limit, Math.min(limit, Math.round(rng.normal() * sigma)));
        if (n > 0) positive[i] = n;
        else negative[i] = -n;
      }
    }
    this.positive = new Uint32Array(positive.buffer);
    this.negative = new Uint32Array(negative.buffer);
  }

  /** Adds this frame's noise to `scene`, writing `out`. Both are word-aligned views of frameBytes bytes. */
  expose(scene: Uint8Array | Uint8ClampedArray, out: Uint8Array | Uint8ClampedArray): void {
    const words = this.frameWords;
    if (scene.byteLength !== words * 4 || out.byteLength !== words * 4) throw new Error(`sensor buffers must hold ${words * 4} bytes`);
    const source = new Uint32Array(scene.buffer, scene.byteOffset, words);
    const target = new Uint32Array(out.buffer, out.byteOffset, words);
    const { positive, negative } = this;
    const offset = this.rng.int(this.slackWords) | 0;
    for (let i = 0; i < words; i++) {
      const j = offset + i;
      target[i] = (source[i] as number) + (positive[j] as number) - (negative[j] as number);
    }
  }
}
