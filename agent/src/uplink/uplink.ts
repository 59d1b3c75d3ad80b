import axios, { type AxiosInstance } from 'axios';
import pRetry, { AbortError } from 'p-retry';
import { MAX_BATCH_ITEMS } from '@hivegate/shared';
import type { Outbox, OutboxRecord, RecordKind } from '../outbox/outbox.ts';
import { describeNetworkError } from './network-errors.ts';
import { classifyStatus, parseRetryAfter, retryDelay, type BackoffOptions } from './retry-policy.ts';

export const ENDPOINTS: Record<RecordKind, { path: string; batch: boolean }> = {
  metrics: { path: '/iot/v1/metrics', batch: true },
  movement: { path: '/entrance/v1/movement', batch: true },
  trajectories: { path: '/api/entrance-heatmaps/trajectories', batch: false },
};

export type UplinkEvent =
  | { type: 'sent'; kind: RecordKind; count: number }
  | { type: 'retrying'; kind: RecordKind; attempt: number; delayMs: number; reason: string }
  | { type: 'quarantined'; kind: RecordKind; dedupeKey: string; reason: string }
  | { type: 'blocked'; kind: RecordKind; status: number; reason: string; retryAt: number };

export interface UplinkOptions {
  outbox: Outbox;
  cloudUrl: string;
  token: string;
  /** Records per request for batch endpoints (the cloud accepts up to 1000). */
  batchSize?: number;
  requestTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** After a 401/403 (or an endpoint that does not exist) nothing is sent until the credentials change or this passes. */
  blockedBackoffMs?: number;
  /** How often an idle uplink looks for new records when nobody calls `notify()`. */
  idleMs?: number;
  onEvent?: (event: UplinkEvent) => void;
  random?: () => number;
}

class RetryableError extends Error {
  constructor(message: string, readonly retryAfterMs: number | undefined) {
    super(message);
  }
}
class SplitError extends Error {}
class BlockedError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

const SEND_ORDER: RecordKind[] = ['movement', 'metrics', 'trajectories'];

/**
 * Delivers the outbox to the cloud. Transient trouble (network, 5xx, 429) is retried with jittered backoff
 * that honours Retry-After; a 400/413 splits the batch until the one bad record is isolated and quarantined;
 * a 401/403 stops all sending and is reported until the credentials change.
 */
export class Uplink {
  private http: AxiosInstance | undefined;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Ends the backoff a retry is waiting out, when that wait may be cut short (`cloudAnswers`). */
  private cutBackoff: (() => void) | undefined;
  private blockedUntil = 0;
  /** Why the cloud refused the token, with what to check, while that stops all sending. */
  private blockedReason = '';
  /** Kinds whose endpoint the cloud does not have (an older cloud): only they wait, the rest keeps flowing. */
  private readonly kindBlockedUntil = new Map<RecordKind, number>();
  private passLock: Promise<void> = Promise.resolve();
  private cloudUrl: string;
  private token: string;
  sentRecords = 0;
  quarantinedRecords = 0;
  lastUploadAt: number | undefined;
  lastError: string | undefined;

