/**
 * The one query interface the rest of the cloud uses, served either by a Postgres server (`pg` pool) or by the
 * embedded Postgres (PGlite) under the data dir, so one set of SQL migrations and repositories serves both.
 */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<R>>;
  /** Runs a script of several statements (migrations); no parameters. */
  exec(sql: string): Promise<void>;
}

/** A connection pool's state at one moment. */
export interface PoolStats {
  /** Connections open, busy or idle. */
  total: number;
  idle: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'embedded';
  /** The pool's state, for a database that pools connections (a Postgres server); the embedded one has none. */
  poolStats?(): PoolStats;
  /** Runs `fn` in one transaction on one connection; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to a NOTIFY channel; resolves to the unsubscribe function. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
  /** Resolves when the database answers within `timeoutMs`, rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Takes a transaction-scoped advisory lock named by text, held until the transaction ends: for work that must not run
 * twice at once for the same thing (a login's attempts, one upload's bytes). Outside a transaction it is let go at once.
 */
export async function lockForTransaction(tx: Queryable, name: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
}

export class DatabaseTimeoutError extends Error {}

/**
 * The database could not take the query: every pooled connection stayed busy past the connect timeout, or the
 * server refused, dropped or is shutting down the connection. Not the client's fault and usually brief: requests
 * that meet it are answered 503 with Retry-After, so devices back off instead of seeing a server error.
 */
export class DatabaseUnavailableError extends Error {
  readonly statusCode = 503;
  constructor(
    override readonly cause: Error,
    message = `database unavailable: ${cause.message}`,
  ) {
    super(message);
  }
}

/**
 * The server answered but turned the connection away: no such database or role, or a wrong password. Waiting does
 * not help, DATABASE_URL must change; still a 503 to requests (a password rotated under a running service).
 */
export class DatabaseRefusedError extends DatabaseUnavailableError {
  constructor(cause: Error) {
    super(cause, `the database server refused the connection: ${cause.message}`);
  }
}

/**
 * What a log line needs of a lost connection: its message and code. pg-pool hangs the whole client on the error
 * (`err.client`), which came out as 3 KB a line, the backend's process id and cancel key among it.
 */
export function connectionErrorForLog(err: Error): { message: string; code?: string } {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
}

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeoutError(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
