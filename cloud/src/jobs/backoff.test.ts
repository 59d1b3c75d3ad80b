import { describe, expect, it } from 'vitest';
import { afterFailure, retryDelaySeconds } from './backoff.ts';

const policy = { baseSeconds: 5, maxSeconds: 60, factor: 2, jitter: 0 };

describe('retryDelaySeconds', () => {
  it('doubles per attempt from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelaySeconds(n, policy))).toEqual([5, 10, 20, 40, 60, 60]);
  });

  it('stays finite for absurd attempt counts', () => {
    expect(retryDelaySeconds(5000, policy)).toBe(60);
  });

  it('jitter only shortens the delay, by at most its fraction', () => {
    const jittered = { ...policy, jitter: 0.5 };
    expect(retryDelaySeconds(2, jittered, () => 0)).toBe(10);
    expect(retryDelaySeconds(2, jittered, () => 1)).toBe(5);
    expect(retryDelaySeconds(2, jittered, () => 0.5)).toBe(7.5);
    for (let i = 0; i < 50; i += 1) {
      const d = retryDelaySeconds(3, jittered);
      expect(d).toBeGreaterThanOrEqual(10);
      expect(d).toBeLessThanOrEqual(20);
    }
  });

  it.each([
    [0, policy, 'attempts'],
    [1.5, policy, 'attempts'],
    [1, { ...policy, baseSeconds: -1 }, 'baseSeconds'],
    [1, { ...policy, maxSeconds: 1 }, 'maxSeconds'],
    [1, { ...policy, factor: 0.5 }, 'factor'],
    [1, { ...policy, jitter: 2 }, 'jitter'],
  ])('refuses attempts %s with %j naming %s', (attempts, p, field) => {
    expect(() => retryDelaySeconds(attempts, p)).toThrow(field);
  });
});

describe('afterFailure', () => {
  it('retries with the backoff delay while attempts remain', () => {
    expect(afterFailure(1, 3, 'boom', { policy })).toEqual({ retry: true, delaySeconds: 5 });
    expect(afterFailure(2, 3, 'boom', { policy })).toEqual({ retry: true, delaySeconds: 10 });
  });

  it('gives up at max attempts, saying how many were made', () => {
    expect(afterFailure(3, 3, 'boom', { policy })).toEqual({ retry: false, reason: 'gave up after 3 attempts: boom' });
    expect(afterFailure(1, 1, 'boom', { policy })).toEqual({ retry: false, reason: 'boom' });
  });

  it('gives up at once on a permanent error', () => {
    expect(afterFailure(1, 5, 'not a video', { permanent: true })).toEqual({ retry: false, reason: 'not a video' });
  });
});