  constructor(private readonly options: UplinkOptions) {
    this.cloudUrl = options.cloudUrl;
    this.token = options.token;
    const batchSize = options.batchSize ?? MAX_BATCH_ITEMS;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_ITEMS) {
      throw new Error(`uplink.batchSize must be an integer from 1 to ${MAX_BATCH_ITEMS}, got ${batchSize}`);
    }
  }

  get blocked(): boolean {
    return Date.now() < this.blockedUntil;
  }

  /** While a refused token stops all sending: why, and when the uplink tries again by itself. */
  get stopped(): { reason: string; retryAt: number } | undefined {
    return this.blocked ? { reason: this.blockedReason, retryAt: this.blockedUntil } : undefined;
  }

  start(): void {
    if (this.loop) return;
    this.abort = new AbortController();
    this.http = axios.create({ timeout: this.options.requestTimeoutMs ?? 15_000, validateStatus: () => true, maxBodyLength: Infinity });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  /** New records are waiting: send now instead of at the next idle tick. */
  notify(): void {
    this.wake?.();
  }

  /**
   * Another part of the agent has just heard from the cloud (the live link answers again after failing): a retry
   * waiting out its backoff after a network error or a 5xx goes now. It waited up to backoff.maxMs (5 min) after the
   * cloud was back. A wait the cloud asked for (Retry-After) is kept, and so is a refused token's stop.
   */
  cloudAnswers(): void {
    this.cutBackoff?.();
    this.wake?.();
  }

  /** New credentials lift a 401/403 stop at once. */
  updateCredentials(cloudUrl: string, token: string): void {
    this.cloudUrl = cloudUrl;
    this.token = token;
    this.blockedUntil = 0;
    this.kindBlockedUntil.clear();
    this.notify();
  }

  /**
   * Sends until the outbox holds nothing pending; resolves true then, false when `timeoutMs` passed or sending is
   * blocked. Used by `run --once` and on shutdown. Needs `start()` (for the HTTP client) but not the loop.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    const { signal: deadline, release } = deadlineSignal(this.abort.signal, timeoutMs);
    try {
      while (!deadline.aborted) {
        if (this.blocked) return false;
        // The loop may hold the pass (retrying the same batch); the deadline still ends the wait.
        const progressed = await Promise.race([this.sendAvailable(deadline), aborted(deadline)]);
        if (!progressed) return this.totalPending() === 0;
      }
    } catch (error) {
      if (!deadline.aborted) throw error;
    } finally {
      release();
    }
    return this.totalPending() === 0;
  }

  private totalPending(): number {
    const pending = this.options.outbox.stats().pending;
    return pending.metrics + pending.movement + pending.trajectories;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let sentSomething = false;
      try {
        if (!this.blocked) sentSomething = await this.sendAvailable(signal);
      } catch (error) {
        if (signal.aborted) break;
        this.lastError = error instanceof Error ? error.message : String(error);
      }
      if (!sentSomething) await this.idle(this.blocked ? Math.min(this.blockedUntil - Date.now(), this.options.idleMs ?? 5000) : (this.options.idleMs ?? 5000));
    }
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
      if (this.abort.signal.aborted) done();
    });
  }

  /** One pass over every kind; true when something was delivered or settled (so another pass may find more). */
  private sendAvailable(signal: AbortSignal): Promise<boolean> {
    // The background loop and drain() share the outbox: one pass at a time, or a batch would go out twice.
    const pass = this.passLock.then(() => this.sendPass(signal));
    this.passLock = pass.then(
      () => undefined,
      () => undefined,
    );
    return pass;
  }

  private async sendPass(signal: AbortSignal): Promise<boolean> {
    let progressed = false;
    for (const kind of SEND_ORDER) {
      if (signal.aborted || this.blocked) break;
      if ((this.kindBlockedUntil.get(kind) ?? 0) > Date.now()) continue;
      const endpoint = ENDPOINTS[kind];
      const records = this.options.outbox.pending(kind, endpoint.batch ? (this.options.batchSize ?? MAX_BATCH_ITEMS) : 1);
      if (records.length === 0) continue;
      try {
        await this.deliver(kind, records, signal);
        progressed = true;
      } catch (error) {
        if (error instanceof BlockedError) {
          this.block(kind, error);
          if (this.blocked) break;
          continue;
        }
        throw error;
      }
    }
    return progressed;
  }

  private async deliver(kind: RecordKind, records: OutboxRecord[], signal: AbortSignal): Promise<void> {
    try {
      await this.postWithRetry(kind, records, signal);
    } catch (error) {
      if (!(error instanceof SplitError)) throw error;
      if (records.length === 1) {
        const record = records[0]!;
        this.options.outbox.quarantine(record.id, error.message);
        this.quarantinedRecords++;
        this.options.onEvent?.({ type: 'quarantined', kind, dedupeKey: record.dedupeKey, reason: error.message });
        return;
      }
      // Halve until the rejected record stands alone; the good halves go through once each.
      const middle = Math.ceil(records.length / 2);
      await this.deliver(kind, records.slice(0, middle), signal);
      await this.deliver(kind, records.slice(middle), signal);
      return;
    }
    this.options.outbox.markSent(records.map((r) => r.id));
    this.sentRecords += records.length;
    this.lastUploadAt = Date.now();
    this.options.onEvent?.({ type: 'sent', kind, count: records.length });
  }

  private async postWithRetry(kind: RecordKind, records: OutboxRecord[], signal: AbortSignal): Promise<void> {
    const backoff = this.options.backoff ?? { initialMs: 1000, maxMs: 5 * 60_000 };
    await pRetry(
      async () => {
        try {
          await this.post(kind, records, signal);
        } catch (error) {
          // Only transient failures are retried here; the caller handles splits and blocks.
          if (error instanceof RetryableError) throw error;
          throw new AbortError(error as Error);
        }
      },
      {
        retries: Infinity,
        minTimeout: 0,
        signal,
        onFailedAttempt: async ({ error, attemptNumber }) => {
          if (!(error instanceof RetryableError)) return;
          const delayMs = retryDelay(attemptNumber, backoff, error.retryAfterMs, this.options.random);
          this.lastError = error.message;
          this.options.outbox.recordAttempt(records.map((r) => r.id), error.message);
          this.options.onEvent?.({ type: 'retrying', kind, attempt: attemptNumber, delayMs, reason: error.message });
          await this.waitBackoff(delayMs, signal, error.retryAfterMs === undefined);
        },
      },
    );
  }

  /** Sleeps `ms` (rejects when `signal` aborts); a `cuttable` wait also ends at `cloudAnswers()`. */
  private waitBackoff(ms: number, signal: AbortSignal, cuttable: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const settle = (then: () => void) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (this.cutBackoff === cut) this.cutBackoff = undefined;
        then();
      };
      const cut = () => settle(resolve);
      const onAbort = () => settle(() => reject(signal.reason as Error));
      const timer = setTimeout(cut, ms);
      signal.addEventListener('abort', onAbort, { once: true });
      if (cuttable) this.cutBackoff = cut;
    });
  }

  private async post(kind: RecordKind, records: OutboxRecord[], signal: AbortSignal): Promise<void> {
    const endpoint = ENDPOINTS[kind];
    const body = endpoint.batch ? records.map((r) => r.payload) : records[0]!.payload;
    let status: number | undefined;
    let data: unknown;
    let retryAfter: string | undefined;
    try {
      const response = await this.http!.post(new URL(endpoint.path, this.cloudUrl).toString(), body, {
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        signal,
      });
      status = response.status;
      data = response.data;
      retryAfter = response.headers['retry-after'] as string | undefined;
    } catch (error) {
      if (signal.aborted) throw error;
      throw new RetryableError(`network: ${describeNetworkError(error, this.cloudUrl)}`, undefined);
    }
    const reason = `${status} from ${endpoint.path}${errorText(data)}`;
    switch (classifyStatus(status)) {
      case 'ok':
        return;
      case 'retry':
        throw new RetryableError(reason, parseRetryAfter(retryAfter, Date.now()));
      case 'split':
        throw new SplitError(reason);
      case 'auth':
      case 'reject':
        throw new BlockedError(reason, status ?? 0);
    }
  }

  /** A refused token stops everything; a missing endpoint stops only its own kind of record. */
  private block(kind: RecordKind, error: BlockedError): void {
    const retryAt = Date.now() + (this.options.blockedBackoffMs ?? 15 * 60_000);
    const refusedToken = error.status === 401 || error.status === 403;
    if (refusedToken) this.blockedUntil = retryAt;
    else this.kindBlockedUntil.set(kind, retryAt);
    this.lastError = error.message;
    const hint = refusedToken
      ? 'the cloud refused the token: check cloud.token / HIVEGATE_TOKEN'
      : `the cloud has no ${ENDPOINTS[kind].path}: check cloud.url / HIVEGATE_CLOUD_URL, or upgrade the cloud`;
    const reason = `${error.message}; ${hint}`;
    if (refusedToken) this.blockedReason = reason;
    this.options.onEvent?.({ type: 'blocked', kind, status: error.status, reason, retryAt });
  }
}

function errorText(data: unknown): string {
  if (data && typeof data === 'object' && 'error' in data && typeof data.error === 'string') return `: ${data.error}`;
  return '';
}

/**
 * A signal that aborts when `parent` does or after `timeoutMs`. Not `AbortSignal.any([.., AbortSignal.timeout()])`:
 * Node 20 holds that timeout signal weakly, so a garbage collection before it fires loses the deadline for good.
 */
function deadlineSignal(parent: AbortSignal, timeoutMs: number): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent.reason);
  const timer = setTimeout(() => controller.abort(new Error(`deadline of ${timeoutMs} ms passed`)), timeoutMs);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    release() {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParentAbort);
    },
  };
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}
