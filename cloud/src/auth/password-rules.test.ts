import { describe, expect, it } from 'vitest';
import { newPasswordProblem } from './password-rules.ts';

describe('newPasswordProblem', () => {
  it('names the field of a password too short or too long, and accepts 10 to 200 characters', () => {
    expect(newPasswordProblem('123456789', 'newPassword')).toBe('newPassword must be at least 10 characters long');
    expect(newPasswordProblem('x'.repeat(201), 'password')).toBe('password must be at most 200 characters long');
    expect(newPasswordProblem('1234567890', 'newPassword')).toBeUndefined();
    expect(newPasswordProblem('x'.repeat(200), 'newPassword')).toBeUndefined();
  });
});
