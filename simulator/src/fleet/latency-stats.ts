/**
 * Per-operation outcome of a load run. Every request is accounted for: `sent = count + errors + unfinished`.
 * Percentiles are over the timed successes; operations counted without timing (long-polls, which wait for commands
 * by design) have none.
 */
export interface OperationReport {
  /** Requests started. */
  sent: number;
  /** Requests answered with success. */
  count: number;
  /** Requests that failed (an HTTP error status, a timeout, a refused or broken connection…), by reason below. */
  errors: number;
  errorsByReason: Record<string, number>;
  /** Requests still waiting for their answer when the run stopped. */
  unfinished: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

/** All operations together. */
export interface RequestTotals {
  sent: number;
  succeeded: number;
  failed: number;
  unfinished: number;
}

interface OperationLedger {
  sent: number;
  succeeded: number;
  samples: number[];
  errors: Map<string, number>;
}

export class LatencyStats {
  private readonly operations = new Map<string, OperationLedger>();

  private ledger(operation: string): OperationLedger {
    let ledger = this.operations.get(operation);
    if (!ledger) this.operations.set(operation, (ledger = { sent: 0, succeeded: 0, samples: [], errors: new Map() }));
    return ledger;
  }

  /** A request was started; until it is recorded or failed it counts as unfinished. */
  sent(operation: string): void {
    this.ledger(operation).sent++;
  }

  /** A request succeeded after `ms`. */
  record(operation: string, ms: number): void {
    const ledger = this.ledger(operation);
    ledger.succeeded++;
    ledger.samples.push(ms);
  }

  /** A request succeeded, and how long it took says nothing about the cloud (a long-poll waits on purpose). */
  recordUntimed(operation: string): void {
    this.ledger(operation).succeeded++;
  }

  fail(operation: string, reason: string): void {
    const { errors } = this.ledger(operation);
    errors.set(reason, (errors.get(reason) ?? 0) + 1);
  }

  totalErrors(): number {
    return this.totals().failed;
  }

  totals(): RequestTotals {
    const totals = { sent: 0, succeeded: 0, failed: 0, unfinished: 0 };
    for (const report of Object.values(this.report())) {
      totals.sent += report.sent;
      totals.succeeded += report.count;
      totals.failed += report.errors;
      totals.unfinished += report.unfinished;
    }
    return totals;
  }

  report(): Record<string, OperationReport> {
    const out: Record<string, OperationReport> = {};
    for (const operation of [...this.operations.keys()].sort()) out[operation] = this.reportOf(operation);
    return out;
  }

  /** One operation's report; all zeros for one nothing was counted for yet. */
  reportOf(operation: string): OperationReport {
    const ledger = this.operations.get(operation) ?? { sent: 0, succeeded: 0, samples: [], errors: new Map<string, number>() };
    const sorted = [...ledger.samples].sort((a, b) => a - b);
    const reasons = Object.fromEntries(ledger.errors);
    const errors = Object.values(reasons).reduce((a, b) => a + b, 0);
    // Sent is at least what finished, so a caller that records without sending still adds up.
    const sent = Math.max(ledger.sent, ledger.succeeded + errors);
    return {
      sent,
      count: ledger.succeeded,
      errors,
      errorsByReason: reasons,
      unfinished: sent - ledger.succeeded - errors,
      p50Ms: nearestRank(sorted, 50),
      p95Ms: nearestRank(sorted, 95),
      p99Ms: nearestRank(sorted, 99),
      maxMs: sorted.length > 0 ? roundMs(sorted.at(-1)!) : null,
    };
  }
}

function nearestRank(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return roundMs(sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!);
}

/** To a tenth of a millisecond: timer noise below that is no information. */
function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}
