import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, defineOperation, errorFromResponse, isAbort, REQUEST_TIMEOUT_MS, request, TIMEOUT_MESSAGE } from './graphql.ts';

describe('operations', () => {
  it('take name and kind from the document', () => {
    const op = defineOperation<{ me: null }>(`
      query Me { me { id } }`);
    expect(op).toMatchObject({ name: 'Me', kind: 'query', document: 'query Me { me { id } }' });
    expect(defineOperation('subscription Changed($id: ID!) { changed(id: $id) }').kind).toBe('subscription');
  });

  it('refuse anonymous documents', () => {
    expect(() => defineOperation('{ me { id } }')).toThrow(/named operation/);
  });
});

describe('server errors', () => {
  it('become an ApiError with the code and messages', () => {
    const error = errorFromResponse([
      { message: 'too many failed sign-ins; try again in 15 minutes', extensions: { code: 'TOO_MANY_ATTEMPTS' } },
      { message: 'too many failed sign-ins; try again in 15 minutes' },
    ]);
    expect(error.code).toBe('TOO_MANY_ATTEMPTS');
    expect(error.message).toBe('too many failed sign-ins; try again in 15 minutes');
    expect(errorFromResponse([])).toMatchObject({ code: undefined, message: 'the server reported an error' });
  });
});

/** A fetch to a server that has stopped answering: nothing comes until the request is aborted (as a browser's fetch). */
function silentServer(stage: 'headers' | 'body') {
  return vi.fn((_url: string, init: RequestInit) => {
    const hang = <T>() =>
      new Promise<T>((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    if (stage === 'headers') return hang<Response>();
    return Promise.resolve({ ok: true, status: 200, statusText: 'OK', json: () => hang<unknown>() } as unknown as Response);
  });
}

describe('a server that stops answering', () => {
  const Me = defineOperation<{ me: null }>('query Me { me { id } }');
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  // A frozen server left every page "Loading…" and every button busy for as long as the connection hung.
  it.each(['headers', 'body'] as const)('is given up after the time limit, with an error to show (silent before the %s)', async (stage) => {
    vi.useFakeTimers();
    vi.stubGlobal('fetch', silentServer(stage));
    const answer = request(Me, {}).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(REQUEST_TIMEOUT_MS - 1);
    let settled = false;
    void answer.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await answer;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'TIMEOUT', message: TIMEOUT_MESSAGE });
  });

  it("passes the caller's abort on as an abort, not as a time-out", async () => {
    vi.useFakeTimers();
    vi.stubGlobal('fetch', silentServer('headers'));
    const controller = new AbortController();
    const answer = request(Me, {}, { signal: controller.signal }).catch((error: unknown) => error);
    controller.abort();
    expect(isAbort(await answer)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('waits without a limit when asked to (a long-poll)', async () => {
    vi.useFakeTimers();
    vi.stubGlobal('fetch', silentServer('headers'));
    void request(Me, {}, { timeoutMs: Infinity });
    expect(vi.getTimerCount()).toBe(0);
  });
});
