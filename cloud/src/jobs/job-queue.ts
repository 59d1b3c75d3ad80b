import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from '../db/database.ts';
import { isStorageFault } from '../storage/faults.ts';
import { afterFailure, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.ts';

/** NOTIFY channel that wakes idle workers of every instance when a job is enqueued or released. */
export const JOBS_CHANNEL = 'hivegate_jobs';

export interface JobQueueConfig {
  /** Jobs this instance runs at once; 0 makes it enqueue-only. */
  workers: number;
  /** How long a claim holds without a heartbeat; a worker that dies loses its jobs after this. */
  leaseSeconds: number;
  /** Safety-net poll when no notification arrives (a notification lost while reconnecting, a clock edge). */
  pollSeconds: number;
}

export interface JobRecord<P = unknown> {
  id: number;
  kind: string;
  payload: P;
  state: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  maxAttempts: number;
  runAt: Date;
  lockedUntil: Date | null;
  lastError: string | null;
}

/** What a handler gets: the job and a signal that fires when the instance stops or the lease was lost. */
export interface RunningJob<P> {
  id: number;
  kind: string;
  payload: P;
  /** 1 on the first try. */
  attempt: number;
  signal: AbortSignal;
}

export interface JobHandler<P = unknown> {
  run(job: RunningJob<P>): Promise<void>;
  /** Called once when the job is FAILED for good, so the record it works on can say why. */
  onFailed?(job: JobRecord<P>, reason: string): Promise<void>;
  /** Attempts before FAILED (default 5). */
  maxAttempts?: number;
  backoff?: BackoffPolicy;
  /**
   * Jobs of a quick kind (a heatmap render, under a second) run in a lane of their own, one at a time beside the
   * `workers` of the other kinds: with one worker, renders waited behind a long transcode for as long as it took.
   */
  quick?: boolean;
}

/** Thrown by a handler for a failure another attempt cannot fix (a file that is not a video). */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError';
}

export interface EnqueueOptions {
  /** Start no earlier than this many seconds from now. */
  delaySeconds?: number;
  /** While a job of this kind with this key waits, enqueuing another adds nothing (debounce, coalescing). */
  dedupeKey?: string;
  maxAttempts?: number;
  /** Enqueue inside this transaction: the job exists only if it commits. */
  tx?: Queryable;
}

interface JobRow {
  id: number;
  kind: string;
  payload: unknown;
  state: JobRecord['state'];
  attempts: number;
  max_attempts: number;
  run_at: Date;
  locked_until: Date | null;
  last_error: string | null;
}

const DEFAULT_MAX_ATTEMPTS = 5;
const UNIQUE_VIOLATION = '23505';

function toRecord<P>(row: JobRow): JobRecord<P> {
  return {
    id: Number(row.id),
    kind: row.kind,
    payload: row.payload as P,
    state: row.state,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: new Date(row.run_at),
    lockedUntil: row.locked_until ? new Date(row.locked_until) : null,
    lastError: row.last_error,
  };
}

function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

/**
 * A durable job queue in Postgres. Any instance may enqueue; every instance with workers > 0 runs jobs of the kinds
 * defined on it. Claiming uses `FOR UPDATE SKIP LOCKED`, so instances never take the same job, and a lease renewed
 * by a heartbeat, so the job of a crashed instance is taken again once its lease runs out. Failures retry with
 * backoff up to the kind's max attempts, then the job is FAILED with the reason. Idle workers sleep until a
 * `NOTIFY` (a job was enqueued anywhere), the next scheduled run_at, or the slow safety-net poll.
 */
export class JobQueue {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly handlers = new Map<string, JobHandler<never>>();
  private readonly running = new Map<number, { controller: AbortController; done: Promise<void>; quick: boolean }>();
  private unlisten?: () => Promise<void>;
  private timer?: NodeJS.Timeout;
  private started = false;
  private stopping = false;
  private pumping?: Promise<void>;
  private pumpAgain = false;

