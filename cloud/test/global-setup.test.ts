import { describe, expect, it } from 'vitest';
import { createdAtSeconds } from './global-setup.ts';

describe('leftover test databases', () => {
  it('reads the creation time from the name the helper gives', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(createdAtSeconds(`hivegate_t_${now.toString(36)}_0a1b2c3d`)).toBe(now);
    // Names of older checkouts carry no time: they are dropped only when nobody is connected.
    expect(createdAtSeconds('hivegate_t_0a1b2c3d4e5f')).toBeUndefined();
    expect(createdAtSeconds('hivegate_test')).toBeUndefined();
  });
});
