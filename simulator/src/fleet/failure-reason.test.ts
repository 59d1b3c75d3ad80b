import { describe, expect, it } from 'vitest';
import { failureReason, RequestFailure } from './failure-reason.ts';

const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });
const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('failureReason', () => {
  it('tells refusals, resets and connect timeouts apart by the cause fetch keeps', () => {
    // Before, every one of these read "network: fetch failed".
    expect(failureReason(fetchFailed(withCode('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED')), false)).toBe('ECONNREFUSED');
    expect(failureReason(fetchFailed(withCode('other side closed', 'UND_ERR_SOCKET')), false)).toBe('UND_ERR_SOCKET');
    expect(failureReason(fetchFailed(withCode('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')), false)).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(failureReason(fetchFailed(new AggregateError([withCode('connect ECONNREFUSED ::1:9', 'ECONNREFUSED')])), false)).toBe('ECONNREFUSED');
  });

  it('names its own timeout, known failures and unreadable answers', () => {
    const aborted = new DOMException('This operation was aborted', 'AbortError');
    expect(failureReason(aborted, true)).toBe('timeout');
    expect(failureReason(new RequestFailure('HTTP 503'), false)).toBe('HTTP 503');
    expect(failureReason(new SyntaxError('Unexpected token <'), false)).toBe('unreadable answer (not JSON)');
  });

  it('falls back to the messages when there is no code', () => {
    expect(failureReason(fetchFailed(new Error('bad port')), false)).toBe('network: fetch failed: bad port');
    expect(failureReason('gone', false)).toBe('network: gone');
  });
});