  constructor(
    private readonly db: Database,
    private readonly config: JobQueueConfig,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Declares how jobs of a kind run; call before start(). */
  define<P>(kind: string, handler: JobHandler<P>): void {
    if (this.started) throw new Error(`job kind "${kind}" must be defined before the queue starts`);
    if (this.handlers.has(kind)) throw new Error(`job kind "${kind}" is already defined`);
    this.handlers.set(kind, handler as JobHandler<never>);
  }

  /** Adds a job; returns its id, or null when a waiting job with the same dedupe key already covers it. */
  async enqueue(kind: string, payload: unknown, options: EnqueueOptions = {}): Promise<number | null> {
    const q = options.tx ?? this.db;
    const maxAttempts = options.maxAttempts ?? this.handlers.get(kind)?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    const { rows } = await q.query<{ id: number }>(
      `INSERT INTO jobs (kind, payload, dedupe_key, max_attempts, run_at)
       VALUES ($1, $2::jsonb, $3, $4, now() + $5::float8 * interval '1 second')
       ON CONFLICT (kind, dedupe_key) WHERE state = 'queued' AND dedupe_key IS NOT NULL DO NOTHING
       RETURNING id`,
      [kind, JSON.stringify(payload ?? {}), options.dedupeKey ?? null, maxAttempts, options.delaySeconds ?? 0],
    );
    if (!rows[0]) return null;
    // Inside a transaction the notification is delivered at commit, when the job becomes visible.
    await q.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, kind]);
    return Number(rows[0].id);
  }

  async get<P = unknown>(id: number): Promise<JobRecord<P> | null> {
    const { rows } = await this.db.query<JobRow>('SELECT * FROM jobs WHERE id = $1', [id]);
    return rows[0] ? toRecord<P>(rows[0]) : null;
  }

  /** Jobs of a kind, newest first (tests, diagnostics). */
  async list<P = unknown>(kind: string): Promise<JobRecord<P>[]> {
    const { rows } = await this.db.query<JobRow>('SELECT * FROM jobs WHERE kind = $1 ORDER BY id DESC', [kind]);
    return rows.map((row) => toRecord<P>(row));
  }

  /** Forgets finished jobs: done ones after doneDays, failed ones (kept to diagnose) after failedDays. */
  async purgeFinished(doneDays = 1, failedDays = 30): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM jobs WHERE (state = 'done' AND finished_at < now() - $1::float8 * interval '1 day')
          OR (state = 'failed' AND finished_at < now() - $2::float8 * interval '1 day')`,
      [doneDays, failedDays],
    );
    return rowCount;
  }

  async start(): Promise<void> {
    this.started = true;
    if (this.config.workers <= 0 || this.handlers.size === 0) return;
    this.unlisten = await this.db.listen(JOBS_CHANNEL, (kind) => {
      if (kind === '' || this.handlers.has(kind)) this.wake();
    });
    this.wake();
  }

  /**
   * Stops claiming, aborts the jobs running here and hands them back (queued again, the attempt not counted), so
   * another instance or the next start continues them at once instead of after the lease.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    await this.unlisten?.().catch(() => undefined);
    // A claim in flight finishes first, so the job it takes is counted among the running ones below.
    await this.pumping;
    for (const { controller } of this.running.values()) controller.abort(new Error('the service is stopping'));
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private wake(): void {
    if (this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err: unknown) => this.log.error({ err }, 'job queue: claiming failed'))
      .finally(() => {
        this.pumping = undefined;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.wake();
        }
      });
  }

  /** The kinds a free worker may claim now: the quick lane's while it is free, the others' while workers are. */
  private claimableKinds(): string[] {
    const running = [...this.running.values()];
    const quickFree = !running.some((r) => r.quick);
    const othersFree = running.filter((r) => !r.quick).length < this.config.workers;
    return [...this.handlers].filter(([, handler]) => (handler.quick ? quickFree : othersFree)).map(([kind]) => kind);
  }

  /** Claims due jobs while there are free workers, then sleeps until the next due job or the poll interval. */
  private async pump(): Promise<void> {
    let delayMs = this.config.pollSeconds * 1000;
    try {
      for (let kinds = this.claimableKinds(); !this.stopping && kinds.length > 0; kinds = this.claimableKinds()) {
        const job = await this.claim(kinds);
        if (!job) break;
        this.launch(job);
      }
      const free = this.claimableKinds();
      if (!this.stopping && free.length > 0) {
        const next = await this.secondsUntilNextDue(free);
        if (next !== null) delayMs = Math.min(delayMs, Math.max(10, next * 1000 + 5));
      }
    } finally {
      if (!this.stopping) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.wake(), delayMs);
        this.timer.unref();
      }
    }
  }

  private async claim(kinds: string[]): Promise<JobRecord | null> {
    const { rows } = await this.db.query<JobRow>(
      `UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1,
              locked_until = now() + $2::float8 * interval '1 second', updated_at = now()
       WHERE id = (
         SELECT id FROM jobs
         WHERE kind = ANY($3::text[])
           AND ((state = 'queued' AND run_at <= now()) OR (state = 'running' AND locked_until < now()))
         ORDER BY run_at, id
         LIMIT 1
         FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [this.workerId, this.config.leaseSeconds, kinds],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  private async secondsUntilNextDue(kinds: string[]): Promise<number | null> {
    const { rows } = await this.db.query<{ seconds: number | null }>(
      `SELECT EXTRACT(EPOCH FROM LEAST(
                (SELECT min(run_at) FROM jobs WHERE state = 'queued' AND kind = ANY($1::text[])),
                (SELECT min(locked_until) FROM jobs WHERE state = 'running' AND kind = ANY($1::text[]))
              ) - now())::float8 AS seconds`,
      [kinds],
    );
    const seconds = rows[0]?.seconds;
    return seconds === null || seconds === undefined ? null : Math.max(0, Number(seconds));
  }

  private launch(job: JobRecord): void {
    const controller = new AbortController();
    if (this.stopping) controller.abort(new Error('the service is stopping'));
    const done = this.execute(job, controller)
      .catch((err: unknown) => this.log.error({ err, jobId: job.id, kind: job.kind }, 'job queue: bookkeeping failed'))
      .finally(() => {
        this.running.delete(job.id);
        this.wake();
      });
    this.running.set(job.id, { controller, done, quick: this.handlers.get(job.kind)?.quick === true });
  }

  private async execute(job: JobRecord, controller: AbortController): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    if (job.attempts > job.maxAttempts) {
      // The last attempt's worker vanished without a word (its lease ran out): that attempt failed.
      await this.fail(job, handler, `gave up after ${job.maxAttempts} attempts: the worker running it stopped (lease expired)`);
      return;
    }
    let leaseLost = false;
    const heartbeat = setInterval(() => {
      this.db
        .query(`UPDATE jobs SET locked_until = now() + $3::float8 * interval '1 second' WHERE id = $1 AND locked_by = $2 AND state = 'running'`, [
          job.id,
          this.workerId,
          this.config.leaseSeconds,
        ])
        .then(({ rowCount }) => {
          if (rowCount === 0 && !controller.signal.aborted) {
            leaseLost = true;
            controller.abort(new Error('the job lease was lost to another worker'));
          }
        })
        .catch((err: unknown) => this.log.warn({ err, jobId: job.id }, 'job queue: heartbeat failed'));
    }, (this.config.leaseSeconds * 1000) / 3);
    heartbeat.unref();

    let failure: unknown;
    let succeeded = false;
    try {
      await handler.run({ id: job.id, kind: job.kind, payload: job.payload as never, attempt: job.attempts, signal: controller.signal });
      succeeded = true;
    } catch (err) {
      failure = err;
    } finally {
      clearInterval(heartbeat);
    }

    if (leaseLost) return; // another worker owns it now
    if (this.stopping && controller.signal.aborted) {
      await this.release(job);
      return;
    }
    if (succeeded) {
      await this.db.query(
        `UPDATE jobs SET state = 'done', finished_at = now(), updated_at = now(), locked_by = NULL, locked_until = NULL
         WHERE id = $1 AND locked_by = $2`,
        [job.id, this.workerId],
      );
      return;
    }
    const error = messageOf(failure);
    const outcome = afterFailure(job.attempts, job.maxAttempts, error, {
      permanent: failure instanceof PermanentJobError,
      policy: handler.backoff ?? DEFAULT_BACKOFF,
    });
    // A storage fault (DATA_DIR read-only or full) is the server's and an operator's to fix: error, not warn.
    const level = isStorageFault(failure) ? 'error' : 'warn';
    if (!outcome.retry) {
      this.log[level]({ jobId: job.id, kind: job.kind, reason: outcome.reason }, 'job failed');
      await this.fail(job, handler, outcome.reason);
      return;
    }
    // Warn, not info: a failure that repeats (a broken tool, a full disk) must show at the levels operators watch.
    this.log[level]({ jobId: job.id, kind: job.kind, attempt: job.attempts, error, retryInSeconds: outcome.delaySeconds }, 'job will retry');
    await this.requeue(job, `state = 'queued', run_at = now() + $3::float8 * interval '1 second', last_error = $4`, [outcome.delaySeconds, error]);
  }

  private async fail(job: JobRecord, handler: JobHandler<never>, reason: string): Promise<void> {
    const { rowCount } = await this.db.query(
      `UPDATE jobs SET state = 'failed', last_error = $3, finished_at = now(), updated_at = now(), locked_by = NULL, locked_until = NULL
       WHERE id = $1 AND locked_by = $2`,
      [job.id, this.workerId, reason],
    );
    if (rowCount === 1 && handler.onFailed) await handler.onFailed(job as JobRecord<never>, reason);
  }

  /** Hands a job back after a shutdown: due now, this attempt not counted. */
  private async release(job: JobRecord): Promise<void> {
    await this.requeue(job, `state = 'queued', run_at = now(), attempts = attempts - 1`, []);
    await this.db.notify(JOBS_CHANNEL, job.kind).catch(() => undefined);
  }

  /**
   * Puts a claimed job back in the queue. When a newer job with the same dedupe key is already waiting, that one
   * does the same work, so this one is closed as done instead.
   */
  private async requeue(job: JobRecord, assignments: string, params: unknown[]): Promise<void> {
    try {
      await this.db.query(
        `UPDATE jobs SET ${assignments}, locked_by = NULL, locked_until = NULL, updated_at = now() WHERE id = $1 AND locked_by = $2`,
        [job.id, this.workerId, ...params],
      );
    } catch (err) {
      if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
      await this.db.query(
        `UPDATE jobs SET state = 'done', last_error = 'superseded by a newer job with the same key', finished_at = now(),
                updated_at = now(), locked_by = NULL, locked_until = NULL
         WHERE id = $1 AND locked_by = $2`,
        [job.id, this.workerId],
      );
    }
  }
}
