/**
 * When a failed job runs again. Exponential growth spreads retries of a job whose dependency is down; the cap
 * keeps a long outage from pushing the next try hours away; jitter keeps jobs that failed together from
 * retrying together.
 */
export interface BackoffPolicy {
  /** Delay after the first failed attempt, seconds. */
  baseSeconds: number;
  /** Largest delay, seconds. */
  maxSeconds: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /** Fraction of the delay that is randomised away, 0..1 (default 0.2): delay × (1 − jitter × random). */
  jitter?: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseSeconds: 5, maxSeconds: 600, factor: 2, jitter: 0.2 };

/** Seconds to wait before the next attempt, after `attempts` attempts have failed (1 = the first one). */
export function retryDelaySeconds(attempts: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`attempts must be an integer >= 1, got ${String(attempts)}`);
  const { baseSeconds, maxSeconds, factor = 2, jitter = 0.2 } = policy;
  if (!(baseSeconds >= 0) || !Number.isFinite(baseSeconds)) throw new RangeError(`baseSeconds must be a finite number >= 0, got ${String(baseSeconds)}`);
  if (!(maxSeconds >= baseSeconds) || !Number.isFinite(maxSeconds)) throw new RangeError(`maxSeconds must be a finite number >= baseSeconds, got ${String(maxSeconds)}`);
  if (!(factor >= 1) || !Number.isFinite(factor)) throw new RangeError(`factor must be a finite number >= 1, got ${String(factor)}`);
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`jitter must be a number from 0 to 1, got ${String(jitter)}`);
  // Math.pow overflows to Infinity for huge attempt counts; the cap makes that harmless.
  const exponential = Math.min(maxSeconds, baseSeconds * Math.pow(factor, attempts - 1));
  return exponential * (1 - jitter * Math.min(1, Math.max(0, random())));
}

export type FailureOutcome = { retry: true; delaySeconds: number } | { retry: false; reason: string };

/** What happens to a job whose attempt failed: another try later, or FAILED for good with a reason. */
export function afterFailure(
  attempts: number,
  maxAttempts: number,
  error: string,
  options: { permanent?: boolean; policy?: BackoffPolicy; random?: () => number } = {},
): FailureOutcome {
  if (options.permanent) return { retry: false, reason: error };
  if (attempts >= maxAttempts) {
    return { retry: false, reason: maxAttempts === 1 ? error : `gave up after ${attempts} attempts: ${error}` };
  }
  return { retry: true, delaySeconds: retryDelaySeconds(attempts, options.policy, options.random) };
}
