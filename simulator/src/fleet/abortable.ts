/**
 * The signal one request runs under: it aborts when `stop` does (the run is over) or after `timeoutMs` (the cloud
 * is too slow, `timedOut` is then true). A timer of our own rather than AbortSignal.timeout, which Node 20 holds
 * weakly: a garbage collection before it fires can lose the deadline. `release` once the request is done.
 */
export function requestDeadline(stop: AbortSignal, timeoutMs: number): { signal: AbortSignal; timedOut(): boolean; release(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const stopped = (): void => controller.abort();
  if (stop.aborted) controller.abort();
  else stop.addEventListener('abort', stopped, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    release: () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', stopped);
    },
  };
}

/** Waits `ms`, or less when `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
