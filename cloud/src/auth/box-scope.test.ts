import { describe, expect, it } from 'vitest';
import { coveredBoxes, coversBox } from './box-scope.ts';

describe('box scope', () => {
  const limited = { boxIds: ['a', 'b'] };
  const everyBox = { boxIds: null };

  it('covers every box without a list, and only the listed ones with one', () => {
    expect(coversBox(everyBox, 'z')).toBe(true);
    expect(coversBox(limited, 'a')).toBe(true);
    expect(coversBox(limited, 'z')).toBe(false);
  });

  it('narrows a wanted list to the covered boxes, and "every box" to the token list', () => {
    expect(coveredBoxes(everyBox, null)).toBeNull();
    expect(coveredBoxes(everyBox, ['z'])).toEqual(['z']);
    expect(coveredBoxes(limited, null)).toEqual(['a', 'b']);
    expect(coveredBoxes(limited, ['b', 'z'])).toEqual(['b']);
    expect(coveredBoxes({ boxIds: [] }, null)).toEqual([]);
  });
});
