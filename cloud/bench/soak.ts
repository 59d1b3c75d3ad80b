/**
 * Fleet soak: one cloud instance in its own process on a fresh database of the local Postgres, and the simulator's
 * virtual device fleet in another process, for a few minutes with accelerated device timing while live sessions are
 * started and stopped through GraphQL. Reports errors and latencies per device operation, command delivery, the
 * server's CPU and peak RSS and the Postgres backends' CPU for its database (from /proc), what was written, the
 * job queue, and the machine's load average meanwhile. Baseline (same run): the status heartbeat's latency on the
 * idle server before the fleet starts. Goal: no errors.
 *   pnpm bench:soak [--devices 500] [--seconds 180] [--commands 40] [--status-every 10] [--telemetry-every 20]
 *                   [--poll-wait 20] [--db-pool 10] [--render-debounce 600] [--ramp 30]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ADMIN_DATABASE_URL, createTestDatabase } from '../test/helper.ts';
import { CLOUD_DIR, freePort, runScript } from '../test/processes.ts';
import { cpuSecondsOf, loadAverage, runQueueWaitSecondsOf, sampleProcess } from './proc-usage.ts';

const ROOT_DIR = fileURLToPath(new URL('../../', import.meta.url));

function integerFlag(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    console.error(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
    process.exit(2);
  }
  return Number(value);
}

const { values } = parseArgs({
  options: {
    devices: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '180' },
    commands: { type: 'string', default: '40' },
    'status-every': { type: 'string', default: '10' },
    'telemetry-every': { type: 'string', default: '20' },
    'poll-wait': { type: 'string', default: '20' },
    'db-pool': { type: 'string', default: '10' },
    'render-debounce': { type: 'string', default: '600' },
    ramp: { type: 'string', default: '30' },
  },
});
const DEVICES = integerFlag('devices', values.devices, 1, 20_000);
const SECONDS = integerFlag('seconds', values.seconds, 10, 86_400);
const COMMANDS = integerFlag('commands', values.commands, 0, 10_000);
const STATUS_EVERY = integerFlag('status-every', values['status-every'], 1, 3600);
const TELEMETRY_EVERY = integerFlag('telemetry-every', values['telemetry-every'], 1, 3600);
const POLL_WAIT = integerFlag('poll-wait', values['poll-wait'], 0, 25);
const DB_POOL = integerFlag('db-pool', values['db-pool'], 1, 500);
// Every trajectory upload queues a redraw of its box's image (~60 ms of CPU) unless one is already waiting; at the
// service's default 10 s that is one redraw per upload. 600 s is what docs/scaling.md advises for large fleets.
// The cost of redraws is measured with a shorter debounce (--render-debounce 60), see docs/benchmarks.md.
const RENDER_DEBOUNCE = integerFlag('render-debounce', values['render-debounce'], 0, 86_400);
// Devices come online over this many seconds, as a fleet does; 0 starts them all in the same instant (an outage's
// end without the agent's jittered backoff).
const RAMP = integerFlag('ramp', values.ramp, 0, 3600);
const BASELINE_SAMPLES = 200;

interface OperationReport {
  count: number;
  errors: number;
  errorsByReason: Record<string, number>;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
}
interface FleetReport {
  devices: number;
  seconds: number;
  /** How long the fleet really ran. */
  wallSeconds: number;
  operations: Record<string, OperationReport>;
  commandDelivery: OperationReport;
  errors: number;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The cloud as deployed (`node --import tsx src/server.ts`), so that the child's pid is the server's own. */
async function startCloud(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: CLOUD_DIR, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) throw new Error(`server did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, pid: child.pid!, output: () => output, stop: () => (child.kill('SIGTERM'), exited) };
}

/** One status heartbeat at a time on the idle server: what the fleet's heartbeats are compared with. */
async function idleStatusLatency(url: string, token: string) {
  const times: number[] = [];
  for (let i = 0; i < BASELINE_SAMPLES; i++) {
    const started = performance.now();
    const response = await fetch(`${url}/api/entrance-live/device/status`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ boxId: 'baseline-box', cameraStatus: 'ok', publisherState: 'idle' }),
    });
    await response.text();
    if (!response.ok) throw new Error(`baseline status answered ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50Ms: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)) };
}

