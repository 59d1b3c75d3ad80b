import { describe, expect, it } from 'vitest';
import { boxIdsFromList } from './accounts.ts';

describe('boxIdsFromList', () => {
  // The form split at spaces too: "bad box id with / slash" became five boxes.
  it('splits at commas only and trims each id', () => {
    expect(boxIdsFromList('bad box id with / slash')).toEqual(['bad box id with / slash']);
    expect(boxIdsFromList(' gate-1, gate 2 ,,7 ')).toEqual(['gate-1', 'gate 2', '7']);
    expect(boxIdsFromList('  ')).toEqual([]);
  });
});
