/**
 * Live gateway benchmark; the cloud runs in its own process on the local Postgres.
 *   1. Command delivery: startEntranceLiveStream → the device's long-poll returns START_STREAM, against the existing
 *      device's cadence (a plain poll every 5 s) measured in the same run. Goal: p95 < 200 ms.
 *   2. Glass-to-glass: ffmpeg (-re, 1 s segments, PROGRAM-DATE-TIME) publishes through the gateway while a viewer
 *      polls the signed playlist; lag = when a segment is listed − when its first frame was captured (its
 *      PROGRAM-DATE-TIME). Baseline: the same ffmpeg writing HLS to a local folder, watched the same way. Goal < 3 s.
 *   3. 1000 devices long-polling one instance: every poll answered 200, delivery latency measured meanwhile.
 *   pnpm bench:live [--samples 60] [--devices 1000] [--hold 12] [--stream 12]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseMediaPlaylist } from '../src/live/playlist.ts';
import { createTestDatabase } from '../test/helper.ts';
import { runScript, startServer } from '../test/processes.ts';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '60' },
    devices: { type: 'string', default: '1000' },
    hold: { type: 'string', default: '12' },
    stream: { type: 'string', default: '12' },
  },
});
const SAMPLES = Number(values.samples);
const DEVICES = Number(values.devices);
const HOLD_SECONDS = Number(values.hold);
const STREAM_SECONDS = Number(values.stream);
const ANCHOR_POLL_INTERVAL_MS = 5000;
const BASELINE_SAMPLES = 20;

let base = '';
let headers: Record<string, string> = {};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const round = (n: number) => Math.round(n * 10) / 10;
const summary = (values: number[]) => ({ n: values.length, p50: round(percentile(values, 50)), p95: round(percentile(values, 95)), max: round(Math.max(...values)) });

async function post(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function gql(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { body } = await post('/graphql', { query, variables });
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data as Record<string, unknown>;
}

const start = (boxId: string) =>
  gql('mutation ($boxId: ID!) { startEntranceLiveStream(boxId: $boxId) { id status } }', { boxId }).then((d) => d.startEntranceLiveStream as { id: string; status: string });

interface Command {
  id: string;
  commandType: string;
  sessionId: string;
  payload: Record<string, unknown>;
}
async function poll(boxId: string, waitSeconds: number): Promise<{ status: number; commands: Command[] }> {
  const { status, body } = await post('/api/entrance-live/device/poll', { boxId, cameraStatus: 'ok', publisherState: 'idle', waitSeconds });
  return { status, commands: (body.commands as Command[] | undefined) ?? [] };
}

/** One delivery: park a long-poll, start a session, time until the poll returns the command. */
async function longPollDelivery(boxId: string): Promise<number> {
  await post('/api/entrance-live/device/status', { boxId, cameraStatus: 'ok' });
  const parked = poll(boxId, 25).then((r) => ({ ...r, at: performance.now() }));
  await sleep(150);
  const sentAt = performance.now();
  await start(boxId);
  const returned = await parked;
  if (returned.commands[0]?.commandType !== 'START_STREAM') throw new Error(`poll for ${boxId} returned ${JSON.stringify(returned)}`);
  return returned.at - sentAt;
}

/** The existing device's way: a plain poll every 5 s at a random phase; time from the start until a poll sees it. */
async function intervalPollDelivery(boxId: string): Promise<number> {
  await post('/api/entrance-live/device/status', { boxId, cameraStatus: 'ok' });
  const phase = Math.random() * ANCHOR_POLL_INTERVAL_MS;
  const startAt = performance.now() + ANCHOR_POLL_INTERVAL_MS;
  let sentAt = 0;
  const starting = sleep(startAt - performance.now()).then(async () => {
    sentAt = performance.now();
    await start(boxId);
  });
  await sleep(phase);
  for (;;) {
    const { commands } = await poll(boxId, 0);
    if (commands.length > 0 && sentAt > 0) {
      await starting;
      return performance.now() - sentAt;
    }
    await sleep(ANCHOR_POLL_INTERVAL_MS);
  }
}

