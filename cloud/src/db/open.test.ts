import { describe, expect, it } from 'vitest';
import { connectTimeoutMs } from './open.ts';

describe('connectTimeoutMs', () => {
  // HEALTH_TIMEOUT_MS=100 was also the connection timeout: starts failed and a healthy database answered 503 under load.
  it('follows HEALTH_TIMEOUT_MS but never goes under 2 s', () => {
    expect(connectTimeoutMs({ healthTimeoutMs: 100 })).toBe(2000);
    expect(connectTimeoutMs({ healthTimeoutMs: 2000 })).toBe(2000);
    expect(connectTimeoutMs({ healthTimeoutMs: 7500 })).toBe(7500);
  });
});
