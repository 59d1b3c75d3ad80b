import { describe, expect, it } from 'vitest';
import { PictureRateMeter } from './picture-rate.ts';

/** Feeds `count` pictures `stepMs` apart from `fromMs`; returns every rate reported. */
function feed(meter: PictureRateMeter, fromMs: number, stepMs: number, count: number): number[] {
  const reported: number[] = [];
  for (let k = 0; k < count; k++) {
    const rate = meter.add(fromMs + k * stepMs);
    if (rate !== undefined) reported.push(rate);
  }
  return reported;
}

describe('PictureRateMeter', () => {
  it('reports the rate once a window is full, and again only when it moves by more than the tolerance', () => {
    const meter = new PictureRateMeter();
    // 30 fps for 12 s: one report, at 10 s.
    expect(feed(meter, 0, 1000 / 30, 360).map((r) => r.toFixed(1))).toEqual(['30.0']);
    // 28 fps (7 % lower): nothing; then 15 fps: a window that held both rates, then the new rate.
    expect(feed(meter, 12_000, 1000 / 28, 336)).toEqual([]);
    expect(feed(meter, 24_000, 1000 / 15, 400).map((r) => r.toFixed(1))).toEqual(['20.2', '15.0']);
  });

  it('measures against a rate it was told it follows', () => {
    const meter = new PictureRateMeter();
    meter.following(25);
    expect(feed(meter, 0, 40, 300)).toEqual([]);
    meter.following(30);
    expect(feed(meter, 12_000, 40, 300).map((r) => r.toFixed(1))).toEqual(['25.0']);
  });

  it('drops a window that counts more pictures than the connection can deliver', () => {
    const meter = new PictureRateMeter();
    meter.following(30);
    // Stamps squeezed together (a clock that jumped): 600 pictures in 10 s.
    expect(feed(meter, 0, 1000 / 60, 700)).toEqual([]);
    // A new connection at 15: measured from its first picture.
    meter.following(15);
    expect(feed(meter, 20_000, 1000 / 15, 200)).toEqual([]);
  });

  it('starts a new window after a gap instead of counting the gap as a slow camera', () => {
    const meter = new PictureRateMeter();
    meter.following(30);
    feed(meter, 0, 1000 / 30, 200);
    // Reconnected 5 s later: at 30 fps again, nothing to report.
    expect(feed(meter, 200 * (1000 / 30) + 5000, 1000 / 30, 400)).toEqual([]);
  });
});
