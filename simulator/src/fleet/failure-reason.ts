/** A failure whose reason is already known: an HTTP status, a GraphQL error. */
export class RequestFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * A short, stable reason for a failed request, so that a report counts refusals, resets and timeouts apart: fetch
 * says "fetch failed" for all of them and keeps the difference in its cause's code (ECONNREFUSED, ECONNRESET,
 * UND_ERR_SOCKET, UND_ERR_CONNECT_TIMEOUT…).
 */
export function failureReason(error: unknown, timedOut: boolean): string {
  if (timedOut) return 'timeout';
  if (error instanceof RequestFailure) return error.reason;
  if (error instanceof SyntaxError) return 'unreadable answer (not JSON)';
  const code = causeCode(error);
  if (code) return code;
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `network: ${message}${cause}`;
}

/** The first error code along the chain of causes (and, for an AggregateError, of its first error). */
function causeCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.length > 0) return code;
    current = current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : current.cause;
  }
  return undefined;
}
