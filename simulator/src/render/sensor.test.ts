import { describe, expect, it } from 'vitest';
import { Prng } from '../random/prng.ts';
import { Sensor } from './sensor.ts';

describe('Sensor', () => {
  it('adds zero-mean noise of the asked strength, byte by byte, never beyond the headroom', () => {
    const bytes = 64 * 48 * 3;
    const sensor = new Sensor(bytes, 4, new Prng(3));
    expect(sensor.headroom).toBe(12);
    const scene = new Uint8ClampedArray(bytes);
    // Values at both ends of the allowed range: any carry between packed bytes would show up here.
    for (let i = 0; i < bytes; i++) scene[i] = i % 2 === 0 ? sensor.headroom : 255 - sensor.headroom;
    const out = new Uint8Array(bytes);
    let sum = 0;
    let squares = 0;
    for (let frame = 0; frame < 20; frame++) {
      sensor.expose(scene, out);
      for (let i = 0; i < bytes; i++) {
        const delta = (out[i] as number) - (scene[i] as number);
        if (Math.abs(delta) > sensor.headroom) throw new Error(`byte ${i} moved by ${delta}`);
        sum += delta;
        squares += delta * delta;
      }
    }
    const n = bytes * 20;
    expect(Math.abs(sum / n)).toBeLessThan(0.05);
    expect(Math.sqrt(squares / n)).toBeGreaterThan(3.6);
    expect(Math.sqrt(squares / n)).toBeLessThan(4.4);
  });

  it('changes its noise from frame to frame, reproducibly for a seed', () => {
    const bytes = 32 * 24 * 3;
    const scene = new Uint8ClampedArray(bytes).fill(128);
    const run = (seed: number) => {
      const sensor = new Sensor(bytes, 3, new Prng(seed));
      return [0, 1].map(() => {
        const out = new Uint8Array(bytes);
        sensor.expose(scene, out);
        return Buffer.from(out).toString('hex');
      });
    };
    const [first, second] = run(1);
    expect(first).not.toBe(second);
    expect(run(1)).toEqual([first, second]);
    expect(run(2)[0]).not.toBe(first);
  });

  it('passes a scene through untouched without noise, and rejects odd sizes', () => {
    const sensor = new Sensor(12, 0, new Prng(1));
    expect(sensor.headroom).toBe(0);
    const scene = Uint8ClampedArray.from([0, 1, 2, 3, 250, 251, 252, 253, 254, 255, 7, 8]);
    const out = new Uint8Array(12);
    sensor.expose(scene, out);
    expect([...out]).toEqual([...scene]);
    expect(() => new Sensor(10, 1, new Prng(1))).toThrow(/multiple of 4/);
    expect(() => sensor.expose(new Uint8ClampedArray(8), out)).toThrow(/12 bytes/);
  });
});