/** Samples the server, the fleet, the database's Postgres backends and the load average once a second. */
function startSampling(serverPid: number, databaseName: string, admin: pg.Client) {
  const startedAt = performance.now();
  const serverCpuAtStart = cpuSecondsOf(serverPid) ?? 0;
  const serverWaitAtStart = runQueueWaitSecondsOf(serverPid) ?? 0;
  // Per backend pid: [cpu, run-queue wait] at its first sample (0 for ones opened during the run) and at its last.
  const backendBase = new Map<number, [number, number]>();
  const backendLast = new Map<number, [number, number]>();
  // What the database's backends were doing, one count per backend per sample.
  const activity = new Map<string, number>();
  let maxActive = 0;
  let firstBackendSample = true;
  let fleetPid: number | undefined;
  const server = { peakRssMb: 0, maxFds: 0, cpuWindows: [] as number[] };
  const fleet = { peakRssMb: 0, maxFds: 0, cpuSeconds: 0 };
  const loads: number[] = [];
  let lastCpu = serverCpuAtStart;
  let lastAt = startedAt;
  let tick = 0;
  let busy = false;

  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const now = performance.now();
      const s = sampleProcess(serverPid);
      if (s) {
        server.peakRssMb = Math.max(server.peakRssMb, s.peakRssMb);
        server.maxFds = Math.max(server.maxFds, s.openFds ?? 0);
        // CPU over 10 s windows: the busiest stretch, not only the average.
        if (++tick % 10 === 0) {
          server.cpuWindows.push((s.cpuSeconds - lastCpu) / ((now - lastAt) / 1000));
          lastCpu = s.cpuSeconds;
          lastAt = now;
        }
      }
      if (fleetPid !== undefined) {
        const f = sampleProcess(fleetPid);
        if (f) {
          fleet.peakRssMb = Math.max(fleet.peakRssMb, f.peakRssMb);
          fleet.maxFds = Math.max(fleet.maxFds, f.openFds ?? 0);
          fleet.cpuSeconds = f.cpuSeconds;
        }
      }
      if (tick % 5 === 0) loads.push(loadAverage());
      const { rows } = await admin.query<{ pid: number; what: string }>(
        `SELECT pid, state || coalesce(' ' || wait_event_type || ':' || wait_event, '') AS what FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
        [databaseName],
      );
      maxActive = Math.max(maxActive, rows.filter((r) => r.what.startsWith('active')).length);
      for (const { pid, what } of rows) {
        activity.set(what, (activity.get(what) ?? 0) + 1);
        const cpu = cpuSecondsOf(pid);
        const wait = runQueueWaitSecondsOf(pid);
        if (cpu === null || wait === null) continue;
        // Backends open before the run count from the first sample; ones opened later from their start.
        if (!backendBase.has(pid)) backendBase.set(pid, firstBackendSample ? [cpu, wait] : [0, 0]);
        backendLast.set(pid, [cpu, wait]);
      }
      firstBackendSample = false;
    })()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, 1000);

  return {
    watchFleet: (pid: number) => (fleetPid = pid),
    stop: () => {
      clearInterval(timer);
      const wall = (performance.now() - startedAt) / 1000;
      const serverCpu = (cpuSecondsOf(serverPid) ?? lastCpu) - serverCpuAtStart;
      const serverWait = (runQueueWaitSecondsOf(serverPid) ?? serverWaitAtStart) - serverWaitAtStart;
      let postgresCpu = 0;
      let postgresWait = 0;
      for (const [pid, [cpu, wait]] of backendLast) {
        const [cpuBase, waitBase] = backendBase.get(pid) ?? [cpu, wait];
        postgresCpu += cpu - cpuBase;
        postgresWait += wait - waitBase;
      }
      const samples = [...activity.values()].reduce((a, b) => a + b, 0);
      return {
        wallSeconds: round(wall),
        server: {
          cpuSeconds: round(serverCpu),
          meanCores: round(serverCpu / wall, 2),
          busiest10sCores: round(Math.max(0, ...server.cpuWindows), 2),
          peakRssMb: server.peakRssMb,
          maxOpenFds: server.maxFds,
          runQueueWaitSeconds: round(serverWait),
        },
        postgresBackends: {
          cpuSeconds: round(postgresCpu),
          meanCores: round(postgresCpu / wall, 2),
          runQueueWaitSeconds: round(postgresWait),
          backendsSeen: backendLast.size,
          maxActiveAtOnce: maxActive,
          activityShare: Object.fromEntries([...activity].sort((x, y) => y[1] - x[1]).map(([what, n]) => [what, round(n / samples, 3)])),
        },
        fleet: { cpuSeconds: round(fleet.cpuSeconds), peakRssMb: fleet.peakRssMb, maxOpenFds: fleet.maxFds },
        loadAverage1m: loads.length ? { min: Math.min(...loads), mean: round(loads.reduce((a, b) => a + b, 0) / loads.length, 2), max: Math.max(...loads) } : null,
      };
    },
  };
}

function runFleetProcess(url: string, token: string, onStart: (child: ChildProcess) => void): Promise<{ report: FleetReport; code: number | null; stderr: string }> {
  const args = [
    '--import', 'tsx', 'simulator/src/cli.ts', 'fleet', '--cloud', url, '--devices', String(DEVICES), '--seconds', String(SECONDS),
    '--commands', String(COMMANDS), '--ramp', String(RAMP), '--status-every', String(STATUS_EVERY), '--telemetry-every', String(TELEMETRY_EVERY), '--poll-wait', String(POLL_WAIT),
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT_DIR, env: { ...process.env, HIVEGATE_TOKEN: token } });
  onStart(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    process.stderr.write(chunk);
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ report: JSON.parse(stdout) as FleetReport, code, stderr });
      } catch {
        reject(new Error(`the fleet printed no report (exit ${code}): ${stderr.slice(-2000)}`));
      }
    });
  });
}

async function databaseFacts(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Partitions are folded into their table. Statistics are complete once the server's connections closed.
    const tables = await client.query<{ table: string; inserted: number; updated: number; rows: number; bytes: number }>(`
      SELECT coalesce(pg_partition_root(relid), relid)::regclass::text AS table,
             sum(n_tup_ins)::float8 AS inserted, sum(n_tup_upd)::float8 AS updated, sum(n_live_tup)::float8 AS rows,
             sum(pg_total_relation_size(relid))::float8 AS bytes
      FROM pg_stat_user_tables GROUP BY 1 HAVING sum(n_tup_ins) + sum(n_tup_upd) > 0 ORDER BY 1`);
    // Render jobs wait out their debounce on purpose; "overdue" ones are a backlog of work nobody got to.
    const jobs = await client.query<{ kind: string; state: string; n: number; overdue: number }>(
      `SELECT kind, state, count(*)::int AS n, count(*) FILTER (WHERE state = 'queued' AND run_at < now() - interval '5 seconds')::int AS overdue
       FROM jobs GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    const commands = await client.query<{ command_type: string; created: number; delivered: number; acked: number; withdrawn: number; redelivered: number }>(`
      SELECT command_type, count(*)::int AS created, count(delivered_at)::int AS delivered, count(acked_at)::int AS acked,
             count(cancelled_at)::int AS withdrawn, count(*) FILTER (WHERE delivery_count > 1)::int AS redelivered
      FROM live_commands GROUP BY 1 ORDER BY 1`);
    const sessions = await client.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM live_sessions GROUP BY 1 ORDER BY 1`);
    return {
      tables: Object.fromEntries(tables.rows.map((r) => [r.table, { inserted: r.inserted, updated: r.updated, bytes: r.bytes }])),
      jobs: jobs.rows,
      liveCommands: commands.rows,
      liveSessions: Object.fromEntries(sessions.rows.map((r) => [r.status, r.n])),
    };
  } finally {
    await client.end();
  }
}

async function main() {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-soak-'));
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, JWT_SECRET: 'soak-secret-soak-secret-soak-secret-00000', LOG_LEVEL: 'warn', DB_POOL_SIZE: String(DB_POOL), HEATMAP_RENDER_DEBOUNCE_SECONDS: String(RENDER_DEBOUNCE) };
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  const server = await startCloud(env);
  let stopped = false;
  try {
    await runScript('src/cli.ts', ['user', 'add', 'soak'], env);
    const created = await runScript('src/cli.ts', ['token', 'create', '--user', 'soak', '--name', 'fleet', '--scope', 'ingest', '--scope', 'device', '--scope', 'control', '--scope', 'read'], env);
    if (created.code !== 0) throw new Error(`token create failed: ${created.stderr}`);
    const token = created.stdout.trim();
    const baseline = await idleStatusLatency(server.url, token);
    const startedAt = new Date();
    const loadBefore = loadavg().map((n) => round(n, 2));

    const sampling = startSampling(server.pid, database.name, admin);
    const fleetStartedAt = Date.now();
    const fleet = await runFleetProcess(server.url, token, (child) => sampling.watchFleet(child.pid!));
    const usage = sampling.stop();
    const loadAfter = loadavg().map((n) => round(n, 2));

    const exitCode = await server.stop();
    stopped = true;
    const serverLog = server.output();
    const serverErrors = serverLog.split('\n').filter((line) => /"level":(50|60)/.test(line));
    // When and why the server failed requests: a burst at the start reads differently from a steady trickle.
    const errorsByMessage: Record<string, number> = {};
    const errorsBy10s: Record<string, number> = {};
    for (const line of serverErrors) {
      try {
        const entry = JSON.parse(line) as { time: number; msg: string; err?: { message?: string } };
        const why = `${entry.msg}: ${entry.err?.message ?? ''}`;
        errorsByMessage[why] = (errorsByMessage[why] ?? 0) + 1;
        const bucket = String(Math.floor((entry.time - fleetStartedAt) / 10_000) * 10);
        errorsBy10s[bucket] = (errorsBy10s[bucket] ?? 0) + 1;
      } catch {
        errorsByMessage[line.slice(0, 200)] = (errorsByMessage[line.slice(0, 200)] ?? 0) + 1;
      }
    }
    await new Promise((r) => setTimeout(r, 1000)); // let the closed backends' statistics land
    const facts = await databaseFacts(database.url);

    const ops = fleet.report.operations;
    const statusUnderLoad = ops.status?.p50Ms ?? NaN;
    // Long-polls apart, as the results table has them: each holds for up to --poll-wait.
    const requests = Object.entries(ops).reduce((n, [name, op]) => (name === 'poll' ? n : n + op.count + op.errors), 0);
    const longPolls = (ops.poll?.count ?? 0) + (ops.poll?.errors ?? 0);
    const report = {
      startedAt: startedAt.toISOString(),
      settings: { devices: DEVICES, seconds: SECONDS, commands: COMMANDS, statusEverySeconds: STATUS_EVERY, telemetryEverySeconds: TELEMETRY_EVERY, pollWaitSeconds: POLL_WAIT, dbPoolSize: DB_POOL, renderDebounceSeconds: RENDER_DEBOUNCE, rampSeconds: RAMP },
      errors: fleet.report.errors,
      fleetExitCode: fleet.code,
      operations: ops,
      commandDelivery: fleet.report.commandDelivery,
      completedRequestsPerSecond: round(requests / fleet.report.wallSeconds),
      completedLongPollsPerSecond: round(longPolls / fleet.report.wallSeconds),
      idleBaselineStatus: baseline,
      statusP50UnderLoadToIdle: round(statusUnderLoad / baseline.p50Ms, 2),
      usage,
      loadAverage: { before: loadBefore, after: loadAfter },
      serverExitCode: exitCode,
      serverErrorLines: serverErrors.length,
      serverErrorsByMessage: errorsByMessage,
      serverErrorsBySecondOfRun: errorsBy10s,
      database: facts,
    };
    console.log(JSON.stringify(report, null, 2));
    const delivery = fleet.report.commandDelivery;
    console.log(
      `${DEVICES} devices for ${SECONDS} s: ${fleet.report.errors} errors, ${report.completedRequestsPerSecond} requests/s (+ ${report.completedLongPollsPerSecond} long-polls/s); status p50 ${statusUnderLoad} ms = ${report.statusP50UnderLoadToIdle} x idle (${baseline.p50Ms} ms); ` +
        `command delivery p50/p95 ${delivery.p50Ms}/${delivery.p95Ms} ms (${delivery.count} delivered); server ${usage.server.meanCores} cores mean, ${usage.server.busiest10sCores} busiest 10 s, peak RSS ${usage.server.peakRssMb} MB; ` +
        `waited for a CPU ${usage.server.runQueueWaitSeconds} s; Postgres ${usage.postgresBackends.meanCores} cores, waited ${usage.postgresBackends.runQueueWaitSeconds} s; load average ${usage.loadAverage1m?.min}–${usage.loadAverage1m?.max}`,
    );
    if (fleet.report.errors > 0 || serverErrors.length > 0) process.exitCode = 1;
  } finally {
    if (!stopped) await server.stop();
    await admin.end();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
