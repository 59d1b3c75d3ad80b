import { describe, expect, it } from 'vitest';
import { DetectionAccumulator, matchByDistance, MotAccumulator, type Labelled } from './mot.ts';

const at = (id: number | string, x: number, y = 0): Labelled => ({ id, x, y });

/** Runs frames of [truth, hypotheses] through an accumulator with a 10 px gate. */
function score(frames: [Labelled[], Labelled[]][]) {
  const acc = new MotAccumulator(10);
  for (const [truth, hypotheses] of frames) acc.update(truth, hypotheses);
  return acc.summary();
}

describe('MotAccumulator', () => {
  it('scores perfect tracking as 1', () => {
    const s = score([
      [[at('A', 0), at('B', 50)], [at(1, 0), at(2, 50)]],
      [[at('A', 5), at('B', 55)], [at(1, 6), at(2, 55)]],
      [[at('A', 10), at('B', 60)], [at(1, 10), at(2, 60)]],
    ]);
    expect(s).toMatchObject({ frames: 3, objects: 6, matches: 6, misses: 0, falsePositives: 0, switches: 0, fragmentations: 0, mota: 1, idf1: 1, precision: 1, recall: 1 });
    expect(s.motp).toBeCloseTo(1 / 6);
  });

  it('scores missing everything as MOTA 0 and IDF1 0', () => {
    const s = score([
      [[at('A', 0)], []],
      [[at('A', 1), at('B', 40)], []],
    ]);
    expect(s).toMatchObject({ objects: 3, misses: 3, mota: 0, idtp: 0, idfn: 3, idfp: 0, idf1: 0, recall: 0 });
  });

  it('counts an identity switch once and splits the trajectory for IDF1', () => {
    // One bee; the tracker calls it 1 for two frames, then 2.
    const s = score([
      [[at('A', 0)], [at(1, 0)]],
      [[at('A', 4)], [at(1, 4)]],
      [[at('A', 8)], [at(2, 8)]],
      [[at('A', 12)], [at(2, 12)]],
    ]);
    expect(s).toMatchObject({ matches: 4, switches: 1, misses: 0, falsePositives: 0, fragmentations: 0 });
    expect(s.mota).toBeCloseTo(1 - 1 / 4);
    // Best assignment A↔1: IDTP 2, the other two frames are an IDFN (A unexplained) and an IDFP (hypothesis 2).
    expect(s).toMatchObject({ idtp: 2, idfn: 2, idfp: 2 });
    expect(s.idf1).toBeCloseTo(4 / 8);
  });

  it('counts a fragmentation when a track is lost and found again under the same id', () => {
    const s = score([
      [[at('A', 0)], [at(1, 0)]],
      [[at('A', 4)], [at(1, 4)]],
      [[at('A', 8)], []],
      [[at('A', 12)], [at(1, 12)]],
      [[at('A', 16)], [at(1, 16)]],
    ]);
    expect(s).toMatchObject({ matches: 4, misses: 1, switches: 0, fragmentations: 1, idtp: 4, idfn: 1, idfp: 0 });
    expect(s.mota).toBeCloseTo(1 - 1 / 5);
    expect(s.idf1).toBeCloseTo(8 / 9);
  });

  it('does not count misses before the first match or after the last one as fragments', () => {
    const s = score([
      [[at('A', 0)], []],
      [[at('A', 4)], [at(1, 4)]],
      [[at('A', 8)], []],
    ]);
    expect(s).toMatchObject({ misses: 2, fragmentations: 0 });
  });

  it('keeps an established correspondence inside the gate even when swapping would be shorter', () => {
    const s = score([
      [[at('A', 0), at('B', 30)], [at(1, 0), at(2, 30)]],
      // A and B close in; the hypotheses cross slightly: 1 is now nearer B, 2 nearer A, both within the gate.
      [[at('A', 0), at('B', 6)], [at(1, 4), at(2, 2)]],
    ]);
    expect(s).toMatchObject({ matches: 4, switches: 0 });
    expect(s.motp).toBeCloseTo((0 + 0 + 4 + 4) / 4);
  });

  it('treats a hypothesis beyond the gate as a false positive and the object as missed', () => {
    const s = score([[[at('A', 0)], [at(1, 10)]]]); // exactly 10 px: not closer than the gate
    expect(s).toMatchObject({ matches: 0, misses: 1, falsePositives: 1, mota: -1, idtp: 0, idf1: 0 });
  });

  it('assigns whole trajectories globally for IDF1, not greedily', () => {
    // A is with hypothesis 1 for three frames, then with 2 for two; B is with 1 for those two frames.
    const s = score([
      [[at('A', 0)], [at(1, 0)]],
      [[at('A', 0)], [at(1, 0)]],
      [[at('A', 0)], [at(1, 0)]],
      [[at('A', 0), at('B', 100)], [at(2, 0), at(1, 100)]],
      [[at('A', 0), at('B', 100)], [at(2, 0), at(1, 100)]],
    ]);
    // A↔2 and B↔1 (2 + 2 frames) beat A↔1 alone (3 frames).
    expect(s).toMatchObject({ idtp: 4, idfn: 3, idfp: 3, switches: 1 });
    expect(s.idf1).toBeCloseTo(8 / 14);
    expect(s.mota).toBeCloseTo(1 - 1 / 7);
  });

  it('rejects a frame with the same id twice and a gate that is not positive', () => {
    expect(() => new MotAccumulator(10).update([at('A', 0), at('A', 3)], [])).toThrow('truth id A appears twice in one frame');
    expect(() => new MotAccumulator(0)).toThrow('maxDistance must be positive');
  });
});

describe('DetectionAccumulator and matchByDistance', () => {
  it('matches most pairs at least distance within the gate', () => {
    expect(matchByDistance([{ x: 0, y: 0 }, { x: 8, y: 0 }], [{ x: 7, y: 0 }, { x: 30, y: 0 }], 10)).toEqual([[1, 0, 1]]);
    expect(matchByDistance([{ x: 0, y: 0 }, { x: 8, y: 0 }], [{ x: 4, y: 0 }, { x: 12, y: 0 }], 10)).toEqual([[0, 0, 4], [1, 1, 4]]);
  });

  it('counts true positives, false positives and misses', () => {
    const acc = new DetectionAccumulator(10);
    acc.update([{ x: 0, y: 0 }, { x: 50, y: 0 }], [{ x: 2, y: 0 }, { x: 200, y: 0 }]);
    acc.update([], [{ x: 1, y: 1 }]);
    expect([acc.truePositives, acc.falsePositives, acc.falseNegatives]).toEqual([1, 2, 1]);
    expect(acc.precision).toBeCloseTo(1 / 3);
    expect(acc.recall).toBeCloseTo(1 / 2);
  });
});
