import { describe, expect, it } from 'vitest';
import { SpacedNotes } from './spaced-notes.ts';

const MINUTE = 60_000;

describe('SpacedNotes', () => {
  it('says the first change at once, and later ones at most once per interval with how many they stand for', () => {
    const notes = new SpacedNotes<number>(10 * MINUTE);
    notes.settled('30');
    expect(notes.changed('20', 20, 0)).toEqual({ detail: 20, changes: 1 });
    expect(notes.changed('15', 15, MINUTE)).toBeUndefined();
    expect(notes.changed('12', 12, 2 * MINUTE)).toBeUndefined();
    expect(notes.dueAt).toBe(10 * MINUTE);
    expect(notes.due(10 * MINUTE - 1)).toBeUndefined();
    expect(notes.due(10 * MINUTE)).toEqual({ detail: 12, changes: 2 });
    expect(notes.dueAt).toBeUndefined();
    expect(notes.due(11 * MINUTE)).toBeUndefined();
    // Long after the last note, a change is said at once again.
    expect(notes.changed('25', 25, 30 * MINUTE)).toEqual({ detail: 25, changes: 1 });
  });

  it('says nothing for a change back to what the log said last, and counts it for the next note', () => {
    const notes = new SpacedNotes<number>(10 * MINUTE);
    notes.settled('30');
    expect(notes.changed('20', 20, 0)).toBeDefined();
    expect(notes.changed('30', 30, MINUTE)).toBeUndefined();
    expect(notes.changed('20', 20, 2 * MINUTE)).toBeUndefined();
    expect(notes.dueAt).toBeUndefined(); // back at 20, which the log says
    expect(notes.due(20 * MINUTE)).toBeUndefined();
    expect(notes.changed('30', 30, 21 * MINUTE)).toEqual({ detail: 30, changes: 3 });
  });

  // A Pi that falls behind its camera: the measured rate moved at every 10 s window, and each move was a log line.
  it('says a rate that moves with the load every 10 s for an hour a handful of times, not 360', () => {
    const notes = new SpacedNotes<number>(10 * MINUTE);
    notes.settled('30');
    let said = 0;
    for (let window = 1; window <= 360; window++) {
      const now = window * 10_000;
      if (notes.due(now)) said++;
      const rate = window % 2 === 0 ? 18 : window % 3 === 0 ? 24 : 21;
      if (notes.changed(String(rate), rate, now)) said++;
    }
    expect(said).toBeGreaterThanOrEqual(1);
    expect(said).toBeLessThanOrEqual(7);
  });

  it('starts over from what a new connection set, keeping the spacing', () => {
    const notes = new SpacedNotes<number>(10 * MINUTE);
    notes.settled('30');
    expect(notes.changed('20', 20, 0)).toBeDefined();
    expect(notes.changed('15', 15, MINUTE)).toBeUndefined();
    notes.settled('15'); // reconnected at 15, which its own note said
    expect(notes.dueAt).toBeUndefined();
    expect(notes.changed('15', 15, 2 * MINUTE)).toBeUndefined();
    expect(notes.changed('20', 20, 3 * MINUTE)).toBeUndefined();
    expect(notes.due(10 * MINUTE)).toEqual({ detail: 20, changes: 2 });
  });
});
