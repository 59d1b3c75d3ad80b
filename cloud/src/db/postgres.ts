import pg from 'pg';
import { DatabaseRefusedError, DatabaseUnavailableError, withTimeout, type Database, type PoolStats, type Queryable, type QueryResult } from './database.ts';

const { Pool, Client } = pg;

/** int8 counts and numeric sums come back as numbers, as they do from the embedded database. */
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** Network failures, and the server saying it shuts down, cannot take connections now, or has too many. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300']);

/**
 * The server refusing who connects to what: no such database (3D000), no such role or no pg_hba entry (28000), a
 * wrong password (28P01). They came out of the start-up as a 25-line driver error dump.
 */
const REFUSED_CODES = new Set(['3D000', '28000', '28P01']);

/** Connection-level failures become DatabaseUnavailableError; query errors (constraints, syntax) pass unchanged. */
function classify(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof DatabaseUnavailableError) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && REFUSED_CODES.has(code)) return new DatabaseRefusedError(err);
  if ((typeof code === 'string' && UNAVAILABLE_CODES.has(code)) || /timeout exceeded when trying to connect|Connection terminated/i.test(err.message)) {
    return new DatabaseUnavailableError(err);
  }
  return err;
}

/** The connection itself failed: unavailable whatever the driver's error says. */
function unavailable(err: Error): DatabaseUnavailableError {
  const known = classify(err);
  return known instanceof DatabaseUnavailableError ? known : new DatabaseUnavailableError(err);
}

async function classified<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (err) {
    throw classify(err);
  }
}

export interface PostgresOptions {
  url: string;
  poolSize: number;
  connectTimeoutMs?: number;
  /** Shown in pg_stat_activity for every connection of this process (see signerApplicationName in auth/tokens.ts). */
  applicationName?: string;
  onError?: (err: Error) => void;
  /** How often the LISTEN connection is asked for an answer, and how long it has to give one. */
  listenerCheckMs?: number;
  listenerCheckTimeoutMs?: number;
}

const KEEPALIVE_DELAY_MS = 10_000;
const LISTENER_CHECK_MS = 30_000;
const LISTENER_CHECK_TIMEOUT_MS = 10_000;

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private listener?: Listener;

  constructor(private readonly options: PostgresOptions) {
    this.pool = new Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      // TCP keep-alive: a connection a NAT or a failover dropped without a word is found dead, not waited on for ever.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      types: typeParsers,
      options: '-c TimeZone=UTC',
      application_name: options.applicationName,
    });
    // An idle client losing its server must not crash the process; the next query reconnects.
    this.pool.on('error', (err) => options.onError?.(err));
  }

  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async query<R>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
    const result = await classified(this.pool.query(text, params));
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await classified(this.pool.query(sql));
  }

  /**
   * While a client is checked out, pg-pool takes its own 'error' listener off it, and a pg Client whose server goes
   * away emits 'error': with nobody listening, a backend terminated mid-transaction ended the whole process. The
   * listener here keeps it, the transaction fails as unavailable (503), and the dead client leaves the pool.
   */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await classified(this.pool.connect());
    let lost: Error | undefined;
    const onLost = (err: Error) => {
      lost ??= err;
      this.options.onError?.(err);
    };
    client.on('error', onLost);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn({
        query: async <R>(text: string, params?: unknown[]) => {
          const r = await client.query(text, params);
          return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
        },
        exec: async (sql: string) => {
          await client.query(sql);
        },
      });
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (lost === undefined) {
        await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
          broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
        });
      }
      // Whatever fn made of the failure, the transaction died with its connection.
      if (lost !== undefined) throw unavailable(lost);
      throw classify(err);
    } finally {
      client.removeListener('error', onLost);
      // A client that lost its server, or could not roll back, must not serve the next transaction.
      client.release(lost ?? broken);
    }
  }

  async listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>> {
    this.listener ??= new Listener(this.options);
    return this.listener.subscribe(channel, onMessage);
  }

  async notify(channel: string, payload: string): Promise<void> {
    await classified(this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]));
  }

  async ping(timeoutMs: number): Promise<void> {
    await withTimeout(this.pool.query('SELECT 1'), timeoutMs, 'the database');
  }

  async close(): Promise<void> {
    await this.listener?.close();
    await this.pool.end();
  }
}

/**
 * One dedicated connection for all LISTEN channels of this process. It reconnects with backoff when the server
 * goes away and listens again on every channel, so notifications resume after a database restart.
 */
class Listener {
  private client?: pg.Client;
  private connecting?: Promise<pg.Client>;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private closed = false;
  private retryMs = 250;

  constructor(private readonly options: PostgresOptions) {}

  async subscribe(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      const client = await this.connect();
      await client.query(`LISTEN ${quoteIdent(channel)}`);
    }
    set.add(handler);
    return async () => {
      const handlers = this.handlers.get(channel);
      handlers?.delete(handler);
      if (handlers && handlers.size === 0) {
        this.handlers.delete(channel);
        await this.client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
      }
    };
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new Client({
        connectionString: this.options.url,
        connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
        application_name: this.options.applicationName,
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      });
      client.on('notification', (msg) => {
        for (const handler of this.handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
      });
      client.on('error', (err) => {
        this.options.onError?.(err);
        this.dropAndReconnect(client);
      });
      client.on('end', () => this.dropAndReconnect(client));
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      this.client = client;
      this.retryMs = 250;
      this.watch(client);
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /**
   * Asks the listening connection for an answer now and then: one that went silent (its packets dropped, no reset)
   * heard no notification again and said nothing, so live commands waited for their poll to end.
   */
  private watch(client: pg.Client): void {
    const timer = setInterval(() => {
      if (this.client !== client) return clearInterval(timer);
      withTimeout(client.query('SELECT 1'), this.options.listenerCheckTimeoutMs ?? LISTENER_CHECK_TIMEOUT_MS, 'the listening connection').catch((err: unknown) => {
        clearInterval(timer);
        this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
        this.dropAndReconnect(client);
      });
    }, this.options.listenerCheckMs ?? LISTENER_CHECK_MS);
    timer.unref();
  }

  private dropAndReconnect(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    if (this.closed || this.handlers.size === 0) return;
    const retry = () => {
      if (this.closed) return;
      this.connect().catch(() => {
        this.retryMs = Math.min(this.retryMs * 2, 10_000);
        setTimeout(retry, this.retryMs).unref();
      });
    };
    setTimeout(retry, this.retryMs).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
