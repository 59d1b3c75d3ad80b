import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { identityOf, Outbox } from '../src/outbox/outbox.ts';
import { Uplink, type UplinkEvent } from '../src/uplink/uplink.ts';
import { FakeCloud } from './helpers/fake-cloud.ts';
import { tempDir } from './helpers/media.ts';

const dir = tempDir('uplink');
afterAll(() => dir.cleanup());
let n = 0;

const movement = (i: number) => ({ hiveId: 'hive-1', boxId: 'box-1', beesIn: i, beesOut: 1, timestamp: 1_767_225_600 + 60 * i });

let cloud: FakeCloud;
let outbox: Outbox;
let uplink: Uplink | undefined;
let events: UplinkEvent[];

beforeEach(async () => {
  cloud = new FakeCloud();
  await cloud.start();
  outbox = new Outbox({ path: join(dir.path, `uplink-${n++}.db`) });
  outbox.start();
  events = [];
});
afterEach(async () => {
  await uplink?.stop();
  uplink = undefined;
  outbox.stop();
  await cloud.stop();
});

function makeUplink(overrides: Partial<ConstructorParameters<typeof Uplink>[0]> = {}): Uplink {
  uplink = new Uplink({
    outbox, cloudUrl: cloud.url, token: 'good-token', backoff: { initialMs: 20, maxMs: 100 }, idleMs: 50,
    onEvent: (e) => events.push(e), ...overrides,
  });
  return uplink;
}

function enqueueMovements(count: number, poison?: number): void {
  outbox.enqueueMany(Array.from({ length: count }, (_, i) => {
    const record = i === poison ? { ...movement(i), beesIn: -5 } : movement(i);
    return { kind: 'movement' as const, dedupeKey: identityOf('movement', record), payload: record };
  }));
}

