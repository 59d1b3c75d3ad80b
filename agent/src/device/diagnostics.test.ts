import { describe, expect, it } from 'vitest';
import { hostDiagnostics, parseMillidegrees } from './diagnostics.ts';

describe('diagnostics', () => {
  it('reads the kernel thermal zone format', () => {
    expect(parseMillidegrees('48312\n')).toBe(48.3);
    expect(parseMillidegrees('')).toBeUndefined();
    expect(parseMillidegrees('abc')).toBeUndefined();
    expect(parseMillidegrees('999999')).toBeUndefined();
  });
  it('reports uptime and host load', () => {
    const d = hostDiagnostics(1_000, 61_400);
    expect(d.uptimeSeconds).toBe(60);
    expect(d.memoryRssMb).toBeGreaterThan(0);
  });
});
