import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
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

/** The processes whose command line holds `text` (read from /proc: no procps needed). */
function processesRunWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(text);
      } catch {
        return false; // ended while we looked
      }
    })
    .map(Number);
}

/** An address of this machine other than loopback, where a service listening on all addresses answers. */
function outwardAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((nic) => nic !== undefined && !nic.internal && nic.family === 'IPv4')?.address;
}

// Short enough to render and count quickly, long enough for bees to cross both ways.
const CLIP_SECONDS = '10';
const TOTAL_ROW = /^\s+total\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m;

const demoRun = (port: number, dataDir: string) =>
  promisify(execFile)('pnpm', ['--silent', 'demo', '--no-serve', '--seconds', CLIP_SECONDS, '--port', String(port), '--data-dir', dataDir], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });

// The README's first command ends in `pnpm demo`: this keeps it true.
describe('pnpm demo', () => {
  // The first run, on a fresh data folder as on a fresh machine. The live tests start from copies of its folder:
  // the live part is theirs to test, and a fresh embedded database and clip cost each of them 10-15 s more.
  let seededDir: string;
  let seedPort: number;
  let firstRun: { stdout: string };
  beforeAll(async () => {
    seededDir = mkdtempSync(path.join(tmpdir(), 'hivegate-demo-'));
    seedPort = await freePort();
    firstRun = await demoRun(seedPort, seededDir);
  }, 300_000);
  afterAll(() => rmSync(seededDir, { recursive: true, force: true }));

  /** A live demo's own data folder: a copy of the first run's, so each test's cloud and agent state are its own. */
  const liveDataDir = (name: string) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), `hivegate-demo-${name}-`));
    cpSync(seededDir, dataDir, { recursive: true });
    return dataDir;
  };

  it('counts a short synthetic clip through agent and cloud and prints it next to the truth', async () => {
    // A mistyped flag printed a TypeError's stack rather than the usage.
    const mistyped = await promisify(execFile)('pnpm', ['--silent', 'demo', '--prot', '8600'], { cwd: ROOT }).then(() => undefined, (err: unknown) => err as { code: number; stderr: string });
    expect(mistyped).toMatchObject({ code: 2, stderr: expect.stringMatching(/Unknown option '--prot'[\s\S]*usage: pnpm demo /) });
    const { stdout } = firstRun;
    expect(stdout).toMatch(/What arrived in the cloud, next to the ground truth/);
    const total = TOTAL_ROW.exec(stdout);
    expect(total).not.toBeNull();
    const [, arrivedIn, truthIn, arrivedOut, truthOut] = total!.map(Number);
    expect(truthIn! + truthOut!).toBeGreaterThan(0);
    expect(arrivedIn! + arrivedOut!).toBeGreaterThan(0); // the agent's counts reached the cloud
    expect(stdout).toContain(`http://localhost:${seedPort}/`);
    // Regression: a second run showed nothing, the clip being dated past the cloud's retention period (its rows
    // were dropped at the next start, and the resent ones deduplicated).
    const again = await demoRun(seedPort, seededDir);
    expect(again.stdout).toContain('Reusing the synthetic clip');
    expect(TOTAL_ROW.exec(again.stdout)?.slice(1).map(Number)).toEqual([arrivedIn, truthIn, arrivedOut, truthOut]);
  }, 300_000);

  // SIGHUP is the terminal closing; Node's default for it ended the demo at once, its agent unflushed.
  it.each([
    ['Ctrl-C', 'SIGINT'],
    ['its terminal closing', 'SIGHUP'],
  ] as const)('keeps serving with the clip as a live camera that a second agent counts, and stops it cleanly on %s', async (_, signal) => {
    const dataDir = liveDataDir('live');
    // Its own process group, as a terminal's foreground job: Ctrl-C is a SIGINT to the whole group.
    const demo = spawn('pnpm', ['--silent', 'demo', '--seconds', CLIP_SECONDS, '--port', String(await freePort()), '--data-dir', dataDir], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const closed = once(demo, 'close');
    let stdout = '';
    demo.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const statusFile = path.join(dataDir, 'agent-live', 'status.json');
    const framesSeen = () => (existsSync(statusFile) ? (JSON.parse(readFileSync(statusFile, 'utf8')) as { framesProcessed: number }).framesProcessed : 0);
    try {
      await expect.poll(() => stdout, { timeout: 180_000, interval: 500 }).toContain('press Ctrl-C to stop');
      expect(stdout).toContain('Playing the clip on a loop as a live entrance camera');
      await expect.poll(framesSeen, { timeout: 60_000, interval: 500 }).toBeGreaterThan(60);
      process.kill(-demo.pid!, signal);
      await closed;
      // Before, Ctrl-C reached the agent twice (from the terminal and from the demo), and the second signal ended it mid-flush.
      const log = () => readFileSync(path.join(dataDir, 'agent-live.log'), 'utf8');
      await expect.poll(log, { timeout: 30_000, interval: 500 }).toMatch(/agent stopped: \d+ frames, .*; 0 records still queued/);
      expect(log()).toContain('SIGTERM: stopping'); // by the demo, once
    } finally {
      if (demo.exitCode === null && demo.signalCode === null) process.kill(-demo.pid!, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  // The live agent, in a process group of its own, counted on for good when the demo was killed outright.
  it('stops its live agent when the demo itself is killed (SIGKILL to its group)', async () => {
    const dataDir = liveDataDir('killed');
    const agentStateDir = path.join(dataDir, 'agent-live');
    const port = await freePort();
    const demo = spawn('pnpm', ['--silent', 'demo', '--seconds', CLIP_SECONDS, '--port', String(port), '--data-dir', dataDir], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    demo.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const liveAgentRunning = () => processesRunWith(`--state-dir ${agentStateDir}`).length > 0;
    try {
      await expect.poll(() => stdout, { timeout: 180_000, interval: 500 }).toContain('press Ctrl-C to stop');
      await expect.poll(() => existsSync(path.join(agentStateDir, 'status.json')), { timeout: 60_000, interval: 500 }).toBe(true);
      expect(liveAgentRunning()).toBe(true);
      // The demo prints its password: it listens on this machine only unless HOST says otherwise.
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      const outward = outwardAddress();
      expect(outward, 'this machine has a network address besides loopback').toBeDefined();
      await expect(fetch(`http://${outward}:${port}/health`)).rejects.toThrow();
      // The admin CLI was refused while the demo ran (the embedded database opens in one process): it goes through the
      // demo's admin socket now.
      const users = await promisify(execFile)('pnpm', ['--silent', 'cli', 'user', 'list'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir } });
      expect(users.stdout).toMatch(/^\d+\tdemo\t/m);
      process.kill(-demo.pid!, 'SIGKILL');
      await expect.poll(liveAgentRunning, { timeout: 30_000, interval: 500 }).toBe(false);
      expect(readFileSync(path.join(dataDir, 'agent-live.log'), 'utf8')).toContain('the program that started this agent has ended: stopping');
    } finally {
      if (demo.exitCode === null && demo.signalCode === null) process.kill(-demo.pid!, 'SIGKILL');
      for (const pid of processesRunWith(`--state-dir ${agentStateDir}`)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
