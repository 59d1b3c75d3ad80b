import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from '../db/database.ts';
import type { RejectionReason } from '../http/errors.ts';

/** Prometheus metrics of one app instance (a registry of its own, so several apps can live in one process). */
export class Observability {
  readonly registry = new Registry();
  private readonly ingestedRows = new Counter({
    name: 'hivegate_ingested_rows_total',
    help: 'Telemetry rows received, by kind and by whether they were stored or dropped as duplicates.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly rejectedRequests = new Counter({
    name: 'hivegate_rejected_requests_total',
    help: 'Requests answered with an error, by reason.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'hivegate_http_request_duration_seconds',
    help: 'HTTP request latency by route.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'hivegate_' });
  }

  /** Gauges of the database pool, read at each scrape: saturation showed only as 503s before. */
  watchPool(stats: () => PoolStats): void {
    const gauge = (name: string, help: string, read: (s: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read(stats()));
        },
      });
    gauge('hivegate_db_pool_connections', 'Database connections open in the pool, busy or idle.', (s) => s.total);
    gauge('hivegate_db_pool_idle_connections', 'Database connections open in the pool and idle.', (s) => s.idle);
    gauge('hivegate_db_pool_waiting', 'Queries and transactions waiting for a pooled database connection.', (s) => s.waiting);
  }

  ingested(kind: string, outcome: { received: number; stored: number }): void {
    this.ingestedRows.inc({ kind, outcome: 'stored' }, outcome.stored);
    if (outcome.received > outcome.stored) this.ingestedRows.inc({ kind, outcome: 'duplicate' }, outcome.received - outcome.stored);
  }

  rejected(reason: RejectionReason): void {
    this.rejectedRequests.inc({ reason });
  }
}
