import { describe, expect, it } from 'vitest';
import { LatencyStats } from './latency-stats.ts';

describe('LatencyStats', () => {
  it('reports nearest-rank percentiles and errors per operation', () => {
    const stats = new LatencyStats();
    for (let i = 1; i <= 100; i++) stats.record('status', i);
    stats.fail('status', 'HTTP 503');
    stats.fail('status', 'HTTP 503');
    stats.fail('poll', 'network');
    const report = stats.report();
    expect(report.status).toEqual({ count: 100, errors: 2, errorsByReason: { 'HTTP 503': 2 }, p50Ms: 50, p95Ms: 95, p99Ms: 99, maxMs: 100 });
    expect(report.poll).toMatchObject({ count: 0, errors: 1, p50Ms: null });
    expect(stats.totalErrors()).toBe(3);
  });
});
