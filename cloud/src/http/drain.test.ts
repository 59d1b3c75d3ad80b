import { describe, expect, it } from 'vitest';
import { stillBusy } from './drain.ts';

describe('stillBusy', () => {
  // The give-up line blamed "requests or the database" when an idle keep-alive connection was what held the stop.
  it('names what a stop that ran out of time was still waiting for', () => {
    expect(stillBusy({ requests: 2, connections: 3, serverClosed: false })).toBe('2 requests were still running');
    expect(stillBusy({ requests: 1, connections: 1, serverClosed: false })).toBe('1 request was still running');
    expect(stillBusy({ requests: 0, connections: 1, serverClosed: false })).toBe('1 client connection was still open with no request running');
    expect(stillBusy({ requests: 0, connections: 0, serverClosed: true })).toBe('the services and the database connections were still closing');
  });
});
