import { describe, expect, it } from 'vitest';
import { hashString, Prng, smoothNoise, streamFor } from './prng.ts';

describe('Prng', () => {
  it('repeats its sequence for the same seed and differs for another', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const c = new Prng(43);
    const seqA = Array.from({ length: 20 }, () => a.nextUint32());
    expect(Array.from({ length: 20 }, () => b.nextUint32())).toEqual(seqA);
    expect(Array.from({ length: 20 }, () => c.nextUint32())).not.toEqual(seqA);
  });

  it('stays in range and is roughly uniform', () => {
    const rng = new Prng('uniform');
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 20_000; i++) {
      const value = rng.next();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      buckets[Math.floor(value * 10)]++;
    }
    for (const count of buckets) expect(Math.abs(count - 2000)).toBeLessThan(200);
    for (let i = 0; i < 1000; i++) {
      const n = rng.int(7);
      expect(Number.isInteger(n) && n >= 0 && n < 7).toBe(true);
    }
  });

  it('draws standard normals', () => {
    const rng = new Prng(7);
    const values = Array.from({ length: 20_000 }, () => rng.normal());
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(Math.abs(sd - 1)).toBeLessThan(0.03);
  });

  it('forks independent streams without disturbing the parent', () => {
    const parent = new Prng(5);
    const twin = new Prng(5);
    const child = parent.fork('bees');
    expect(parent.nextUint32()).toBe(twin.nextUint32());
    expect(child.nextUint32()).not.toBe(parent.fork('noise').nextUint32());
    expect(streamFor(1, 'a').nextUint32()).toBe(streamFor(1, 'a').nextUint32());
    expect(streamFor(1, 'a').nextUint32()).not.toBe(streamFor(1, 'b').nextUint32());
  });

  it('refuses to pick from nothing', () => {
    expect(() => new Prng(1).pick([])).toThrow(/empty/);
  });
});

describe('smoothNoise', () => {
  it('is continuous, bounded and a pure function of seed and position', () => {
    let previous = smoothNoise(9, 0);
    for (let x = 0.01; x < 20; x += 0.01) {
      const value = smoothNoise(9, x);
      expect(Math.abs(value)).toBeLessThanOrEqual(1);
      expect(Math.abs(value - previous)).toBeLessThan(0.05);
      previous = value;
    }
    expect(smoothNoise(9, 3.3)).toBe(smoothNoise(9, 3.3));
    expect(smoothNoise(9, 3.3)).not.toBe(smoothNoise(10, 3.3));
  });

  it('hashes labels stably (FNV-1a)', () => {
    expect(hashString('')).toBe(0x811c9dc5);
    expect(hashString('a')).toBe(0xe40c292c);
  });
});
