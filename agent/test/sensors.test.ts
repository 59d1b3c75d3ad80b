import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Outbox } from '../src/outbox/outbox.ts';
import { SensorReader } from '../src/sensors/sensor-reader.ts';
import { Uplink } from '../src/uplink/uplink.ts';
import { FakeCloud } from './helpers/fake-cloud.ts';
import { tempDir } from './helpers/media.ts';

const dir = tempDir('sensors');
afterAll(() => dir.cleanup());
let n = 0;
let outbox: Outbox;
let cloud: FakeCloud;
let uplink: Uplink | undefined;

beforeEach(async () => {
  outbox = new Outbox({ path: join(dir.path, `sensors-${n++}.db`) });
  outbox.start();
  cloud = new FakeCloud();
  await cloud.start();
});
afterEach(async () => {
  await uplink?.stop();
  uplink = undefined;
  outbox.stop();
  await cloud.stop();
});

describe('SensorReader', () => {
  it('queues a command reading as a metric once per slot and the uplink delivers it once despite a retry', async () => {
    let clock = Date.UTC(2026, 5, 1, 10, 0, 5);
    const logs: string[] = [];
    const reader = new SensorReader({
      outbox, deviceId: 'pi-7', hiveId: 'hive-7', intervalSeconds: 60, now: () => clock, log: (m) => logs.push(m),
      command: "printf 'temperature=21.5\\nweightKg=40.25\\nbattery=3.7\\n'",
    });
    expect(await reader.readOnce()).toEqual({ ok: true, queued: true, fields: { temperatureCelsius: 21.5, weightKg: 40.25 } });
    clock += 20_000; // a second read in the same minute (e.g. after a restart) adds nothing
    expect(await reader.readOnce()).toMatchObject({ ok: true, queued: false });
    clock += 60_000;
    expect(await reader.readOnce()).toMatchObject({ ok: true, queued: true });
    expect(logs).toEqual(['sensors: ignoring "battery" (not one of temperatureCelsius, humidityPercent, weightKg)']);

    cloud.overrides.push((req, res) => {
      req.status = 503;
      res.writeHead(503).end('{"error":"busy"}');
      return true;
    });
    uplink = new Uplink({ outbox, cloudUrl: cloud.url, token: 'good-token', backoff: { initialMs: 20, maxMs: 50 }, idleMs: 50 });
    uplink.start();
    expect(await uplink.drain(10_000)).toBe(true);
    const slot = Date.UTC(2026, 5, 1, 10, 0, 0) / 1000;
    expect(cloud.acceptedKeys()).toEqual([`pi-7:hive-7:${slot}`, `pi-7:hive-7:${slot + 60}`]);
    expect([...cloud.accepted.values()]).toEqual([1, 1]);
    const sent = cloud.requests.filter((r) => r.status === 200).flatMap((r) => r.body as unknown[]);
    expect(sent[0]).toEqual({ hiveId: 'hive-7', fields: { temperatureCelsius: 21.5, weightKg: 40.25 }, timestamp: slot + 5, dedupeKey: `pi-7:hive-7:${slot}` });
  });

  it('reads a JSON file and refuses a stale one', async () => {
    const file = join(dir.path, 'reading.json');
    writeFileSync(file, '{"humidityPercent": 55}');
    const reader = new SensorReader({ outbox, deviceId: 'pi-7', hiveId: 3, intervalSeconds: 30, file });
    expect(await reader.readOnce()).toMatchObject({ ok: true, queued: true, fields: { humidityPercent: 55 } });
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(file, old, old);
    const stale = await reader.readOnce();
    expect(stale.ok).toBe(false);
    expect(!stale.ok && stale.error).toMatch(/reading\.json is stale \(last written 6\d\d s ago\)/);
  });

  it('says why a command gave no reading', async () => {
    const failing = new SensorReader({ outbox, deviceId: 'd', hiveId: 1, intervalSeconds: 60, command: ['/bin/sh', '-c', 'echo "scale not found" >&2; exit 3'] });
    const result = await failing.readOnce();
    expect(!result.ok && result.error).toMatch(/sensor command failed .*: scale not found/);
    const slow = new SensorReader({ outbox, deviceId: 'd', hiveId: 1, intervalSeconds: 60, timeoutSeconds: 0.3, command: 'sleep 5' });
    expect(await slow.readOnce()).toEqual({ ok: false, error: 'sensor command timed out after 0.3 s' });
    const garbage = new SensorReader({ outbox, deviceId: 'd', hiveId: 1, intervalSeconds: 60, command: 'echo hello' });
    expect(await garbage.readOnce()).toEqual({ ok: false, error: 'line 1 ("hello") is not key=value' });
    expect(outbox.stats().pending.metrics).toBe(0);
  });
});