async function inBatches<T>(count: number, concurrency: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < count; i += concurrency) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(concurrency, count - i) }, (_, k) => run(i + k)))));
  }
  return results;
}

function ffmpegHls(output: string[], seconds: number) {
  const args = [
    '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=640x480:rate=15', '-t', String(seconds),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-pix_fmt', 'yuv420p',
    '-f', 'hls', '-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments+program_date_time', ...output,
  ];
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${stderr}`)))));
}

/** Watches a playlist every 25 ms; for each segment, when it was first listed minus its PROGRAM-DATE-TIME. */
async function watchPlaylist(read: () => Promise<string | undefined>, until: Promise<void>): Promise<number[]> {
  const lags = new Map<string, number>();
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const text = await read().catch(() => undefined);
    const now = Date.now();
    if (text) {
      try {
        const playlist = parseMediaPlaylist(text);
        const media = playlist.segments.filter((s) => !s.endsWith('.mp4'));
        media.forEach((name, i) => {
          const at = playlist.programDateTimes[i];
          if (at !== undefined && !lags.has(name)) lags.set(name, now - at);
        });
      } catch {
        // a playlist caught half-written on disk: read again
      }
    }
    await sleep(25);
  }
  // The first segments were listed before the watcher saw any playlist: drop them.
  return [...lags.values()].slice(2);
}

async function glassToGlass(): Promise<{ gateway: number[]; local: number[] }> {
  const boxId = 'g2g';
  await post('/api/entrance-live/device/status', { boxId, cameraStatus: 'ok' });
  const session = await start(boxId);
  const { commands } = await poll(boxId, 5);
  const { publisherUrl, publishToken } = commands[0]!.payload as { publisherUrl: string; publishToken: string };
  await post('/api/entrance-live/device/command-ack', { boxId, commandId: commands[0]!.id, status: 'accepted', payload: { sessionId: session.id } });
  const localDir = mkdtempSync(path.join(tmpdir(), 'hivegate-bench-hls-'));
  try {
    const viaGateway = ffmpegHls(['-method', 'PUT', '-http_persistent', '1', '-headers', `Authorization: Bearer ${publishToken}\r\n`, publisherUrl], STREAM_SECONDS);
    const local = ffmpegHls([path.join(localDir, 'index.m3u8')], STREAM_SECONDS);
    let playbackUrl: string | null = null;
    const readGateway = async () => {
      if (!playbackUrl) {
        const data = await gql('query ($boxId: ID!) { entranceLiveStreamSession(boxId: $boxId) { playbackUrl } }', { boxId });
        playbackUrl = (data.entranceLiveStreamSession as { playbackUrl: string | null } | null)?.playbackUrl ?? null;
        if (!playbackUrl) return undefined;
      }
      const response = await fetch(playbackUrl);
      return response.ok ? response.text() : undefined;
    };
    const [gatewayLags, localLags] = await Promise.all([watchPlaylist(readGateway, viaGateway), watchPlaylist(async () => readFileSync(path.join(localDir, 'index.m3u8'), 'utf8'), local)]);
    return { gateway: gatewayLags, local: localLags };
  } finally {
    rmSync(localDir, { recursive: true, force: true });
  }
}

async function manyDevices(): Promise<{ answered: number; errors: number; unexpected: number; deliveries: number[]; parkedAtOnce: number; rssMb: number }> {
  let errors = 0;
  let unexpected = 0;
  let answered = 0;
  const boxes = Array.from({ length: DEVICES }, (_, i) => `fleet-${i}`);
  const parked = boxes.map((boxId) =>
    poll(boxId, HOLD_SECONDS).then(
      (r) => {
        if (r.status !== 200) errors += 1;
        else answered += 1;
        if (r.commands.length > 0) unexpected += 1;
      },
      () => (errors += 1),
    ),
  );
  await sleep(3000);
  const parkedNow = Number(/^hivegate_live_waiting_polls (\d+)/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1] ?? NaN);
  // While the thousand wait: deliveries to 30 other boxes on the same instance.
  const deliveries = await inBatches(30, 3, (i) => longPollDelivery(`loaded-${i}`));
  await Promise.all(parked);
  const metrics = await (await fetch(`${base}/metrics`)).text();
  const rss = Number(/^hivegate_process_resident_memory_bytes (\d+)/m.exec(metrics)?.[1] ?? NaN);
  return { answered, errors, unexpected, deliveries, parkedAtOnce: parkedNow, rssMb: Math.round(rss / 1e6) };
}

async function main() {
  const database = await createTestDatabase();
  // Live segments land in the data dir's blob store: a temporary one, removed afterwards.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-bench-live-'));
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0000', LOG_LEVEL: 'warn' };
  const server = await startServer(env);
  try {
    base = server.url;
    await runScript('src/cli.ts', ['user', 'add', 'bench'], env);
    const token = (await runScript('src/cli.ts', ['token', 'create', '--user', 'bench'], env)).stdout.trim();
    headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    for (let i = 0; i < 5; i += 1) await longPollDelivery(`warmup-${i}`);
    const longPoll = await inBatches(SAMPLES, 2, (i) => longPollDelivery(`box-${i}`));
    const interval = await Promise.all(Array.from({ length: BASELINE_SAMPLES }, (_, i) => intervalPollDelivery(`interval-${i}`)));
    const g2g = await glassToGlass();
    const fleet = await manyDevices();

    const report = {
      commandDeliveryMs: { longPoll: summary(longPoll), intervalPoll5s: summary(interval), p95Ratio: Number((percentile(longPoll, 95) / percentile(interval, 95)).toFixed(4)) },
      glassToGlassMs: {
        gateway: summary(g2g.gateway),
        localDiskBaseline: summary(g2g.local),
        p95Ratio: Number((percentile(g2g.gateway, 95) / percentile(g2g.local, 95)).toFixed(2)),
        hlsJsDefaultEstimateP95: round(percentile(g2g.gateway, 95) + 2000),
      },
      thousandDevices: { devices: DEVICES, holdSeconds: HOLD_SECONDS, parkedAtOnce: fleet.parkedAtOnce, answered: fleet.answered, errors: fleet.errors, unexpectedCommands: fleet.unexpected, deliveryMsWhileParked: summary(fleet.deliveries), serverRssMb: fleet.rssMb },
    };
    console.log(JSON.stringify(report, null, 2));
    const c = report.commandDeliveryMs;
    const g = report.glassToGlassMs;
    console.log(
      `command delivery p50/p95: long-poll ${c.longPoll.p50}/${c.longPoll.p95} ms vs 5 s polling ${c.intervalPoll5s.p50}/${c.intervalPoll5s.p95} ms (p95 ratio ${c.p95Ratio}; goal p95 < 200 ms)\n` +
        `glass-to-glass p50/p95: ${g.gateway.p50}/${g.gateway.p95} ms through the gateway vs ${g.localDiskBaseline.p50}/${g.localDiskBaseline.p95} ms to local disk (ratio ${g.p95Ratio}; goal < 3000 ms; ~${g.hlsJsDefaultEstimateP95} ms with hls.js default liveSyncDurationCount 3)\n` +
        `${DEVICES} devices long-polling one instance (${fleet.parkedAtOnce} parked at once): ${fleet.answered} answered, ${fleet.errors} errors; delivery meanwhile p50/p95 ${report.thousandDevices.deliveryMsWhileParked.p50}/${report.thousandDevices.deliveryMsWhileParked.p95} ms; server RSS ${fleet.rssMb} MB`,
    );
  } finally {
    await server.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