describe('Uplink', () => {
  it('retries 503s with backoff, honours Retry-After, then delivers once with the bearer token', async () => {
    enqueueMovements(3);
    cloud.overrides.push(
      (req, res) => { req.status = 503; res.writeHead(503, { 'retry-after': '1' }).end('{"error":"db down"}'); return true; },
      (req, res) => { req.status = 503; res.writeHead(503).end('{"error":"db down"}'); return true; },
    );
    const u = makeUplink();
    u.start();
    const started = Date.now();
    expect(await u.drain(10_000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950); // Retry-After: 1 beats the 20 ms backoff
    expect(cloud.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(cloud.requests.every((r) => r.authorization === 'Bearer good-token')).toBe(true);
    expect([...cloud.accepted.values()]).toEqual([1, 1, 1]);
    const retries = events.filter((e) => e.type === 'retrying');
    expect(retries.map((e) => e.type === 'retrying' && e.attempt)).toEqual([1, 2]);
    expect(retries[0]!.type === 'retrying' && retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(outbox.stats().pending.movement).toBe(0);
  });

  it('isolates the one bad record of 37 by splitting on 400: it is quarantined, the other 36 arrive once', async () => {
    enqueueMovements(37, 23);
    const u = makeUplink();
    u.start();
    expect(await u.drain(10_000)).toBe(true);
    expect(cloud.accepted.size).toBe(36);
    expect([...cloud.accepted.values()].every((count) => count === 1)).toBe(true);
    expect(cloud.acceptedKeys()).not.toContain(identityOf('movement', movement(23)));
    const quarantined = outbox.quarantined();
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]!.dedupeKey).toBe(identityOf('movement', movement(23)));
    expect(quarantined[0]!.error).toContain('beesIn must be >= 0');
    expect(events.filter((e) => e.type === 'quarantined')).toHaveLength(1);
    // Binary splitting needs about log2(37) rounds of rejected halves, not one request per record.
    expect(cloud.requests.length).toBeLessThan(20);
  });

  it('stops sending on 401 and says why, until the credentials change', async () => {
    enqueueMovements(2);
    const u = makeUplink({ token: 'stale-token' });
    u.start();
    await new Promise((r) => setTimeout(r, 400));
    expect(cloud.requests).toHaveLength(1);
    const blocked = events.find((e) => e.type === 'blocked');
    expect(blocked).toMatchObject({ type: 'blocked', status: 401 });
    expect(blocked!.type === 'blocked' && blocked!.reason).toMatch(/refused the token.*HIVEGATE_TOKEN/);
    expect(u.blocked).toBe(true);
    expect(outbox.stats().pending.movement).toBe(2);
    u.updateCredentials(cloud.url, 'good-token');
    await waitFor(() => outbox.stats().pending.movement === 0);
    expect(cloud.accepted.size).toBe(2);
  });

  // A cloud without the heatmap endpoint (404) used to stop the movement records too.
  it('keeps sending other kinds when one endpoint does not exist', async () => {
    enqueueMovements(3);
    outbox.enqueueMany([{ kind: 'trajectories', dedupeKey: 'batch-1', payload: { boxId: 'box-1', trackHistory: {} } }]);
    const missingHeatmaps = (request: { path: string; status: number }, res: ServerResponse) => {
      if (request.path !== '/api/entrance-heatmaps/trajectories') return false;
      request.status = 404;
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no route"}');
      return true;
    };
    cloud.overrides.push(...Array.from({ length: 10 }, () => missingHeatmaps));
    const u = makeUplink();
    u.start();
    // Trajectories go after movement in a pass: wait for their refusal too, not just for the movement.
    await waitFor(() => outbox.stats().pending.movement === 0 && events.some((e) => e.type === 'blocked'));
    expect(u.blocked).toBe(false);
    expect(outbox.stats().pending.trajectories).toBe(1);
    expect(events.find((e) => e.type === 'blocked')).toMatchObject({ kind: 'trajectories', status: 404, reason: expect.stringMatching(/no \/api\/entrance-heatmaps\/trajectories/) });
  });

  it('sends at most 1000 records per request', async () => {
    outbox.enqueueMany(Array.from({ length: 2500 }, (_, i) => ({ kind: 'metrics' as const, dedupeKey: `scale:${i}`, payload: { hiveId: 'hive-1', fields: { weightKg: i }, dedupeKey: `scale:${i}` } })));
    const u = makeUplink();
    u.start();
    expect(await u.drain(10_000)).toBe(true);
    expect(cloud.requests.map((r) => (r.body as unknown[]).length)).toEqual([1000, 1000, 500]);
    expect(cloud.accepted.size).toBe(2500);
  });

  it('sends one trajectory batch per request and splits a batch that is too large (413)', async () => {
    for (let i = 0; i < 3; i++) outbox.enqueue('trajectories', `b${i}`, { boxId: 'box-1', timestamp: '2026-05-01T10:00:00Z', frameDimensions: { width: 640, height: 480 }, trackHistory: { 1: [[1, 2]] }, batchId: `b${i}` });
    enqueueMovements(8);
    cloud.overrides.push((req, res) => {
      req.status = 413;
      res.writeHead(413).end('{"error":"too large"}');
      return true;
    });
    const u = makeUplink();
    u.start();
    expect(await u.drain(10_000)).toBe(true);
    const trajectoryRequests = cloud.requests.filter((r) => r.path === '/api/entrance-heatmaps/trajectories');
    expect(trajectoryRequests).toHaveLength(3);
    expect(trajectoryRequests.every((r) => !Array.isArray(r.body))).toBe(true);
    const movementSizes = cloud.requests.filter((r) => r.path === '/entrance/v1/movement').map((r) => (r.body as unknown[]).length);
    expect(movementSizes).toEqual([8, 4, 4]);
    expect(cloud.accepted.size).toBe(11);
  });

  // Queued records waited out the backoff (up to 5 min) though the live link already had the cloud back.
  it('retries at once when told the cloud answers again, cutting its backoff short', async () => {
    enqueueMovements(2);
    cloud.overrides.push((req, res) => {
      req.status = 503;
      res.writeHead(503).end('{"error":"restarting"}');
      return true;
    });
    const u = makeUplink({ backoff: { initialMs: 60_000, maxMs: 60_000 }, random: () => 1 });
    u.start();
    await waitFor(() => events.some((e) => e.type === 'retrying'));
    expect(events.find((e) => e.type === 'retrying')).toMatchObject({ delayMs: 60_000 });
    const told = Date.now();
    u.cloudAnswers();
    await waitFor(() => outbox.stats().pending.movement === 0, 3000);
    expect(Date.now() - told).toBeLessThan(2000);
    expect(cloud.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('keeps a wait the cloud asked for (Retry-After) when told the cloud answers', async () => {
    enqueueMovements(1);
    cloud.overrides.push((req, res) => {
      req.status = 503;
      res.writeHead(503, { 'retry-after': '2' }).end('{"error":"busy"}');
      return true;
    });
    const u = makeUplink();
    u.start();
    await waitFor(() => events.some((e) => e.type === 'retrying'));
    u.cloudAnswers();
    await new Promise((r) => setTimeout(r, 1000));
    expect(cloud.requests).toHaveLength(1);
    await waitFor(() => outbox.stats().pending.movement === 0, 3000);
    expect(cloud.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('keeps records and retries when the cloud is unreachable, and drain gives up at its deadline', async () => {
    enqueueMovements(1);
    await cloud.stop();
    const u = makeUplink();
    u.start();
    expect(await u.drain(300)).toBe(false);
    expect(events.some((e) => e.type === 'retrying' && /network/.test(e.reason))).toBe(true);
    expect(outbox.stats().pending.movement).toBe(1);
    await cloud.start(); // lets afterEach stop it again
  });

  // drain() never returned when a garbage collection ran before its deadline: Node held the timeout weakly.
  it('gives up at its deadline though the garbage collector runs while it waits', async () => {
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    enqueueMovements(1);
    await cloud.stop();
    const u = makeUplink();
    u.start();
    const collecting = setInterval(collectGarbage, 50);
    try {
      const outcome = await Promise.race([u.drain(300), new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting'))]);
      expect(outcome).toBe(false);
    } finally {
      clearInterval(collecting);
    }
    await cloud.start();
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
