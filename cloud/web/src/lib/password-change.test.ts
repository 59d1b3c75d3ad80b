import { describe, expect, it } from 'vitest';
import { passwordChangedMessage, passwordChangeProblem, serverPasswordProblem } from './password-change.ts';

describe('passwordChangeProblem', () => {
  const good = { current: 'the old password', next: 'the new password', repeat: 'the new password' };

  it('names the first field to fix', () => {
    expect(passwordChangeProblem({ ...good, current: '' })).toEqual({ field: 'current', message: 'Enter your current password.' });
    expect(passwordChangeProblem({ ...good, next: 'short', repeat: 'short' })).toEqual({ field: 'next', message: 'The new password needs at least 10 characters.' });
    expect(passwordChangeProblem({ ...good, next: 'x'.repeat(201), repeat: 'x'.repeat(201) })?.field).toBe('next');
    expect(passwordChangeProblem({ ...good, next: good.current, repeat: good.current })).toEqual({ field: 'next', message: 'The new password must differ from the current one.' });
    expect(passwordChangeProblem({ ...good, repeat: 'the new passwort' })).toEqual({ field: 'repeat', message: 'The two new passwords differ: type the new one again.' });
  });

  it('lets a sound form through', () => {
    expect(passwordChangeProblem(good)).toBeUndefined();
  });
});

describe('serverPasswordProblem', () => {
  it('ties the server’s refusals to the field they name, in words for people', () => {
    expect(serverPasswordProblem({ message: 'currentPassword is wrong', field: 'currentPassword' })).toEqual({ field: 'current', message: 'The current password is wrong.' });
    expect(serverPasswordProblem({ message: 'newPassword must differ from currentPassword', field: 'newPassword' })).toEqual({
      field: 'next',
      message: 'The new password must differ from the current one.',
    });
  });

  it('leaves refusals about no field to the whole form', () => {
    expect(serverPasswordProblem({ message: 'too many failed sign-ins; try again in 15 minutes' })).toEqual({
      field: undefined,
      message: 'Too many failed sign-ins; try again in 15 minutes.',
    });
  });
});

describe('passwordChangedMessage', () => {
  it('says how many sessions were signed out and that the API tokens stay', () => {
    expect(passwordChangedMessage(0)).toBe('Password changed. You were signed in nowhere else. Your API tokens still work.');
    expect(passwordChangedMessage(1)).toBe('Password changed. Signed out the other session; this one stays signed in. Your API tokens still work.');
    expect(passwordChangedMessage(3)).toBe('Password changed. Signed out 3 other sessions; this one stays signed in. Your API tokens still work.');
  });
});
