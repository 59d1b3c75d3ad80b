import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/media.ts';

const exec = promisify(execFile);
const agentRoot = fileURLToPath(new URL('..', import.meta.url));
const cache = tempDir('bench-live-stamps');
afterAll(() => cache.cleanup());

describe('bench:live-stamps', () => {
  it('reads a simulator clip played as a network camera and compares stamps by the stream clock with arrival times', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'bench/live-stamps.ts', '--seconds', '4', '--clip-seconds', '10', '--cache', cache.path], { cwd: agentRoot });
    const meanError = (label: string) => Number(new RegExp(`\\| ${label}[^|]* \\| ([\\d.]+) \\|`).exec(stdout)?.[1]);
    expect(stdout).toMatch(/^\d+ frames \(\d+ dropped\), the first 30 left out; period 33\.3 ms$/m);
    // Arrivals spread with whatever else the machine does; the stream's clock keeps its 33.3 ms steps.
    expect(meanError("by the stream's clock")).toBeLessThan(1);
    expect(meanError('at arrival')).toBeGreaterThan(meanError("by the stream's clock"));
    expect(stdout).toMatch(/ratio of mean step errors, clock \/ arrival: [\d.]+/);
    // The burst a connection starts with is stamped a period apart too (stamped as they came, its steps were ~0 ms).
    const start = /the first 30 frames \(the connection's start-up burst\): mean step error ([\d.]+) ms by the stream's clock, ([\d.]+) ms at arrival/.exec(stdout);
    expect(Number(start?.[1])).toBeLessThan(Number(start?.[2]));
    expect(Number(start?.[1])).toBeLessThan(5);
  }, 120_000);
});
