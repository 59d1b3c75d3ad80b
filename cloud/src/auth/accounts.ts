import { ALL_SCOPES, LOGIN_PATTERN } from '@hivegate/shared';
import { lockForTransaction, type Database } from '../db/database.ts';
import { MAX_PASSWORD_LENGTH, newPasswordProblem } from './password-rules.ts';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';
import { TokensRepository, type WebSessionRecord } from './tokens-repository.ts';
import { LoginTakenError, UsersRepository, type User } from './users-repository.ts';

export { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules.ts';

export class AccountError extends Error {
  constructor(
    message: string,
    readonly code: 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'TOO_MANY_ATTEMPTS',
    /** The argument at fault, for a client to mark its field. */
    readonly field?: string,
  ) {
    super(message);
  }
}

export { LOGIN_PATTERN };

export interface AccountPolicy {
  sessionDays: number;
  /**
   * Failed sign-ins allowed within the window: for one login from one address (the guesser is stopped, the owner
   * signing in from elsewhere is not), from one address for any logins, and for one login from all addresses together
   * (a backstop against guessing spread over many addresses, high enough that locking an owner out takes that many).
   */
  maxFailuresPerLoginAndAddress: number;
  maxFailuresPerAddress: number;
  maxFailuresPerLogin: number;
  failureWindowMinutes: number;
  /**
   * Sign-ups allowed from one address within their window: each makes an account and costs a password hash, and
   * nothing else stops one client from making any number. A handful an hour lets a household or an office behind one
   * address sign up; a script gets no further.
   */
  maxSignUpsPerAddress: number;
  signUpWindowMinutes: number;
}

export const DEFAULT_ACCOUNT_POLICY: AccountPolicy = {
  sessionDays: 30,
  maxFailuresPerLoginAndAddress: 10,
  maxFailuresPerAddress: 50,
  maxFailuresPerLogin: 100,
  failureWindowMinutes: 15,
  maxSignUpsPerAddress: 5,
  signUpWindowMinutes: 60,
};

export interface SignedIn {
  user: User;
  token: string;
  expiresAt: Date;
}

/** Password accounts for the web app: the session is a token like any other, of kind `session`. */
export class AccountService {
  constructor(
    private readonly db: Database,
    private readonly users: UsersRepository,
    private readonly tokens: TokenService,
    private readonly policy: AccountPolicy = DEFAULT_ACCOUNT_POLICY,
  ) {}

  /** `client`: the browser and system signed in from ("Firefox on Windows"), shown in the user's list of sign-ins. */
  async signUp(login: string, password: string, address: string, client?: string): Promise<SignedIn> {
    if (!LOGIN_PATTERN.test(login)) throw new AccountError('login must be 3-100 letters, digits or . _ @ + -', 'BAD_USER_INPUT', 'login');
    const weak = newPasswordProblem(password, 'password');
    if (weak) throw new AccountError(weak, 'BAD_USER_INPUT', 'password');
    // Before the sign-up counts: a taken login (the answer says so anyway) need not cost a hash or one of the address's tries.
    if (await this.users.findByLogin(login)) throw new AccountError('that login is taken', 'BAD_USER_INPUT');
    await this.recordSignUp(address);
    let user: User;
    try {
      user = await this.users.create(login, await hashPassword(password));
    } catch (err) {
      if (err instanceof LoginTakenError) throw new AccountError('that login is taken', 'BAD_USER_INPUT');
      throw err;
    }
    return this.startSession(user, client);
  }

  async signIn(login: string, password: string, address: string, client?: string): Promise<SignedIn> {
    // Counted before the password is checked: a check made before recording let parallel guesses all pass it.
    await this.recordAttempt(login, address);
    const user = await this.users.findByLogin(login);
    // Hash even for unknown logins, so the answer's timing does not tell which logins exist.
    const ok = await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), user?.passwordHash ?? (await DUMMY_HASH_PROMISE));
    // The recorded attempt stays as the failure (as it does if the check itself fails).
    if (!user || !user.passwordHash || !ok) throw new AccountError('login or password is wrong', 'UNAUTHENTICATED');
    // Only this address's failures: a guesser elsewhere keeps the count it has earned.
    await this.db.query('DELETE FROM login_failures WHERE login = $1 AND address = $2', [login, address]);
    return this.startSession(user, client);
  }

  async signOut(tokenId: string): Promise<void> {
    await this.db.query(`UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [tokenId]);
    await this.tokens.forget(tokenId);
  }

  /** The user's web sessions that still stand; `current` marks the one asking. */
  async sessions(userId: number, currentSessionId: string): Promise<(WebSessionRecord & { current: boolean })[]> {
    const sessions = await new TokensRepository(this.db).listSessions(userId);
    return sessions.map((session) => ({ ...session, current: session.id === currentSessionId }));
  }

  /**
   * Signs out one of the user's other web sessions (a browser left signed in, a cookie that may be stolen). Signing
   * out one already signed out is no error, as with tokens: a client retrying after a lost answer is told it is done.
   */
  async revokeSession(userId: number, currentSessionId: string, sessionId: string): Promise<void> {
    if (sessionId === currentSessionId) throw new AccountError('id is this session: sign out instead (signOut) to end it', 'BAD_USER_INPUT', 'id');
    const outcome = await new TokensRepository(this.db).revoke(sessionId, userId, 'session');
    if (outcome === 'missing') throw new AccountError('id names no web session of yours', 'BAD_USER_INPUT', 'id');
    await this.tokens.forget(sessionId);
  }

  /** Signs out every web session of the user but the one asking; returns how many were signed out. */
  async signOutOtherSessions(userId: number, currentSessionId: string): Promise<number> {
    const revoked = await new TokensRepository(this.db).revokeSessions(userId, currentSessionId);
    for (const id of revoked) await this.tokens.forget(id);
    return revoked.length;
  }

  /**
   * Sets a new password for a signed-in user who knows the current one, checked under the sign-in throttle (a wrong
   * one counts as a failed sign-in, so a stolen session cannot be used to guess the password). Every other web session
   * is signed out, as whoever changes a password may be shutting someone out; the asking one stays, and so do API
   * tokens (devices would stop sending for a reason that has nothing to do with them). Returns how many were signed out.
   */
  async changePassword(userId: number, currentSessionId: string, currentPassword: string, newPassword: string, address: string): Promise<number> {
    // Checked before the throttle: a weak new password costs no hash and is no guess at the current one.
    const weak = newPasswordProblem(newPassword, 'newPassword');
    if (weak) throw new AccountError(weak, 'BAD_USER_INPUT', 'newPassword');
    if (newPassword === currentPassword) throw new AccountError('newPassword must differ from currentPassword', 'BAD_USER_INPUT', 'newPassword');
    const known = await this.users.findById(userId);
    if (!known) throw new AccountError('this account no longer exists', 'UNAUTHENTICATED');
    await this.recordAttempt(known.login, address);
    const user = await this.users.findByLogin(known.login);
    const ok = await verifyPassword(currentPassword.slice(0, MAX_PASSWORD_LENGTH), user?.passwordHash ?? (await DUMMY_HASH_PROMISE));
    // Not UNAUTHENTICATED: the session is good, and clients take that code to mean it has ended.
    if (!user?.passwordHash || !ok) throw new AccountError('currentPassword is wrong', 'BAD_USER_INPUT', 'currentPassword');
    await this.db.query('DELETE FROM login_failures WHERE login = $1 AND address = $2', [known.login, address]);
    const passwordHash = await hashPassword(newPassword);
    // One step: a new password with the old sessions still in would leave open what the change meant to close.
    const revoked = await this.db.transaction(async (tx) => {
      await new UsersRepository(tx).setPasswordHash(known.login, passwordHash);
      return new TokensRepository(tx).revokeSessions(userId, currentSessionId);
    });
    for (const id of revoked) await this.tokens.forget(id);
    return revoked.length;
  }

  private async startSession(user: User, client?: string): Promise<SignedIn> {
    const expiresAt = new Date(Date.now() + this.policy.sessionDays * 86_400_000);
    const { token } = await this.tokens.issue({ userId: user.id, name: 'web session', kind: 'session', scopes: [ALL_SCOPES], expiresAt, client: client ?? null });
    return { user: { id: user.id, login: user.login, createdAt: user.createdAt }, token, expiresAt };
  }

  /**
   * Records a sign-in attempt unless a limit is reached, and refuses it then. The count and the insert are one step
   * under locks on the login and on the address: counted first and recorded after the password check, parallel
   * guesses all passed the count before any was recorded. So a row is a password check that failed or is running
   * (success deletes it). A refused attempt is not recorded: it checked no password, and cheap refused requests from
   * one address would otherwise fill the login's count and lock its owner out from everywhere.
   */
  private async recordAttempt(login: string, address: string): Promise<void> {
    const reached = await this.db.transaction(async (tx) => {
      // Always the login's lock before the address's, so that two attempts never each hold the lock the other waits for.
      await lockForTransaction(tx, `sign-in login ${login}`);
      await lockForTransaction(tx, `sign-in address ${address}`);
      const { rows } = await tx.query<{ kind: 'pair' | 'address' | 'login'; failures: number; oldest: Date | null }>(
        `WITH recent AS (
           SELECT login, address, failed_at FROM login_failures
           WHERE failed_at > now() - make_interval(mins => $3) AND (login = $1 OR address = $2))
         SELECT 'pair' AS kind, count(*)::int AS failures, min(failed_at) AS oldest FROM recent WHERE login = $1 AND address = $2
         UNION ALL SELECT 'address', count(*)::int, min(failed_at) FROM recent WHERE address = $2
         UNION ALL SELECT 'login', count(*)::int, min(failed_at) FROM recent WHERE login = $1`,
        [login, address, this.policy.failureWindowMinutes],
      );
      const allowed = { pair: this.policy.maxFailuresPerLoginAndAddress, address: this.policy.maxFailuresPerAddress, login: this.policy.maxFailuresPerLogin };
      const over = rows.filter((row) => row.failures >= allowed[row.kind]);
      if (over.length === 0) await tx.query('INSERT INTO login_failures (login, address) VALUES ($1, $2)', [login, address]);
      return over;
    });
    if (reached.length === 0) return;
    throw new AccountError(`too many failed sign-ins; try again in ${minutesUntilFree(reached, this.policy.failureWindowMinutes)}`, 'TOO_MANY_ATTEMPTS');
  }

  /**
   * Records a sign-up from this address unless its limit is reached, and refuses it then; counted and recorded as one
   * step under a lock on the address, so that sign-ups sent at once cannot all pass the count (as sign-ins could). A
   * refused sign-up is not recorded: it cost nothing, and a client retrying would otherwise never be let in again.
   */
  private async recordSignUp(address: string): Promise<void> {
    const reached = await this.db.transaction(async (tx) => {
      await lockForTransaction(tx, `sign-up address ${address}`);
      const { rows } = await tx.query<{ signUps: number; oldest: Date | null }>(
        `SELECT count(*)::int AS "signUps", min(attempted_at) AS oldest FROM signup_attempts
         WHERE address = $1 AND attempted_at > now() - make_interval(mins => $2)`,
        [address, this.policy.signUpWindowMinutes],
      );
      const recent = rows[0]!;
      if (recent.signUps >= this.policy.maxSignUpsPerAddress) return [recent];
      await tx.query('INSERT INTO signup_attempts (address) VALUES ($1)', [address]);
      return [];
    });
    if (reached.length === 0) return;
    throw new AccountError(`too many sign-ups from this address; try again in ${minutesUntilFree(reached, this.policy.signUpWindowMinutes)}`, 'TOO_MANY_ATTEMPTS');
  }

  /** Forgets sign-in failures and sign-ups older than their windows (run with the periodic maintenance). */
  async pruneAttempts(): Promise<void> {
    await this.db.query(`DELETE FROM login_failures WHERE failed_at < now() - make_interval(mins => $1)`, [this.policy.failureWindowMinutes]);
    await this.db.query(`DELETE FROM signup_attempts WHERE attempted_at < now() - make_interval(mins => $1)`, [this.policy.signUpWindowMinutes]);
  }
}

/** "N minutes" until the rows counted free a limit again: when the oldest of them leaves the window. */
function minutesUntilFree(reached: { oldest: Date | null }[], windowMinutes: number): string {
  const freeAt = Math.max(...reached.map((row) => (row.oldest?.getTime() ?? Date.now()) + windowMinutes * 60_000));
  const minutes = Math.max(1, Math.ceil((freeAt - Date.now()) / 60_000));
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
