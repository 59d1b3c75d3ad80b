import { describe, expect, it } from 'vitest';
import { Prng } from '../random/prng.ts';
import { WordAdder } from './word-adder.ts';

function filled(adder: WordAdder, rng: Prng): void {
  for (let i = 0; i < adder.table.length; i++) adder.table[i] = rng.nextUint32() | 0;
}

describe('WordAdder', () => {
  it('adds the table word by word modulo 2^32, the same in SIMD as one word at a time, tail words included', () => {
    // 3·7 = 21 words: five 16-byte steps and one word left over.
    for (const frameWords of [21, 4, 1]) {
      const simd = new WordAdder(frameWords, frameWords + 9);
      const plain = new WordAdder(frameWords, frameWords + 9, { simd: false });
      filled(simd, new Prng(7));
      filled(plain, new Prng(7));
      const rng = new Prng(11);
      const source = new Uint8ClampedArray(frameWords * 4).map(() => rng.int(256));
      // Words that overflow: 0xffffffff + 1 must wrap to 0, as the sensor's packed bytes rely on.
      new Uint32Array(source.buffer)[0] = 0xffffffff;
      simd.table[3] = 1;
      plain.table[3] = 1;
      for (const offset of [0, 3, 9]) {
        const fromSimd = new Uint8Array(frameWords * 4);
        const fromPlain = new Uint8Array(frameWords * 4);
        simd.addTo(source, offset, fromSimd);
        plain.addTo(source, offset, fromPlain);
        expect(Buffer.from(fromSimd).equals(Buffer.from(fromPlain))).toBe(true);
        const words = new Uint32Array(fromPlain.buffer);
        const sourceWords = new Uint32Array(source.buffer);
        for (let i = 0; i < frameWords; i++) expect(words[i]).toBe((sourceWords[i]! + (plain.table[offset + i]! >>> 0)) % 2 ** 32);
      }
    }
  });

  it('runs in WebAssembly SIMD on this runtime', () => {
    // Node 20 and later have it on x64 and arm64; without it the renderer is a quarter slower, not wrong.
    expect(new WordAdder(8, 8).simd).toBe(true);
    expect(new WordAdder(8, 8, { simd: false }).simd).toBe(false);
  });
});
