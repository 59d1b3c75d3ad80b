import { describe, expect, it } from 'vitest';
import { WholeFramePacing, type PacingChange } from './pacing.ts';

/**
 * Feeds a pacing frames as the pipeline would, their work depending on whether the whole-frame model runs at the
 * pacing's current level (`wholeMs` on those frames, `slotMs` on frames only the slot model sees, 0.5 ms on frames
 * the motion gate skipped); the dropped-frame total and the whole-frame rhythm carry over from call to call.
 * Returns the changes of each call.
 */
function feeder(pacing: WholeFramePacing) {
  let dropped = 0;
  let sinceWhole = 0;
  return (frames: number, cost: { wholeMs: number; slotMs: number; dropsEvery?: number; gatedShare?: number }) => {
    const changes: PacingChange[] = [];
    for (let i = 0; i < frames; i++) {
      const inferred = cost.gatedShare === undefined || (i % 10) / 10 >= cost.gatedShare;
      const whole = inferred && sinceWhole % pacing.level === 0;
      if (inferred) sinceWhole++;
      if (cost.dropsEvery && i % cost.dropsEvery === cost.dropsEvery - 1) dropped++;
      const busyMs = !inferred ? 0.5 : whole ? cost.wholeMs : cost.slotMs;
      const change = pacing.record({ busyMs, whole, inferred, droppedTotal: dropped });
      if (change) {
        changes.push(change);
        sinceWhole = 0; // the detector starts its new rhythm with a whole frame
      }
    }
    return changes;
  };
}

describe('WholeFramePacing', () => {
  it('keeps the configured level while the work fits the frame interval', () => {
    const pacing = new WholeFramePacing({ base: 1, max: 4, frameMs: 33.3 });
    const feed = feeder(pacing);
    expect(feed(600, { wholeMs: 20, slotMs: 10 })).toEqual([]);
    expect(pacing.level).toBe(1);
  });

  it('spaces the whole-frame model out a step at a time until the work fits, and stays there', () => {
    // As measured on a slow x86 VM: 32 ms a frame with both models, 17.5 of them the slot model's.
    const pacing = new WholeFramePacing({ base: 1, max: 4, frameMs: 1000 / 30 });
    const feed = feeder(pacing);
    const changes = feed(1200, { wholeMs: 32, slotMs: 17.5 });
    expect(changes.map((c) => c.level)).toEqual([2]); // 24.75 ms a frame at 2 is under 85 % of 33.3
    expect(changes[0]!.reason).toMatch(/^behind the camera \(32\.0 ms of work a frame against 33\.3 ms/);
  });

  it('goes as far as the work needs, but never beyond max', () => {
    const pacing = new WholeFramePacing({ base: 1, max: 3, frameMs: 20 });
    const feed = feeder(pacing);
    const changes = feed(2000, { wholeMs: 40, slotMs: 15 });
    expect(changes.map((c) => c.level)).toEqual([2, 3]);
    expect(pacing.level).toBe(3);
  });

  it('steps up on dropped frames even when the mean work looks small', () => {
    // The work is measured; what else the CPU does (the live stream's encoder) is not, but it shows as drops.
    const pacing = new WholeFramePacing({ base: 1, max: 3, frameMs: 33.3, windowFrames: 30 });
    const feed = feeder(pacing);
    const changes = feed(60, { wholeMs: 10, slotMs: 5, dropsEvery: 15 });
    expect(changes).toEqual([
      { level: 2, reason: expect.stringMatching(/^behind the camera \(2 frames dropped, 10\.0 ms of work a frame/) },
      { level: 3, reason: expect.stringMatching(/^behind the camera \(2 frames dropped, /) },
    ]);
    // Once none are dropped for five windows, the small work brings it back a step.
    expect(feed(4 * 30, { wholeMs: 10, slotMs: 5 })).toEqual([]);
    expect(feed(30, { wholeMs: 10, slotMs: 5 }).map((c) => c.level)).toEqual([2]);
  });

  it('comes back a step when the work predicted for it leaves room, and not while frames are dropped', () => {
    const pacing = new WholeFramePacing({ base: 1, max: 2, frameMs: 33.3, windowFrames: 30 });
    const feed = feeder(pacing);
    feed(30, { wholeMs: 60, slotMs: 10 });
    expect(pacing.level).toBe(2);
    // The load eases (the live stream stopped): 12 ms with both models, 6 with the slot model alone.
    expect(feed(30, { wholeMs: 12, slotMs: 6, dropsEvery: 15 })).toEqual([]);
    expect(feed(4 * 30, { wholeMs: 12, slotMs: 6 })).toEqual([]); // five calm windows first
    const changes = feed(30, { wholeMs: 12, slotMs: 6 });
    expect(changes).toEqual([{ level: 1, reason: expect.stringMatching(/^room to spare \(.*about \d+\.\d ms at the next level\)$/) }]);
  });

  it('does not swing between two levels when the lower one is just too slow', () => {
    const pacing = new WholeFramePacing({ base: 1, max: 2, frameMs: 33.3 });
    const feed = feeder(pacing);
    // Level 1: 30 ms (over 85 %); level 2: 24 ms, and back at 1 it would be 30 again, over 60 %: it stays at 2.
    const changes = feed(3000, { wholeMs: 30, slotMs: 18 });
    expect(changes.map((c) => c.level)).toEqual([2]);
  });

  it('counts frames the motion gate skipped as cheap ones, so a quiet scene brings the level back', () => {
    const pacing = new WholeFramePacing({ base: 1, max: 2, frameMs: 33.3, windowFrames: 50 });
    const feed = feeder(pacing);
    feed(50, { wholeMs: 32, slotMs: 17.5 });
    expect(pacing.level).toBe(2);
    // Nine frames in ten still: the mean work is small even with both models on every inferred frame.
    expect(feed(5 * 50, { wholeMs: 32, slotMs: 17.5, gatedShare: 0.9 }).map((c) => c.level)).toEqual([1]);
  });

  it('never goes below the configured level', () => {
    const pacing = new WholeFramePacing({ base: 2, max: 4, frameMs: 33.3 });
    const feed = feeder(pacing);
    expect(feed(600, { wholeMs: 2, slotMs: 1 })).toEqual([]);
    expect(pacing.level).toBe(2);
  });

  it('refuses settings that make no sense', () => {
    expect(() => new WholeFramePacing({ base: 0, max: 2, frameMs: 33 })).toThrow(/base must be a whole number ≥ 1, got 0/);
    expect(() => new WholeFramePacing({ base: 2, max: 1, frameMs: 33 })).toThrow(/max must be a whole number ≥ base \(2\), got 1/);
    expect(() => new WholeFramePacing({ base: 1, max: 2, frameMs: 0 })).toThrow(/frameMs must be positive/);
    expect(() => new WholeFramePacing({ base: 1, max: 2, frameMs: 33, busyShare: 0.5, relaxShare: 0.6 })).toThrow(/relaxShare must be below busyShare/);
  });
});
