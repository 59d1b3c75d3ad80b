import { describe, expect, it } from 'vitest';
import { connectionErrorForLog } from './database.ts';

describe('connectionErrorForLog', () => {
  // The "database connection lost" warning logged pg-pool's err.client whole: 3 KB with the cancel secret key.
  it('keeps the message and code of a lost connection and nothing the driver hung on it', () => {
    const lost = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
      client: { processID: 4242, secretKey: 987654 },
    });
    expect(connectionErrorForLog(lost)).toEqual({ message: 'terminating connection due to administrator command', code: '57P01' });
    expect(connectionErrorForLog(new Error('Connection terminated unexpectedly'))).toEqual({ message: 'Connection terminated unexpectedly' });
  });
});
