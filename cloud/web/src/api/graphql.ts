/**
 * The one way the app talks to the server: GraphQL over same-origin fetch. The session rides in the HttpOnly
 * `service_session` cookie the server sets at sign-in, so no script here ever holds the token.
 */

export interface GraphQLErrorItem {
  message: string;
  path?: readonly (string | number)[];
  extensions?: { code?: string; [key: string]: unknown };
}

/** A failed request, with the server's message (shown to the user as is) and its `extensions.code`. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly errors: readonly GraphQLErrorItem[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type OperationKind = 'query' | 'mutation' | 'subscription';

/** A named GraphQL document with its result and variable types (the types are phantom: checked by the compiler only). */
export interface Operation<TData, TVariables> {
  readonly name: string;
  readonly kind: OperationKind;
  readonly document: string;
  readonly _types?: { data: TData; variables: TVariables };
}

export type NoVariables = Record<string, never>;

/** Declares an operation; the name and kind are read from the document, so they cannot disagree with it. */
export function defineOperation<TData, TVariables = NoVariables>(document: string): Operation<TData, TVariables> {
  const header = /^\s*(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/m.exec(document);
  if (!header) throw new Error(`a GraphQL document here must start with a named operation: ${document.slice(0, 60)}`);
  return { kind: header[1] as OperationKind, name: header[2]!, document: document.trim() };
}

/** Turns a GraphQL answer's errors into the error to throw. */
export function errorFromResponse(errors: readonly GraphQLErrorItem[]): ApiError {
  const code = errors.find((e) => e.extensions?.code)?.extensions?.code;
  const message = [...new Set(errors.map((e) => e.message))].join('; ') || 'the server reported an error';
  return new ApiError(message, code, errors);
}

type Listener = (error: ApiError) => void;
const unauthenticatedListeners = new Set<Listener>();

/** Called when any request finds the session gone (expired, revoked, signed out elsewhere). */
export function onUnauthenticated(listener: Listener): () => void {
  unauthenticatedListeners.add(listener);
  return () => unauthenticatedListeners.delete(listener);
}

export function notifyIfUnauthenticated(error: unknown): void {
  if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') for (const listener of unauthenticatedListeners) listener(error);
}

export const GRAPHQL_PATH = '/graphql';

/**
 * How long a request may take, answer included, before it is given up. A server that stops answering (a frozen
 * process, a mobile link that drops without closing) left every page "Loading…" and every button busy for good.
 */
export const REQUEST_TIMEOUT_MS = 20_000;

export interface RequestOptions {
  signal?: AbortSignal;
  /** The time limit (default REQUEST_TIMEOUT_MS); `Infinity` for a request that waits on purpose (a long-poll). */
  timeoutMs?: number;
}

export const TIMEOUT_MESSAGE = 'The server did not answer in time. Check your connection and try again.';

export async function request<TData, TVariables>(
  operation: Operation<TData, TVariables>,
  variables: TVariables,
  options: RequestOptions = {},
): Promise<TData> {
  const { signal, timeoutMs = REQUEST_TIMEOUT_MS } = options;
  if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
  // One controller for the caller's abort and the time limit, so either ends the fetch and the reading of its body.
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs)
    : undefined;
  /** Why the request ended early: the caller's abort is passed on as such, the time limit as an error to show. */
  const cutShort = (): Error | undefined => {
    if (signal?.aborted) return new DOMException('aborted', 'AbortError');
    if (timedOut) return new ApiError(TIMEOUT_MESSAGE, 'TIMEOUT');
    return undefined;
  };
  try {
    let response: Response;
    try {
      response = await fetch(GRAPHQL_PATH, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        credentials: 'same-origin',
        body: JSON.stringify({ query: operation.document, operationName: operation.name, variables }),
        signal: controller.signal,
      });
    } catch {
      throw cutShort() ?? new ApiError('Cannot reach the server. Check your connection and try again.', 'NETWORK');
    }
    let body: { data?: TData | null; errors?: GraphQLErrorItem[]; error?: string };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      const early = cutShort();
      if (early) throw early;
      // A proxy's error page (502, 503, 504 while the server restarts): to the user, the server is out of reach for now.
      throw new ApiError(`The server could not be reached (${`${response.status} ${response.statusText}`.trim()}). Try again in a moment.`, 'NETWORK');
    }
    if (body.errors && body.errors.length > 0) {
      const error = errorFromResponse(body.errors);
      notifyIfUnauthenticated(error);
      throw error;
    }
    if (!response.ok || body.data === undefined || body.data === null) {
      throw new ApiError(body.error ?? `The server answered ${response.status} ${response.statusText}.`, response.status === 401 ? 'UNAUTHENTICATED' : undefined);
    }
    return body.data;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/** A message fit for the screen, whatever was thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
