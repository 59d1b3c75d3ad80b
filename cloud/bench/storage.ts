/**
 * Storage per row, for capacity planning: sends telemetry through the HTTP API (cloud in its own process on a fresh
 * database of the local Postgres) the way a fleet of hives does — one reading per hive per minute, hives
 * interleaved — then measures what Postgres holds per row after VACUUM (heap + indexes + TOAST, partitions folded
 * into their table), and per box-day of heatmap grid and per rendered heatmap image. Baseline (same run): the
 * rows' own data size (`pg_column_size` of the row), so the ratio is the overhead of headers, pages and indexes.
 *   pnpm bench:storage [--rows 1000000] [--hives 10000] [--heatmap-boxes 20] [--heatmap-uploads 300]
 */
import { readdirSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase } from '../test/helper.ts';
import { runScript, startServer } from '../test/processes.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    hives: { type: 'string', default: '10000' },
    'heatmap-boxes': { type: 'string', default: '20' },
    'heatmap-uploads': { type: 'string', default: '300' },
  },
});
const ROWS = Number(values.rows);
const HIVES = Number(values.hives);
const HEATMAP_BOXES = Number(values['heatmap-boxes']);
const HEATMAP_UPLOADS = Number(values['heatmap-uploads']);
for (const [name, value] of Object.entries({ rows: ROWS, hives: HIVES, 'heatmap-boxes': HEATMAP_BOXES, 'heatmap-uploads': HEATMAP_UPLOADS })) {
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} must be a positive integer`);
    process.exit(2);
  }
}
const BATCH = 1000;
const CONCURRENCY = 4;
// Whole minutes ending an hour ago: the rows land in the months the service created partitions for, not the default one.
const T0 = Math.floor(Date.now() / 60_000) * 60 - Math.ceil(ROWS / HIVES) * 60 - 3600;

const hive = (i: number) => `hive-${String(i % HIVES).padStart(5, '0')}`;
const minuteOf = (i: number) => T0 + Math.floor(i / HIVES) * 60;

/** What the agent's sensor reader sends: three fields and a dedupe key of device, hive and minute slot. */
const metric = (i: number) => ({
  hiveId: hive(i),
  fields: { temperatureCelsius: 33 + (i % 29) / 10, humidityPercent: 55 + (i % 17), weightKg: 38 + (i % 97) / 10 },
  timestamp: minuteOf(i),
  dedupeKey: `scale-${String(i % HIVES).padStart(5, '0')}:${hive(i)}:${minuteOf(i) / 60}`,
});
/** One minute of an entrance observer's counts. */
const movement = (i: number) => ({
  hiveId: hive(i),
  boxId: `box-${String(i % HIVES).padStart(5, '0')}`,
  beesIn: (i * 7) % 60,
  beesOut: (i * 5) % 55,
  avgSpeed: 3 + (i % 40) / 10,
  p95Speed: 7 + (i % 50) / 10,
  detectedBees: 20 + (i % 30),
  stationaryBees: i % 6,
  beeInteractions: i % 9,
  timestamp: minuteOf(i),
});

/** A day of one box's trajectories: bees crossing the frame towards and away from the entrance slot. */
function trajectories(box: number, upload: number) {
  let state = (box * 7919 + upload * 104729) >>> 0 || 1;
  const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const tracks: Record<string, number[][]> = {};
  for (let k = 0; k < 20; k++) {
    let x = random() * 640;
    let y = 300 + random() * 180;
    const points: number[][] = [];
    for (let j = 0; j < 30; j++) {
      x = Math.min(639, Math.max(0, x + (random() - 0.5) * 30));
      y = Math.min(479, Math.max(0, y - random() * 12));
      points.push([Math.round(x), Math.round(y)]);
    }
    tracks[String(k)] = points;
  }
  const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400 - 86_400;
  return { boxId: `heat-${box}`, timestamp: dayStart + Math.floor((upload / HEATMAP_UPLOADS) * 86_000), frameDimensions: { width: 640, height: 480 }, trackHistory: tracks, batchId: `b-${box}-${upload}` };
}

async function sendAll(url: string, token: string, route: string, count: number, body: (i: number) => unknown) {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const from = next;
      if (from >= count) return;
      next += BATCH;
      const items = Array.from({ length: Math.min(BATCH, count - from) }, (_, j) => body(from + j));
      const response = await fetch(`${url}${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(items) });
      if (!response.ok) throw new Error(`${route} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function sendTrajectories(url: string, token: string) {
  const uploads = Array.from({ length: HEATMAP_BOXES * HEATMAP_UPLOADS }, (_, n) => [n % HEATMAP_BOXES, Math.floor(n / HEATMAP_BOXES)] as const);
  let next = 0;
  const worker = async () => {
    while (next < uploads.length) {
      const [box, upload] = uploads[next++]!;
      const response = await fetch(`${url}/api/entrance-heatmaps/trajectories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(trajectories(box, upload)),
      });
      if (!response.ok) throw new Error(`trajectories answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

function filesUnder(dir: string): { file: string; bytes: number }[] {
  let out: { file: string; bytes: number }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out = out.concat(filesUnder(full));
    else out.push({ file: full, bytes: statSync(full).size });
  }
  return out;
}

async function main() {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-storage-'));
  const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, JWT_SECRET: 'storage-secret-storage-secret-storage-00', LOG_LEVEL: 'warn', HEATMAP_RENDER_DEBOUNCE_SECONDS: '1' };
  const server = await startServer(env);
  const client = new pg.Client({ connectionString: database.url });
  try {
    await runScript('src/cli.ts', ['user', 'add', 'storage'], env);
    const token = (await runScript('src/cli.ts', ['token', 'create', '--user', 'storage', '--scope', 'ingest'], env)).stdout.trim();
    await client.connect();
    // WAL position of the whole server: other databases' writes meanwhile count too, so these are upper bounds.
    const walNow = async () => (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    const walSince = async (from: string) => Number((await client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS bytes', [from])).rows[0]!.bytes);
    let wal = await walNow();
    let started = performance.now();
    await sendAll(server.url, token, '/iot/v1/metrics', ROWS, metric);
    const metricsSeconds = (performance.now() - started) / 1000;
    const metricsWal = await walSince(wal);
    wal = await walNow();
    started = performance.now();
    await sendAll(server.url, token, '/entrance/v1/movement', ROWS, movement);
    const movementSeconds = (performance.now() - started) / 1000;
    const movementWal = await walSince(wal);
    wal = await walNow();
    started = performance.now();
    await sendTrajectories(server.url, token);
    const trajectorySeconds = (performance.now() - started) / 1000;
    const trajectoryWal = await walSince(wal);

    // Wait for the heatmap images: the last uploads' render jobs run after their debounce.
    const deadline = Date.now() + 120_000;
    while ((await client.query(`SELECT 1 FROM jobs WHERE state IN ('queued', 'running')`)).rowCount! > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    await server.stop();
    await client.query('VACUUM ANALYZE');

    const tables = ['metrics', 'metric_dedupe', 'movements', 'movement_dedupe', 'heatmap_days', 'heatmap_batches'];
    const measured: Record<string, { rows: number; totalBytes: number; bytesPerRow: number; tupleBytesPerRow: number; overhead: number }> = {};
    for (const table of tables) {
      const { rows } = await client.query<{ rows: number; total: number; tuple: number }>(
        `SELECT (SELECT count(*) FROM ${table})::float8 AS rows,
                coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('${table}')), pg_total_relation_size('${table}'))::float8 AS total,
                (SELECT avg(pg_column_size(t.*)) FROM ${table} t)::float8 AS tuple`,
      );
      const r = rows[0]!;
      const perRow = r.total / r.rows;
      measured[table] = {
        rows: r.rows,
        totalBytes: r.total,
        bytesPerRow: Math.round(perRow),
        tupleBytesPerRow: Math.round(r.tuple),
        overhead: Math.round((perRow / r.tuple) * 100) / 100,
      };
    }
    const grid = await client.query<{ cells: number; nonzero: number; stored: number }>(
      `SELECT avg(cardinality(counts))::float8 AS cells, avg((SELECT count(*) FROM unnest(counts) c WHERE c > 0))::float8 AS nonzero,
              avg(pg_column_size(counts))::float8 AS stored FROM heatmap_days`,
    );
    const uploads = HEATMAP_BOXES * HEATMAP_UPLOADS;
    const images = filesUnder(path.join(dataDir, 'blobs', 'heatmaps'));
    const report = {
      rows: ROWS,
      hives: HIVES,
      ingestRowsPerSecond: { metrics: Math.round(ROWS / metricsSeconds), movements: Math.round(ROWS / movementSeconds) },
      walBytesAtMost: { perMetric: Math.round(metricsWal / ROWS), perMovement: Math.round(movementWal / ROWS), perTrajectoryUpload: Math.round(trajectoryWal / uploads) },
      heatmap: {
        boxes: HEATMAP_BOXES,
        uploadsPerBox: HEATMAP_UPLOADS,
        pointsPerSecond: Math.round((uploads * 600) / trajectorySeconds),
        gridCells: grid.rows[0]!.cells,
        nonzeroCellsPerDay: Math.round(grid.rows[0]!.nonzero),
        storedGridBytes: Math.round(grid.rows[0]!.stored),
        images: images.length,
        imageBytesMean: images.length ? Math.round(images.reduce((n, f) => n + f.bytes, 0) / images.length) : null,
      },
      tables: measured,
    };
    console.log(JSON.stringify(report, null, 2));
    for (const [table, m] of Object.entries(measured)) {
      console.log(`${table}: ${m.bytesPerRow} bytes/row on disk (${m.bytesPerRow} MB per 1M rows) = ${m.overhead} x the row data (${m.tupleBytesPerRow} bytes)`);
    }
  } finally {
    await client.end().catch(() => undefined);
    await server.stop().catch(() => undefined);
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
