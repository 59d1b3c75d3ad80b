import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createServer } from 'node:net';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// The README's first command ends in `pnpm demo`: this keeps it true.
describe('pnpm demo', () => {
  it('counts a short synthetic clip through agent and cloud and prints it next to the truth', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-demo-'));
    try {
      const port = await freePort();
      const { stdout } = await promisify(execFile)('pnpm', ['--silent', 'demo', '--no-serve', '--seconds', '30', '--port', String(port), '--data-dir', dataDir], {
        cwd: ROOT,
        maxBuffer: 16 * 1024 * 1024,
      });
      expect(stdout).toMatch(/What arrived in the cloud, next to the ground truth/);
      const total = /^\s+total\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(stdout);
      expect(total).not.toBeNull();
      const [, arrivedIn, truthIn, arrivedOut, truthOut] = total!.map(Number);
      expect(truthIn! + truthOut!).toBeGreaterThan(0);
      expect(arrivedIn! + arrivedOut!).toBeGreaterThan(0); // the agent's counts reached the cloud
      expect(stdout).toContain(`http://localhost:${port}/`);
      // Regression: a second run showed nothing, the clip being dated past the cloud's retention period (its rows
      // were dropped at the next start, and the resent ones deduplicated).
      const again = await promisify(execFile)('pnpm', ['--silent', 'demo', '--no-serve', '--seconds', '30', '--port', String(port), '--data-dir', dataDir], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
      expect(again.stdout).toContain('Reusing the synthetic clip');
      const totalAgain = /^\s+total\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(again.stdout);
      expect(totalAgain?.slice(1).map(Number)).toEqual([arrivedIn, truthIn, arrivedOut, truthOut]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
