import { describe, expect, it } from 'vitest';
import { reportsNoStream } from './publisher-liveness.ts';

describe('reportsNoStream', () => {
  it.each(['idle', 'IDLE', ' stopped '])('%j says the device publishes nothing', (state) => {
    expect(reportsNoStream(state)).toBe(true);
  });

  // "error" is what the existing observer reports while it retries a failed frame: not a claim that it stopped.
  it.each(['active', 'starting', 'streaming', 'error', '', { state: 'idle' }, null, undefined, 3])('%j says nothing about it', (state) => {
    expect(reportsNoStream(state)).toBe(false);
  });
});
