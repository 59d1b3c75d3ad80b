import type { Prng } from '../random/prng.ts';
import { WordAdder } from './word-adder.ts';

/**
 * The camera's last step: sensor noise, added to the whole frame in one pass. Per-byte random numbers
 * would cost more than the rest of the frame, so the noise comes from a precomputed table read from a
 * random offset each frame (one contiguous stretch, so it never repeats within a frame), and it is added
 * four bytes at a time as one 32-bit sum. That is exact because the scene keeps `headroom` levels clear of
 * 0 and 255 (a raised black level, as real sensors have) and the noise never exceeds the headroom: every
 * byte's sum stays within 0..255, so no carry or borrow crosses into the next byte, and the packed sum of
 * signed per-byte noise can be precomputed modulo 2^32.
 */
export class Sensor {
  /** Scene values must stay within [headroom, 255 - headroom]. */
  readonly headroom: number;
  private readonly packedNoise: WordAdder;
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
    this.packedNoise = new WordAdder(this.frameWords, this.frameWords + this.slackWords);
    this.headroom = sigma > 0 ? Math.min(40, Math.ceil(3 * sigma)) : 0;
    if (sigma > 0) {
      const limit = this.headroom;
      // The sum of four uniform bytes is close enough to Gaussian for sensor noise and much cheaper.
      const scale = sigma / 147.8;
      const noiseByte = (): number => {
        const r = rng.nextUint32();
        const sum = (r & 255) + ((r >>> 8) & 255) + ((r >>> 16) & 255) + (r >>> 24) - 510;
        return Math.max(-limit, Math.min(limit, Math.round(sum * scale)));
      };
      const table = this.packedNoise.table;
      for (let i = 0; i < table.length; i++) {
        table[i] = noiseByte() + noiseByte() * 0x100 + noiseByte() * 0x10000 + noiseByte() * 0x1000000;
      }
    }
  }

  /** Adds this frame's noise to `scene`, writing `out`. Both are 4-byte aligned and frameBytes long. */
  expose(scene: Uint8Array | Uint8ClampedArray, out: Uint8Array | Uint8ClampedArray): void {
    const words = this.frameWords;
    if (scene.byteLength !== words * 4 || out.byteLength !== words * 4) throw new Error(`sensor buffers must hold ${words * 4} bytes`);
    this.packedNoise.addTo(scene, this.rng.int(this.slackWords) | 0, out);
  }
}
