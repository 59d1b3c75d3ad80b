import { describe, expect, it } from 'vitest';
import { inferenceThreads } from './factory.ts';

describe('inferenceThreads', () => {
  it('leaves a core to ffmpeg where there is one to leave', () => {
    expect([1, 2, 4, 8].map((cores) => inferenceThreads(cores))).toEqual([1, 1, 3, 7]);
  });
});
