/** Per-operation outcome counts and latency percentiles of a load run. */
export interface OperationReport {
  count: number;
  errors: number;
  errorsByReason: Record<string, number>;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}

export class LatencyStats {
  private readonly samples = new Map<string, number[]>();
  private readonly errors = new Map<string, Map<string, number>>();

  record(operation: string, ms: number): void {
    let list = this.samples.get(operation);
    if (!list) this.samples.set(operation, (list = []));
    list.push(ms);
  }

  fail(operation: string, reason: string): void {
    let reasons = this.errors.get(operation);
    if (!reasons) this.errors.set(operation, (reasons = new Map()));
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }

  totalErrors(): number {
    let total = 0;
    for (const reasons of this.errors.values()) for (const n of reasons.values()) total += n;
    return total;
  }

  report(): Record<string, OperationReport> {
    const operations = new Set([...this.samples.keys(), ...this.errors.keys()]);
    const out: Record<string, OperationReport> = {};
    for (const operation of [...operations].sort()) {
      const sorted = [...(this.samples.get(operation) ?? [])].sort((a, b) => a - b);
      const reasons = Object.fromEntries(this.errors.get(operation) ?? []);
      out[operation] = {
        count: sorted.length,
        errors: Object.values(reasons).reduce((a, b) => a + b, 0),
        errorsByReason: reasons,
        p50Ms: nearestRank(sorted, 50),
        p95Ms: nearestRank(sorted, 95),
        p99Ms: nearestRank(sorted, 99),
        maxMs: sorted.at(-1) ?? null,
      };
    }
    return out;
  }
}

function nearestRank(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const value = sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
  return Math.round(value * 10) / 10;
}
