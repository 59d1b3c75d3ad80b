import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '@hivegate/shared';

export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH };

/** Why a new password is refused, naming the argument that carries it (`password` at sign-up, `newPassword` on a change). */
export function newPasswordProblem(password: string, field: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `${field} must be at least ${MIN_PASSWORD_LENGTH} characters long`;
  if (password.length > MAX_PASSWORD_LENGTH) return `${field} must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  return undefined;
}
