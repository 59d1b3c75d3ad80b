import type { Queryable } from '../db/database.ts';

export interface User {
  id: number;
  login: string;
  createdAt: Date;
}

export class LoginTakenError extends Error {}

export class UsersRepository {
  constructor(private readonly db: Queryable) {}

  async create(login: string, passwordHash: string | null = null): Promise<User> {
    const { rows } = await this.db.query<User>(
      `INSERT INTO users (login, password_hash) VALUES ($1, $2) ON CONFLICT (login) DO NOTHING
       RETURNING id, login, created_at AS "createdAt"`,
      [login, passwordHash],
    );
    if (!rows[0]) throw new LoginTakenError(`login "${login}" is taken`);
    return rows[0];
  }

  async findByLogin(login: string): Promise<(User & { passwordHash: string | null }) | undefined> {
    const { rows } = await this.db.query<User & { passwordHash: string | null }>(
      `SELECT id, login, created_at AS "createdAt", password_hash AS "passwordHash" FROM users WHERE login = $1`,
      [login],
    );
    return rows[0];
  }

  /** Sets a user's password hash; false when there is no such login. */
  async setPasswordHash(login: string, passwordHash: string): Promise<boolean> {
    const { rowCount } = await this.db.query(`UPDATE users SET password_hash = $2 WHERE login = $1`, [login, passwordHash]);
    return rowCount > 0;
  }

  async findById(id: number): Promise<User | undefined> {
    const { rows } = await this.db.query<User>(`SELECT id, login, created_at AS "createdAt" FROM users WHERE id = $1`, [id]);
    return rows[0];
  }

  async list(): Promise<User[]> {
    const { rows } = await this.db.query<User>(`SELECT id, login, created_at AS "createdAt" FROM users ORDER BY id`);
    return rows;
  }
}
