import { describe, expect, it } from 'vitest';
import { startBurstOver, StreamClock } from './stream-clock.ts';

const PERIOD = 1000 / 30;

/** Stamps frames 0…n−1 of one run that arrive at `arrival(k)`. */
function stampRun(clock: StreamClock, arrival: (k: number) => number, n: number): number[] {
  return Array.from({ length: n }, (_, k) => clock.stamp(k, arrival(k)));
}

describe('StreamClock', () => {
  it('takes out the time frames waited for a busy agent, once one has come straight through', () => {
    // Taken every 33.3 ms from t = 1000; each waits 0–25 ms (a fixed pseudo-random pattern), frame 3 not at all.
    const delays = [12, 25, 7, 0, 19, 3, 22, 11, 16, 5, 24, 9];
    const stamps = stampRun(new StreamClock(PERIOD), (k) => 1000 + k * PERIOD + delays[k]!, delays.length);
    // Until frame 3 its stamps run ahead of the truth by at most the first delays; from frame 3 on they are exact.
    stamps.slice(3).forEach((stamp, i) => expect(stamp).toBeCloseTo(1000 + (i + 3) * PERIOD, 0));
    for (let k = 1; k < stamps.length; k++) expect(stamps[k]!).toBeGreaterThanOrEqual(stamps[k - 1]!);
    stamps.forEach((stamp, k) => expect(stamp).toBeLessThanOrEqual(1000 + k * PERIOD + delays[k]!));
  });

  it('never stamps a frame later than it arrived nor earlier than the frame before', () => {
    const clock = new StreamClock(PERIOD);
    // A burst: ffmpeg hands over ten frames at once after probing the stream.
    const stamps = stampRun(clock, (k) => (k < 10 ? 5000 : 5000 + (k - 9) * PERIOD), 20);
    stamps.forEach((stamp, k) => expect(stamp).toBeLessThanOrEqual(k < 10 ? 5000 : 5000 + (k - 9) * PERIOD));
    for (let k = 1; k < stamps.length; k++) expect(stamps[k]!).toBeGreaterThanOrEqual(stamps[k - 1]!);
  });

  it('follows a camera whose clock runs a little slow against this machine (0.03 %)', () => {
    const clock = new StreamClock(PERIOD);
    const slow = PERIOD * 1.0003;
    const n = 30 * 600; // ten minutes
    const stamps = stampRun(clock, (k) => k * slow, n);
    // Without creeping forward the stamps would fall 180 ms behind; they stay within a frame of the arrivals.
    expect((n - 1) * slow - stamps.at(-1)!).toBeLessThan(PERIOD);
  });

  it('goes back to arrival times for a stream whose time does not pass as the wall clock does', () => {
    const clock = new StreamClock(PERIOD, { maxLagMs: 2000 });
    // Frames arrive every 50 ms but count as 33.3 ms apart (a raw stream given the wrong rate).
    const stamps = stampRun(clock, (k) => k * 50, 600);
    stamps.forEach((stamp, k) => expect(k * 50 - stamp).toBeLessThanOrEqual(2000));
  });

  it('starts over on a new run of the source, still never going back', () => {
    const clock = new StreamClock(PERIOD);
    const first = stampRun(clock, (k) => 1000 + k * PERIOD, 30);
    clock.restart();
    // Reconnected 3 s later: frame numbers start at 0 again.
    const second = stampRun(clock, (k) => 5000 + k * PERIOD, 30);
    expect(second[0]).toBeCloseTo(5000, 6);
    expect(second[29]).toBeCloseTo(5000 + 29 * PERIOD, 6);
    expect(second[0]!).toBeGreaterThan(first.at(-1)!);
  });

  it('takes a new run at the rate it comes at', () => {
    const clock = new StreamClock(PERIOD);
    stampRun(clock, (k) => 1000 + k * PERIOD, 30);
    // The camera came back sending 25 fps.
    clock.restart(40);
    const second = stampRun(clock, (k) => 5000 + k * 40 + (k % 3) * 5, 30);
    expect(second[29]).toBeCloseTo(5000 + 29 * 40, 0);
  });

  it('stamps the frames of a start-up burst a period apart once it has seen the frame after them', () => {
    // What ffmpeg did over HTTP: 14 frames within 4 ms after probing, then one every 33.3 ms (frame 14 at 793).
    const arrivals = [...Array.from({ length: 14 }, (_, k) => 768 + (k * 4) / 13), ...Array.from({ length: 10 }, (_, k) => 793 + k * PERIOD)];
    const clock = new StreamClock(PERIOD);
    for (let k = 0; k <= 14; k++) clock.anchor(k, arrivals[k]!);
    const stamps = arrivals.map((arrival, k) => clock.stamp(k, arrival));
    const start = 793 - 14 * PERIOD;
    stamps.forEach((stamp, k) => expect(stamp).toBeCloseTo(start + k * PERIOD, 0));
    stamps.forEach((stamp, k) => expect(stamp).toBeLessThanOrEqual(arrivals[k]!));
  });

  it('refuses a period that is not positive', () => {
    expect(() => new StreamClock(0)).toThrow('the frame period must be positive, got 0');
    expect(() => new StreamClock(PERIOD).restart(Infinity)).toThrow('the frame period must be positive, got Infinity');
  });
});

describe('startBurstOver', () => {
  it('waits while frames come much faster than the period, and not beyond maxHeld', () => {
    expect(startBurstOver([], PERIOD, 60)).toBe(false);
    expect(startBurstOver([768], PERIOD, 60)).toBe(false);
    expect(startBurstOver([768, 768.3, 768.6], PERIOD, 60)).toBe(false);
    expect(startBurstOver([768, 768.3, 768.6, 793], PERIOD, 60)).toBe(true);
    // No burst: the second frame comes a period after the first.
    expect(startBurstOver([1000, 1000 + PERIOD], PERIOD, 60)).toBe(true);
    expect(startBurstOver(Array.from({ length: 60 }, () => 5), PERIOD, 60)).toBe(true);
  });
});
