import { describe, expect, it } from 'vitest';
import { backoffDelay, classifyStatus, parseRetryAfter, retryDelay } from './retry-policy.ts';

const options = { initialMs: 1000, maxMs: 60_000 };

describe('backoffDelay', () => {
  it('doubles the cap per attempt and draws inside [cap/10, cap]', () => {
    expect(backoffDelay(1, options, () => 1)).toBe(1000);
    expect(backoffDelay(2, options, () => 1)).toBe(2000);
    expect(backoffDelay(4, options, () => 1)).toBe(8000);
    expect(backoffDelay(4, options, () => 0)).toBe(800);
    expect(backoffDelay(3, options, () => 0.5)).toBe(Math.round(400 + 0.5 * 3600));
  });
  it('never exceeds the maximum', () => {
    expect(backoffDelay(30, options, () => 1)).toBe(60_000);
    expect(backoffDelay(30, options, () => 0)).toBe(6000);
  });
  it('spreads draws (jitter) instead of one fixed delay', () => {
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const draws = new Set(Array.from({ length: 20 }, () => backoffDelay(5, options, random)));
    expect(draws.size).toBeGreaterThan(15);
  });
  it('rejects attempt numbers below 1', () => {
    expect(() => backoffDelay(0, options)).toThrow(/attempt/);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-05-01T10:00:00Z');
  it('reads delta seconds', () => expect(parseRetryAfter('3', now)).toBe(3000));
  it('reads an HTTP date', () => expect(parseRetryAfter('Fri, 01 May 2026 10:00:05 GMT', now)).toBe(5000));
  it('gives 0 for a date in the past and undefined for garbage or absence', () => {
    expect(parseRetryAfter('Fri, 01 May 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('retryDelay', () => {
  it('waits at least as long as Retry-After asks', () => {
    expect(retryDelay(1, options, 7000, () => 0)).toBe(7000);
  });
  it('keeps the longer backoff when Retry-After is shorter', () => {
    expect(retryDelay(5, options, 1000, () => 1)).toBe(16_000);
  });
  it('caps an absurd Retry-After', () => {
    expect(retryDelay(1, { ...options, retryAfterCeilingMs: 10_000 }, 999_000, () => 0)).toBe(10_000);
  });
});

describe('classifyStatus', () => {
  it.each([
    [200, 'ok'], [204, 'ok'], [undefined, 'retry'], [500, 'retry'], [503, 'retry'], [429, 'retry'], [408, 'retry'],
    [401, 'auth'], [403, 'auth'], [400, 'split'], [413, 'split'], [404, 'reject'], [405, 'reject'],
  ] as const)('%s → %s', (status, expected) => {
    expect(classifyStatus(status)).toBe(expected);
  });
});
