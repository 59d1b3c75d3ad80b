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

const COLUMNS = `t.id, t.user_id AS "userId", t.name, t.kind, t.scopes, t.box_ids AS "boxIds", t.created_at AS "createdAt",
  t.expires_at AS "expiresAt", t.last_used_at AS "lastUsedAt", t.revoked_at AS "revokedAt"`;

export class TokensRepository {
  constructor(private readonly db: Queryable) {}

  async create(token: { id: string; userId: number; name: string; kind?: 'api' | 'session'; scopes: string[]; boxIds?: string[] | null; expiresAt?: Date }) {
    await this.db.query(
      `INSERT INTO api_tokens (id, user_id, name, kind, scopes, box_ids, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [token.id, token.userId, token.name, token.kind ?? 'api', token.scopes, token.boxIds ?? null, token.expiresAt ?? null],
    );
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
  async revoke(id: string, userId?: number): Promise<'revoked' | 'was revoked' | 'missing'> {
    if (!isUuid(id)) return 'missing';
    const { rows } = await this.db.query<{ revokedNow: boolean }>(
      `WITH target AS (SELECT id, revoked_at FROM api_tokens WHERE id = $1 AND ($2::bigint IS NULL OR user_id = $2) FOR UPDATE),
            revoked AS (UPDATE api_tokens SET revoked_at = now() WHERE id IN (SELECT id FROM target WHERE revoked_at IS NULL) RETURNING id)
       SELECT EXISTS (SELECT 1 FROM revoked) AS "revokedNow" FROM target`,
      [id, userId ?? null],
    );
    const row = rows[0];
    if (!row) return 'missing';
    return row.revokedNow ? 'revoked' : 'was revoked';
  }

  /** Revokes every web session of a user (a new password signs them out everywhere); returns their ids. */
  async revokeSessions(userId: number): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(
      `UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND kind = 'session' AND revoked_at IS NULL RETURNING id`,
      [userId],
    );
    return rows.map((row) => row.id);
  }
}

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
