import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runFleet, type FleetOptions, type FleetReport } from '../src/fleet/fleet.ts';
import { FakeCloud, type FakeCloudOptions } from './fake-cloud.ts';
import { packageDir } from './helpers.ts';

let cloud: FakeCloud | undefined;
afterEach(async () => {
  await cloud?.stop();
  cloud = undefined;
});

async function fleetAgainst(cloudOptions: FakeCloudOptions, options: Partial<FleetOptions>): Promise<FleetReport> {
  cloud = new FakeCloud(cloudOptions);
  const cloudUrl = await cloud.start();
  return runFleet({
    cloudUrl,
    token: 'test-token',
    devices: 3,
    seconds: 1.5,
    ...options,
    timing: { statusEverySeconds: 0.2, telemetryEverySeconds: 0.4, pollWaitSeconds: 5, requestTimeoutSeconds: 5, ...options.timing },
  });
}

/** Every request sent is a success, a failure or unfinished, per operation and in the totals. */
function expectEveryRequestAccountedFor(report: FleetReport): void {
  const totals = { sent: 0, succeeded: 0, failed: 0, unfinished: 0 };
  for (const [operation, op] of Object.entries(report.operations)) {
    expect(op.sent, operation).toBe(op.count + op.errors + op.unfinished);
    expect(op.unfinished, operation).toBeGreaterThanOrEqual(0);
    totals.sent += op.sent;
    totals.succeeded += op.count;
    totals.failed += op.errors;
    totals.unfinished += op.unfinished;
  }
  expect(report.requests).toEqual(totals);
}

