import { describe, expect, it } from 'vitest';
import { PublishTokens } from './publish-tokens.ts';

const tokens = new PublishTokens(new TextEncoder().encode('a-deployment-secret-of-enough-length'));

describe('PublishTokens', () => {
  it('re-derives the same token from session and salt, and checks it against the stored hash only', () => {
    const salt = tokens.newSalt();
    const token = tokens.tokenFor('5f0c', salt);
    expect(tokens.tokenFor('5f0c', salt)).toBe(token);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(tokens.matches(token, tokens.hash(token))).toBe(true);
    expect(tokens.matches(`${token}x`, tokens.hash(token))).toBe(false);
  });

  it('differs per session, per salt and per deployment secret', () => {
    const salt = tokens.newSalt();
    expect(tokens.newSalt()).not.toBe(salt);
    expect(tokens.tokenFor('a', salt)).not.toBe(tokens.tokenFor('b', salt));
    expect(tokens.tokenFor('a', salt)).not.toBe(tokens.tokenFor('a', tokens.newSalt()));
    const other = new PublishTokens(new TextEncoder().encode('another-deployment-secret-of-length'));
    expect(other.tokenFor('a', salt)).not.toBe(tokens.tokenFor('a', salt));
  });
});
