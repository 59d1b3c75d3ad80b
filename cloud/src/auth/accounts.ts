import { ALL_SCOPES } from '@hivegate/shared';
import type { Database } from '../db/database.ts';
import { DUMMY_HASH_PROMISE, hashPassword, verifyPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';
import { LoginTakenError, type User, type UsersRepository } from './users-repository.ts';

export class AccountError extends Error {
  constructor(
    message: string,
    readonly code: 'BAD_USER_INPUT' | 'UNAUTHENTICATED' | 'TOO_MANY_ATTEMPTS',
  ) {
    super(message);
  }
}

export const LOGIN_PATTERN = /^[\w.@+-]{3,100}$/;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

export interface AccountPolicy {
  sessionDays: number;
  /** Failed sign-ins allowed per login, and per client address, within the window. */
  maxFailuresPerLogin: number;
  maxFailuresPerAddress: number;
  failureWindowMinutes: number;
}

export const DEFAULT_ACCOUNT_POLICY: AccountPolicy = { sessionDays: 30, maxFailuresPerLogin: 10, maxFailuresPerAddress: 50, failureWindowMinutes: 15 };

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

  async signUp(login: string, password: string): Promise<SignedIn> {
    if (!LOGIN_PATTERN.test(login)) throw new AccountError('login must be 3-100 letters, digits or . _ @ + -', 'BAD_USER_INPUT');
    if (password.length < MIN_PASSWORD_LENGTH) throw new AccountError(`password must be at least ${MIN_PASSWORD_LENGTH} characters long`, 'BAD_USER_INPUT');
    if (password.length > MAX_PASSWORD_LENGTH) throw new AccountError(`password must be at most ${MAX_PASSWORD_LENGTH} characters long`, 'BAD_USER_INPUT');
    let user: User;
    try {
      user = await this.users.create(login, await hashPassword(password));
    } catch (err) {
      if (err instanceof LoginTakenError) throw new AccountError('that login is taken', 'BAD_USER_INPUT');
      throw err;
    }
    return this.startSession(user);
  }

  async signIn(login: string, password: string, address: string): Promise<SignedIn> {
    await this.assertNotThrottled(login, address);
    const user = await this.users.findByLogin(login);
    // Hash even for unknown logins, so the answer's timing does not tell which logins exist.
    const ok = await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), user?.passwordHash ?? (await DUMMY_HASH_PROMISE));
    if (!user || !user.passwordHash || !ok) {
      await this.db.query('INSERT INTO login_failures (login, address) VALUES ($1, $2)', [login, address]);
      throw new AccountError('login or password is wrong', 'UNAUTHENTICATED');
    }
    await this.db.query('DELETE FROM login_failures WHERE login = $1', [login]);
    return this.startSession(user);
  }

  async signOut(tokenId: string): Promise<void> {
    await this.db.query(`UPDATE api_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [tokenId]);
    await this.tokens.forget(tokenId);
  }

  private async startSession(user: User): Promise<SignedIn> {
    const expiresAt = new Date(Date.now() + this.policy.sessionDays * 86_400_000);
    const { token } = await this.tokens.issue({ userId: user.id, name: 'web session', kind: 'session', scopes: [ALL_SCOPES], expiresAt });
    return { user: { id: user.id, login: user.login, createdAt: user.createdAt }, token, expiresAt };
  }

  private async assertNotThrottled(login: string, address: string): Promise<void> {
    const { rows } = await this.db.query<{ byLogin: number; byAddress: number }>(
      `SELECT count(*) FILTER (WHERE login = $1)::int AS "byLogin", count(*) FILTER (WHERE address = $2)::int AS "byAddress"
       FROM login_failures WHERE failed_at > now() - make_interval(mins => $3) AND (login = $1 OR address = $2)`,
      [login, address, this.policy.failureWindowMinutes],
    );
    const { byLogin, byAddress } = rows[0]!;
    if (byLogin >= this.policy.maxFailuresPerLogin || byAddress >= this.policy.maxFailuresPerAddress) {
      throw new AccountError(`too many failed sign-ins; try again in ${this.policy.failureWindowMinutes} minutes`, 'TOO_MANY_ATTEMPTS');
    }
  }

  /** Forgets failures older than the window (run with the periodic maintenance). */
  async pruneFailures(): Promise<void> {
    await this.db.query(`DELETE FROM login_failures WHERE failed_at < now() - make_interval(mins => $1)`, [this.policy.failureWindowMinutes]);
  }
}
