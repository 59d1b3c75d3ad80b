import { describe, expect, it } from 'vitest';
import { CommandLedger } from './command-ledger.ts';

describe('CommandLedger', () => {
  it('times a command delivered before its mutation was answered', () => {
    // Before, the send time was kept under the session id from the mutation's answer, so a command the device's
    // long-poll got first found nothing and its (fastest) sample was lost.
    const ledger = new CommandLedger();
    const ticket = ledger.sending('box-1', 'START_STREAM', 1000);
    ledger.delivered('box-1', 'START_STREAM', 's1', 1040);
    ledger.answered(ticket, 's1');
    expect(ledger.report()).toMatchObject({ sent: 1, count: 1, errors: 0, unfinished: 0, p50Ms: 40, maxMs: 40 });
  });

  it('ends every command sent as delivered, failed or unfinished', () => {
    const ledger = new CommandLedger();
    const first = ledger.sending('box-1', 'START_STREAM', 0);
    ledger.sending('box-1', 'START_STREAM', 100);
    const refused = ledger.sending('box-2', 'START_STREAM', 200);
    ledger.sending('box-2', 'STOP_STREAM', 300, 's0');
    ledger.failed(refused, 'GraphQL: no such box');
    ledger.delivered('box-1', 'START_STREAM', 's1', 50);
    ledger.failed(first, 'timeout'); // answered too late, but the command arrived: it counts as delivered
    ledger.delivered('box-3', 'START_STREAM', 's3', 400); // not ours (another driver's)
    ledger.delivered('box-2', 'STOP_STREAM', 's9', 400); // a stop for another session than the one sent
    expect(ledger.report()).toEqual({
      sent: 4, count: 1, errors: 1, errorsByReason: { 'GraphQL: no such box': 1 }, unfinished: 2,
      p50Ms: 50, p95Ms: 50, p99Ms: 50, maxMs: 50,
    });
  });

  it('gives a late command to the mutation that asked for it, not to an older one never delivered', () => {
    const ledger = new CommandLedger();
    const lost = ledger.sending('box-1', 'START_STREAM', 0);
    ledger.answered(lost, 's1');
    const later = ledger.sending('box-1', 'START_STREAM', 5000);
    ledger.answered(later, 's2');
    ledger.delivered('box-1', 'START_STREAM', 's2', 5030);
    expect(ledger.report()).toMatchObject({ sent: 2, count: 1, unfinished: 1, maxMs: 30 });
  });
});
