import { describe, expect, it } from 'vitest';
import { boxIdsProblem } from './box-ids.ts';

describe('boxIdsProblem', () => {
  // createApiToken took a 300-character box id that movement ingest refuses, and an empty one.
  it('names the first id the shared boxId rules refuse, and its place', () => {
    expect(boxIdsProblem(['gate-1', 'x'.repeat(300)], 'boxIds')).toBe(`boxIds[1] "${'x'.repeat(40)}…" is not a box id: it must be at most 128 characters long`);
    expect(boxIdsProblem([''], '--box')).toBe('--box[0] "" is not a box id: it must not be empty');
  });

  it('takes what ingest takes', () => {
    expect(boxIdsProblem(['gate-1', '7', 'x'.repeat(128), 'a box / with a slash'], 'boxIds')).toBeUndefined();
  });
});