describe('sim fleet against a cloud on loopback', () => {
  it('accounts for every request, the long-polls still waiting at the end among them', async () => {
    const report = await fleetAgainst({}, {});
    expectEveryRequestAccountedFor(report);
    expect(report.errors).toBe(0);
    expect(report.operations.status?.count).toBeGreaterThanOrEqual(3);
    expect(report.operations.status?.p50Ms).not.toBeNull();
    // Each device's one long-poll was still waiting for commands when the run stopped: sent, not answered, no error.
    expect(report.operations.poll).toMatchObject({ sent: 3, count: 0, errors: 0, unfinished: 3 });
  }, 20_000);

  it('counts answered long-polls without putting their waits into latencies', async () => {
    // Before, a successful poll was not recorded at all, so a failing one showed "count 0, errors N".
    const report = await fleetAgainst({}, { timing: { pollWaitSeconds: 0.2 } as FleetOptions['timing'] });
    expectEveryRequestAccountedFor(report);
    expect(report.operations.poll?.count).toBeGreaterThanOrEqual(3);
    expect(report.operations.poll).toMatchObject({ errors: 0, p50Ms: null, maxMs: null });
  }, 20_000);

  it('shows a cloud that stops answering as timeouts', async () => {
    // Before, requests had no timeout: a stalled cloud's requests were dropped at the end and the report said 0 errors.
    const report = await fleetAgainst({ behaviour: { '/api/entrance-live/device/status': 'stall' } }, { timing: { requestTimeoutSeconds: 0.4 } as FleetOptions['timing'] });
    expectEveryRequestAccountedFor(report);
    expect(report.operations.status?.count).toBe(0);
    expect(report.operations.status?.errorsByReason.timeout).toBeGreaterThanOrEqual(3);
    expect(report.errors).toBe(report.operations.status?.errors);
  }, 20_000);

  it('counts a failing long-poll with the polls that were sent', async () => {
    const report = await fleetAgainst({ behaviour: { '/api/entrance-live/device/poll': 403 } }, {});
    expectEveryRequestAccountedFor(report);
    expect(report.operations.poll?.errorsByReason['HTTP 403']).toBeGreaterThanOrEqual(3);
    expect(report.operations.poll?.sent).toBeGreaterThanOrEqual(report.operations.poll!.errors);
  }, 20_000);

  it('lasts --seconds however slow the cloud is, and reports the time it took', async () => {
    // Before, the run waited for the live-session driver, whose mutations had no timeout: a 60 s run took 1 min 57 s.
    const started = performance.now();
    const report = await fleetAgainst({ behaviour: { '/graphql': 'stall' } }, { seconds: 1.5, commands: 3, timing: { requestTimeoutSeconds: 30 } as FleetOptions['timing'] });
    const elapsed = (performance.now() - started) / 1000;
    expect(elapsed).toBeLessThan(2.5);
    expect(report.wallSeconds).toBeGreaterThanOrEqual(1.5);
    // wallSeconds is rounded to hundredths: 1.506 s measured here came back as 1.51 and failed a bare comparison.
    expect(report.wallSeconds).toBeLessThanOrEqual(elapsed + 0.005);
    expect(report.seconds).toBe(1.5);
    // The mutation cut off at the end is no failure of the cloud.
    expect(report.commandDelivery.errors).toBe(0);
  }, 20_000);

  it('times commands that reach the device before their mutation is answered, and counts commands sent and delivered', async () => {
    // Before, the send time was filed under the session id from the mutation's answer, so a command the device's
    // parked long-poll received first was never timed: the fastest deliveries were the ones lost.
    const report = await fleetAgainst({ answerStartAfterDelivery: true }, { devices: 2, seconds: 3, commands: 2 });
    const delivery = report.commandDelivery;
    expect(delivery.sent).toBe(delivery.count + delivery.errors + delivery.unfinished);
    expect(delivery.errors).toBe(0);
    expect(delivery.count).toBeGreaterThanOrEqual(2);
    expect(delivery.unfinished).toBeLessThanOrEqual(1);
    expect(delivery.p50Ms).toBeLessThan(1000);
  }, 20_000);

  it('names why requests failed: a refused connection, a connection closed without an answer', async () => {
    // Before, both read "network: fetch failed".
    const refusing = createServer();
    refusing.listen(0, '127.0.0.1');
    await once(refusing, 'listening');
    const closedPort = portOf(refusing);
    await new Promise((resolve) => refusing.close(resolve));
    const hangingUp = createServer((socket) => socket.once('data', () => socket.destroy()));
    hangingUp.listen(0, '127.0.0.1');
    await once(hangingUp, 'listening');
    try {
      const run = (port: number) =>
        runFleet({ cloudUrl: `http://127.0.0.1:${port}`, token: 't', devices: 1, seconds: 0.5, timing: { statusEverySeconds: 0.1, telemetryEverySeconds: 10, pollWaitSeconds: 1, requestTimeoutSeconds: 5 } });
      const refused = await run(closedPort);
      expect(Object.keys(refused.operations.status?.errorsByReason ?? {})).toEqual(['ECONNREFUSED']);
      const reset = await run(portOf(hangingUp));
      expect(Object.keys(reset.operations.status?.errorsByReason ?? {})).toEqual(['UND_ERR_SOCKET']);
    } finally {
      hangingUp.close();
    }
  }, 20_000);

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('sim fleet stopped by %s prints the report so far, marked as interrupted', async (signal, exitCode) => {
    // Before, Ctrl-C ended the process with nothing printed: every result of the run was lost.
    cloud = new FakeCloud();
    const cloudUrl = await cloud.start();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'fleet', '--cloud', cloudUrl, '--token', 't', '--devices', '2', '--seconds', '60', '--status-every', '1'], {
      cwd: packageDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = once(child, 'close') as Promise<[number | null]>;
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      while (!stderr.includes('starting 2 virtual devices') && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      child.kill(signal);
      const [code] = await closed;
      expect(code, stderr).toBe(exitCode);
      const report = JSON.parse(stdout) as FleetReport;
      expect(report.interrupted).toBe(true);
      expect(report.wallSeconds).toBeLessThan(30);
      expect(report.operations.status?.count).toBeGreaterThanOrEqual(2);
      expect(report.requests.sent).toBe(report.requests.succeeded + report.requests.failed + report.requests.unfinished);
      expect(stderr).toMatch(/interrupted after \d+(\.\d)? s/);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  }, 40_000);

  it('reports a run that was not interrupted as such', async () => {
    const report = await fleetAgainst({}, { seconds: 0.5 });
    expect(report.interrupted).toBe(false);
  }, 20_000);
});

function portOf(server: Server): number {
  return (server.address() as { port: number }).port;
}
