import { describe, expect, it } from 'vitest';
import { describeNetworkError } from './network-errors.ts';

describe('describeNetworkError', () => {
  // The log said "network: connect ECONNREFUSED 127.0.0.1:8744", a system call's words, to a technician.
  it('says what the usual failures mean, naming the cloud', () => {
    const cloud = 'http://hives.example:8600';
    expect(describeNetworkError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 1.2.3.4:8600' }, cloud)).toBe(
      'the cloud at http://hives.example:8600 refused the connection (is it running, and is the port right?)',
    );
    expect(describeNetworkError({ code: 'ENOTFOUND' }, cloud)).toBe('the name hives.example cannot be resolved (no network, or a wrong cloud URL?)');
    expect(describeNetworkError({ code: 'ETIMEDOUT' }, cloud)).toBe('the cloud at http://hives.example:8600 did not answer in time');
    expect(describeNetworkError({ code: 'ECONNRESET' }, cloud)).toBe('the connection to http://hives.example:8600 was cut');
    expect(describeNetworkError({ code: 'EHOSTUNREACH' }, cloud)).toBe('hives.example cannot be reached (no route: is the network up?)');
  });

  it('keeps the message of anything else', () => {
    expect(describeNetworkError(new Error('socket hang up'), 'http://x')).toBe('socket hang up');
    expect(describeNetworkError(undefined, 'http://x')).toBe('undefined');
  });
});
