/** The checks and messages of the profile's password change: what the page says before and after asking the server. */
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '@hivegate/shared/auth';
import { asSentence } from './format.ts';

export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH };

export type PasswordField = 'current' | 'next' | 'repeat';

export interface FieldProblem {
  field?: PasswordField;
  message: string;
}

/** What to fix before sending, and in which field; undefined when the form may be sent. */
export function passwordChangeProblem(form: { current: string; next: string; repeat: string }): FieldProblem | undefined {
  if (form.current === '') return { field: 'current', message: 'Enter your current password.' };
  if (form.next.length < MIN_PASSWORD_LENGTH) return { field: 'next', message: `The new password needs at least ${MIN_PASSWORD_LENGTH} characters.` };
  if (form.next.length > MAX_PASSWORD_LENGTH) return { field: 'next', message: `The new password can have at most ${MAX_PASSWORD_LENGTH} characters.` };
  if (form.next === form.current) return { field: 'next', message: 'The new password must differ from the current one.' };
  if (form.repeat !== form.next) return { field: 'repeat', message: 'The two new passwords differ: type the new one again.' };
  return undefined;
}

const FIELDS_OF_ARGUMENTS: Record<string, PasswordField> = { currentPassword: 'current', newPassword: 'next' };

/**
 * The server's refusal as the page shows it: tied to the field it names (extensions.field), in words for people
 * rather than the argument's name. Others (the sign-in limit, the network) belong to the form as a whole.
 */
export function serverPasswordProblem(error: { message: string; field?: unknown }): FieldProblem {
  const field = typeof error.field === 'string' ? FIELDS_OF_ARGUMENTS[error.field] : undefined;
  if (field === 'current') return { field, message: 'The current password is wrong.' };
  const message = error.message.replace(/^newPassword\b/, 'The new password').replace(/\bcurrentPassword\b/, 'the current one');
  return { field, message: asSentence(message) };
}

/** What a successful change did, for the status line. */
export function passwordChangedMessage(otherSessionsSignedOut: number): string {
  const sessions =
    otherSessionsSignedOut === 0
      ? 'You were signed in nowhere else.'
      : `Signed out ${otherSessionsSignedOut === 1 ? 'the other session' : `${otherSessionsSignedOut} other sessions`}; this one stays signed in.`;
  return `Password changed. ${sessions} Your API tokens still work.`;
}

