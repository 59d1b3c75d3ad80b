/**
 * Seeded randomness for the simulator. Every random choice in a render flows from one scenario seed, so a
 * clip and its ground truth are reproducible byte for byte; Math.random is never used.
 */

/** 32-bit FNV-1a; turns labels into seed material so sub-streams are keyed by name, not by call order. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Integer avalanche (the murmur3 finaliser): nearby inputs give unrelated outputs. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform value in [0, 1) determined only by (seed, index). */
export function hashUnit(seed: number, index: number): number {
  return mix32(Math.imul(seed ^ 0x9e3779b9, 0x27d4eb2d) ^ mix32(index)) / 4294967296;
}

/**
 * Smooth noise in [-1, 1] along one axis: random values at integer positions joined by a smoothstep, so
 * wobbles and light drift are continuous in time and depend only on (seed, x), never on evaluation order.
 */
export function smoothNoise(seed: number, x: number): number {
  const i = Math.floor(x);
  const f = x - i;
  const a = hashUnit(seed, i) * 2 - 1;
  const b = hashUnit(seed, i + 1) * 2 - 1;
  const s = f * f * (3 - 2 * f);
  return a + (b - a) * s;
}

/** sfc32: small, fast and statistically sound, with a 128-bit state. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | null = null;

  constructor(seed: number | string) {
    const base = typeof seed === 'string' ? hashString(seed) : seed >>> 0;
    this.a = mix32(base ^ 0x243f6a88);
    this.b = mix32(base ^ 0x85a308d3);
    this.c = mix32(base ^ 0x13198a2e);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform in [min, max). */
  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('cannot pick from an empty list');
    return items[this.int(items.length)] as T;
  }

  /** Standard normal (Box–Muller, second value kept for the next call). */
  normal(): number {
    if (this.spareNormal !== null) {
      const spare = this.spareNormal;
      this.spareNormal = null;
      return spare;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    const radius = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  }

  /** A new independent stream keyed by a label, leaving this stream's sequence untouched. */
  fork(label: string): Prng {
    return new Prng(mix32(this.a ^ hashString(label)) ^ mix32(this.c + hashString(`${label}#`)));
  }
}

/**
 * An independent stream for a (seed, label) pair, e.g. streamFor(seed, 'noise'). Components take their own
 * streams so that adding a bee does not change the sensor noise, and so on.
 */
export function streamFor(seed: number, label: string): Prng {
  return new Prng(mix32(seed >>> 0) ^ hashString(label));
}
