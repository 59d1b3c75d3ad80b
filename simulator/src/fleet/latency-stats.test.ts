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
    expect(report.status).toEqual({ sent: 102, count: 100, errors: 2, errorsByReason: { 'HTTP 503': 2 }, unfinished: 0, p50Ms: 50, p95Ms: 95, p99Ms: 99, maxMs: 100 });
    expect(report.poll).toMatchObject({ count: 0, errors: 1, p50Ms: null });
    expect(stats.totalErrors()).toBe(3);
  });

  it('counts what was sent and never answered as unfinished, and untimed successes without latencies', () => {
    // Before, requests cut off at the end and successful long-polls left no trace in the report.
    const stats = new LatencyStats();
    for (let i = 0; i < 5; i++) stats.sent('poll');
    stats.recordUntimed('poll');
    stats.recordUntimed('poll');
    stats.fail('poll', 'timeout');
    stats.sent('status');
    expect(stats.report()).toEqual({
      poll: { sent: 5, count: 2, errors: 1, errorsByReason: { timeout: 1 }, unfinished: 2, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null },
      status: { sent: 1, count: 0, errors: 0, errorsByReason: {}, unfinished: 1, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null },
    });
    expect(stats.totals()).toEqual({ sent: 6, succeeded: 2, failed: 1, unfinished: 3 });
  });

  it('rounds the maximum as it rounds the percentiles', () => {
    // Before, maxMs came out unrounded (e.g. 532.4409560000001) beside percentiles to a tenth of a millisecond.
    const stats = new LatencyStats();
    stats.record('status', 12.3456);
    stats.record('status', 532.4409560000001);
    expect(stats.report().status).toMatchObject({ p50Ms: 12.3, p99Ms: 532.4, maxMs: 532.4 });
  });
});
