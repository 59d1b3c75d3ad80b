/**
 * When to try again. Pure: the random source and the clock come in as arguments so tests can pin them.
 */
export interface BackoffOptions {
  /** Delay cap of the first retry, ms. */
  initialMs: number;
  /** Largest delay, ms. */
  maxMs: number;
  /** Growth per attempt. */
  factor?: number;
}

/**
 * "Full jitter" exponential backoff: a uniform draw in [0, min(max, initial·factor^(attempt-1))]. Spreading the
 * whole range (not ±10 %) keeps a fleet of devices that lost the cloud together from retrying together.
 * A floor of a tenth of the cap keeps a retry from landing immediately.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error(`attempt must be an integer >= 1, got ${attempt}`);
  const factor = options.factor ?? 2;
  const cap = Math.min(options.maxMs, options.initialMs * factor ** (attempt - 1));
  const floor = cap / 10;
  return Math.round(floor + random() * (cap - floor));
}

/**
 * `Retry-After` as milliseconds from now: either delta-seconds or an HTTP date. Unparseable or past values
 * give undefined (fall back to backoff).
 */
export function parseRetryAfter(header: string | undefined | null, nowMs: number): number | undefined {
  if (header === undefined || header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const delta = at - nowMs;
  return delta > 0 ? delta : 0;
}

/** The server's wish wins over our backoff when it asks for longer, but never beyond `ceilingMs`. */
export function retryDelay(
  attempt: number,
  options: BackoffOptions & { retryAfterCeilingMs?: number },
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const backoff = backoffDelay(attempt, options, random);
  if (retryAfterMs === undefined) return backoff;
  const ceiling = options.retryAfterCeilingMs ?? 60 * 60 * 1000;
  return Math.min(Math.max(backoff, retryAfterMs), ceiling);
}

export type ResponseClass = 'ok' | 'retry' | 'auth' | 'split' | 'reject';

/**
 * What to do with an HTTP answer to a batch. `split` isolates the bad record of a 400 (or shrinks a 413);
 * `auth` stops sending until the configuration changes; other 4xx are permanent for that batch.
 */
export function classifyStatus(status: number | undefined): ResponseClass {
  if (status === undefined) return 'retry'; // network error, timeout, connection refused
  if (status >= 200 && status < 300) return 'ok';
  if (status === 401 || status === 403) return 'auth';
  if (status === 400 || status === 413 || status === 422) return 'split';
  if (status === 408 || status === 425 || status === 429 || status >= 500) return 'retry';
  return 'reject';
}
