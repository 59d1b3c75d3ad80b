import type { Queryable } from '../db/database.ts';

export interface TokenRecord {
  id: string;
  userId: number;
  name: string;
  kind: 'api' | 'session';
  scopes: string[];
  boxIds: string[] | null;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A web session as its owner sees it: never its token. */
export interface WebSessionRecord {
  id: string;
  /** The browser and system it was signed in from ("Firefox on Windows"), when the User-Agent named them. */
  client: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

const COLUMNS = `t.id, t.user_id AS "userId", t.name, t.kind, t.scopes, t.box_ids AS "boxIds", t.created_at AS "createdAt",
  t.expires_at AS "expiresAt", t.last_used_at AS "lastUsedAt", t.revoked_at AS "revokedAt"`;

export class TokensRepository {
  constructor(private readonly db: Queryable) {}

  async create(token: {
    id: string;
    userId: number;
    name: string;
    kind?: 'api' | 'session';
    scopes: string[];
    boxIds?: string[] | null;
    expiresAt?: Date;
    client?: string | null;
  }) {
    await this.db.query(
      `INSERT INTO api_tokens (id, user_id, name, kind, scopes, box_ids, expires_at, client) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [token.id, token.userId, token.name, token.kind ?? 'api', token.scopes, token.boxIds ?? null, token.expiresAt ?? null, token.client ?? null],
    );
  }

  /** Whether a token is an API token or a web session; undefined when there is no such token. */
  async kindOf(id: string): Promise<'api' | 'session' | undefined> {
    if (!isUuid(id)) return undefined;
    const { rows } = await this.db.query<{ kind: 'api' | 'session' }>(`SELECT kind FROM api_tokens WHERE id = $1`, [id]);
    return rows[0]?.kind;
  }

  /** A user's web sessions that still stand (neither signed out nor expired), the most recently used first. */
  async listSessions(userId: number): Promise<WebSessionRecord[]> {
    const { rows } = await this.db.query<WebSessionRecord>(
      `SELECT id, client, created_at AS "createdAt", last_used_at AS "lastUsedAt", expires_at AS "expiresAt"
       FROM api_tokens
       WHERE user_id = $1 AND kind = 'session' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
       ORDER BY coalesce(last_used_at, created_at) DESC, id`,
      [userId],
    );
    return rows;
  }

  async status(id: string): Promise<{ revokedAt: Date | null; expiresAt: Date | null } | undefined> {
    const { rows } = await this.db.query<{ revokedAt: Date | null; expiresAt: Date | null }>(
      `SELECT revoked_at AS "revokedAt", expires_at AS "expiresAt" FROM api_tokens WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  async touch(id: string): Promise<void> {
    await this.db.query('UPDATE api_tokens SET last_used_at = now() WHERE id = $1', [id]);
  }

  async list(userId: number, kind: 'api' | 'session' = 'api'): Promise<TokenRecord[]> {
    const { rows } = await this.db.query<TokenRecord>(
      `SELECT ${COLUMNS} FROM api_tokens t WHERE t.user_id = $1 AND t.kind = $2 ORDER BY t.created_at, t.id`,
      [userId, kind],
    );
    return rows;
  }

  async listAll(): Promise<(TokenRecord & { login: string })[]> {
    const { rows } = await this.db.query<TokenRecord & { login: string }>(
      `SELECT ${COLUMNS}, u.login
       FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.kind = 'api' ORDER BY t.created_at, t.id`,
    );
    return rows;
  }

  /**
   * Revokes a token (of this user, when given). Revoking a revoked token is no error: a client that retries
   * because the first answer was lost must not be told the token is unknown.
   */
  async revoke(id: string, userId?: number, kind?: 'api' | 'session'): Promise<'revoked' | 'was revoked' | 'missing'> {
    if (!isUuid(id)) return 'missing';
    const { rows } = await this.db.query<{ revokedNow: boolean }>(
      `WITH target AS (SELECT id, revoked_at FROM api_tokens WHERE id = $1 AND ($2::bigint IS NULL OR user_id = $2) AND ($3::text IS NULL OR kind = $3) FOR UPDATE),
            revoked AS (UPDATE api_tokens SET revoked_at = now() WHERE id IN (SELECT id FROM target WHERE revoked_at IS NULL) RETURNING id)
       SELECT EXISTS (SELECT 1 FROM revoked) AS "revokedNow" FROM target`,
      [id, userId ?? null, kind ?? null],
    );
    const row = rows[0];
    if (!row) return 'missing';
    return row.revokedNow ? 'revoked' : 'was revoked';
  }

  /**
   * Revokes every web session of a user (a new password signs them out everywhere) but `keep`, the session that asked
   * when it was the user themselves; returns the ids of those revoked.
   */
  async revokeSessions(userId: number, keep?: string): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(
      `UPDATE api_tokens SET revoked_at = now()
       WHERE user_id = $1 AND kind = 'session' AND revoked_at IS NULL AND ($2::uuid IS NULL OR id <> $2) RETURNING id`,
      [userId, keep ?? null],
    );
    return rows.map((row) => row.id);
  }
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
