import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { runAgent, statusFilePath, type AgentControls } from '../src/agent.ts';
import { resolveConfig, type AgentConfig } from '../src/config/config.ts';
import { identityOf, Outbox } from '../src/outbox/outbox.ts';
import type * as RetryPolicy from '../src/uplink/retry-policy.ts';
import { FakeGateway } from './helpers/fake-gateway.ts';
import { useTwoBeesCamera } from './helpers/media.ts';

// The uplink's backoff pinned at a minute, as it grows to after a few failures (up to 5): what it waited out once
// the cloud was back is then plain to see. The live link's backoff (backoffDelay) is left as it is.
vi.mock('../src/uplink/retry-policy.ts', async (importOriginal) => ({
  ...(await importOriginal<typeof RetryPolicy>()),
  retryDelay: () => 60_000,
}));

const gateway = new FakeGateway();

const { dir, camera } = useTwoBeesCamera('agent-cloud', { loop: true, server: gateway });

/** The config of an agent on the camera, with the motion detector, state in its own folder, and quick live requests. */
function agentConfig(name: string, token = gateway.deviceToken): AgentConfig {
  return resolveConfig({
    file: {
      hiveId: 'hive-1', boxId: 'box-1', deviceId: `pi-${name}`, source: { url: camera().url },
      cloud: { url: gateway.url, token },
      live: { statusIntervalSeconds: 1, pollWaitSeconds: 1 },
      detector: { kind: 'motion' },
      stateDir: join(dir.path, name),
    },
    env: {},
  });
}

/** A running agent, its log collected; `stop()` resolves to its exit code. */
function startAgent(config: AgentConfig) {
  let stop: () => void = () => {};
  const logs: string[] = [];
  let controls: AgentControls | undefined;
  const exit = runAgent(config, { stopSignal: new Promise<void>((resolve) => (stop = resolve)), log: (m) => logs.push(m), onReady: (ready) => (controls = ready) });
  return {
    logs,
    /** New credentials, as SIGHUP brings them. */
    updateToken(token: string): void {
      controls!.updateCredentials(gateway.url, token);
    },
    async stop(): Promise<number> {
      stop();
      return exit;
    },
  };
}

/** Queues one movement record in the outbox at `path`, as an earlier run would have left it. */
function queueMovement(path: string, timestamp: number): string {
  const movement = { hiveId: 'hive-1', boxId: 'box-1', beesIn: 4, beesOut: 2, timestamp };
  const outbox = new Outbox({ path });
  outbox.start();
  const dedupeKey = identityOf('movement', movement);
  outbox.enqueue('movement', dedupeKey, movement);
  outbox.stop();
  return dedupeKey;
}

const delivered = (timestamp: number) => gateway.ingested.some((r) => r.path === '/entrance/v1/movement' && (r.body as { timestamp: number }[]).some((m) => m.timestamp === timestamp));

describe('agent and a cloud that goes away', () => {
  // The device loop said "the cloud answers again" while the queued counts waited out the uplink's backoff (up to 5 min).
  it('sends what it queued as soon as the live link hears from the cloud again', async () => {
    const timestamp = 1_767_225_600;
    gateway.deviceAnswer = 503;
    gateway.ingestAnswer = 503;
    const config = agentConfig('back');
    queueMovement(config.outbox.path, timestamp);
    const agent = startAgent(config);
    try {
      await gateway.waitFor(() => agent.logs.some((l) => l.startsWith('uplink retry 1 for movement in 60000 ms')) && agent.logs.some((l) => l.startsWith('live: ')), 20_000, 'both links failing');
      gateway.deviceAnswer = undefined;
      gateway.ingestAnswer = undefined;
      const back = Date.now();
      await gateway.waitFor(() => delivered(timestamp), 15_000, 'the queued movement delivered');
      expect(Date.now() - back).toBeLessThan(15_000);
      expect(agent.logs).toContainEqual(expect.stringMatching(/^live: the cloud answers again, after \d+ failed requests$/));
      expect(agent.logs).toContainEqual(expect.stringMatching(/^uplink: movement delivered again after 1 failed attempts$/));
    } finally {
      expect(await agent.stop()).toBe(0);
    }
  }, 60_000);

  // A refused token was one log line ("UPLINK STOPPED: 401 …"); status showed only "last upload" growing older.
  it('status says the uplink and live control stopped on a refused token, and why, until the token is fixed', async () => {
    const timestamp = 1_767_225_660;
    const config = agentConfig('refused', 'stale-token');
    queueMovement(config.outbox.path, timestamp);
    const agent = startAgent(config);
    const statusFile = statusFilePath(config);
    const status = () => (existsSync(statusFile) ? (JSON.parse(readFileSync(statusFile, 'utf8')) as Record<string, { reason: string; nextTryAt: string } | undefined>) : {});
    try {
      await gateway.waitFor(() => status().uplinkStopped !== undefined && status().liveControlStopped !== undefined, 20_000, 'both stops in the status file');
      expect(status().uplinkStopped).toEqual({ reason: '401 from /entrance/v1/movement: invalid token; the cloud refused the token: check cloud.token / HIVEGATE_TOKEN', nextTryAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      expect(status().liveControlStopped?.reason).toMatch(/^401 from \/api\/entrance-live\/device\/\w+: invalid token; the cloud refused the token: check cloud\.token \/ HIVEGATE_TOKEN$/);
      const shown = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'status', '--state-dir', config.stateDir], { cwd: join(import.meta.dirname, '..') });
      const line = (label: string) => shown.stdout.split('\n').find((l) => l.startsWith(label));
      expect(line('uplink:')).toBe(
        `uplink:        STOPPED (nothing is sent): ${status().uplinkStopped!.reason}; next try ${status().uplinkStopped!.nextTryAt}, or at once on SIGHUP (systemctl reload hivegate-agent) once the token is fixed`,
      );
      expect(line('live control:')).toMatch(/^live control: {2}STOPPED \(no live video on request\): 401 from \/api\/entrance-live\/device\/\w+: invalid token; .* next try \d{4}-/);
      // Fixed (SIGHUP): both go again, and the status file no longer says they stopped.
      agent.updateToken(gateway.deviceToken);
      await gateway.waitFor(() => delivered(timestamp), 10_000, 'the queued movement delivered');
      await gateway.waitFor(() => status().uplinkStopped === undefined && status().liveControlStopped === undefined, 10_000, 'the stops gone from the status file');
    } finally {
      expect(await agent.stop()).toBe(0);
    }
  }, 60_000);
});
