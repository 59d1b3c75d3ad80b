/**
 * Trajectory ingest through HTTP: points per second that one cloud instance (its own process, real Postgres)
 * accepts, validates, bins and adds to the daily grids, against binning the same points in this process, measured
 * in the same run. Goal: at least 1 M points/s per instance.
 *   pnpm bench:heatmap-endpoint [--requests 300] [--tracks 200] [--points 100] [--boxes 8] [--connections 8]
 */
import autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { binTrajectories, DEFAULT_GRID } from '../src/heatmaps/grid.ts';
import { createTestDatabase } from '../test/helper.ts';
import { runScript, startServer } from '../test/processes.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '300' },
    tracks: { type: 'string', default: '200' },
    points: { type: 'string', default: '100' },
    boxes: { type: 'string', default: '8' },
    connections: { type: 'string', default: '8' },
  },
});
const REQUESTS = Number(values.requests);
const TRACKS = Number(values.tracks);
const POINTS = Number(values.points);
const BOXES = Number(values.boxes);
const CONNECTIONS = Number(values.connections);
const FRAME = { width: 640, height: 480 };
const GOAL = 1_000_000;
const DISTINCT_BODIES = 24;

/** Bees walking in from the entrance at 2–8 px/frame, one in five darting at up to 60 px/frame (as bench:heatmap). */
function trackHistory(seed: number): Record<string, [number, number][]> {
  let s = seed;
  const random = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const out: Record<string, [number, number][]> = {};
  for (let t = 0; t < TRACKS; t += 1) {
    const fast = random() < 0.2;
    const speed = fast ? 20 + random() * 40 : 2 + random() * 6;
    let x = random() * FRAME.width;
    let y = FRAME.height - random() * 40;
    let heading = -Math.PI / 2 + (random() - 0.5) * 1.5;
    const track: [number, number][] = [];
    for (let i = 0; i < POINTS; i += 1) {
      track.push([Math.round(x * 10) / 10, Math.round(y * 10) / 10]);
      heading += (random() - 0.5) * 0.6;
      x = Math.min(FRAME.width, Math.max(0, x + Math.cos(heading) * speed));
      y = Math.min(FRAME.height, Math.max(0, y + Math.sin(heading) * speed));
    }
    out[`t${seed}-${t}`] = track;
  }
  return out;
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(options, (err, result) => (err ? reject(err) : resolve(result))));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main() {
  const histories = Array.from({ length: DISTINCT_BODIES }, (_, i) => trackHistory(i + 1));
  const pointsPerRequest = TRACKS * POINTS;

  // Baseline: binning alone, same tracks, this process (median of runs over all distinct bodies).
  const tracks = histories.map((h) => Object.values(h));
  for (let i = 0; i < 3; i += 1) for (const t of tracks) binTrajectories(t, FRAME, DEFAULT_GRID);
  const runs: number[] = [];
  for (let r = 0; r < 7; r += 1) {
    const started = performance.now();
    for (const t of tracks) binTrajectories(t, FRAME, DEFAULT_GRID);
    runs.push((performance.now() - started) / 1000);
  }
  const binningRate = (tracks.length * pointsPerRequest) / median(runs);

  const database = await createTestDatabase();
  const env = {
    DATABASE_URL: database.url,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0000',
    LOG_LEVEL: 'warn',
    DB_POOL_SIZE: String(Math.max(8, CONNECTIONS)),
    HEATMAP_RENDER_DEBOUNCE_SECONDS: '5',
  };
  const server = await startServer(env);
  try {
    await runScript('src/cli.ts', ['user', 'add', 'bench'], env);
    const token = (await runScript('src/cli.ts', ['token', 'create', '--user', 'bench'], env)).stdout.trim();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // Bodies serialised up front, so the client spends its time sending, not building JSON.
    const bodies = histories.map((history, i) => JSON.stringify({ boxId: `box-${i % BOXES}`, timestamp: '2026-05-01T10:00:00', frameDimensions: FRAME, trackHistory: history }));
    const bodyBytes = bodies.reduce((a, b) => a + b.length, 0) / bodies.length;

    // Warm-up: JIT, connection pool, the days' rows.
    let next = 0;
    await run({ url: `${server.url}/api/entrance-heatmaps/trajectories`, connections: CONNECTIONS, amount: Math.max(DISTINCT_BODIES, CONNECTIONS), requests: [{ method: 'POST', headers, setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }] });

    const started = performance.now();
    const result = await run({
      url: `${server.url}/api/entrance-heatmaps/trajectories`,
      connections: CONNECTIONS,
      amount: REQUESTS,
      timeout: 60,
      requests: [{ method: 'POST', headers, setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }],
    });
    const seconds = (performance.now() - started) / 1000;
    if (result["2xx"] !== REQUESTS) throw new Error(`${server.output().slice(-3000)}\nonly ${result["2xx"]} of ${REQUESTS} requests succeeded: ${JSON.stringify(result.statusCodeStats)}, errors ${result.errors}`);
    const endpointRate = (REQUESTS * pointsPerRequest) / seconds;

    const millions = (rate: number) => `${(rate / 1e6).toFixed(2)} M points/s`;
    console.log(
      `heatmap endpoint: ${REQUESTS} uploads × ${TRACKS} tracks × ${POINTS} points (${(bodyBytes / 1024).toFixed(0)} KB JSON each), ` +
        `${BOXES} boxes, ${CONNECTIONS} connections, grid ${DEFAULT_GRID.cols}×${DEFAULT_GRID.rows}, cloud in its own process on Postgres`,
    );
    console.log(`baseline (binTrajectories only, this process): ${millions(binningRate)}`);
    console.log(`through HTTP (parse, validate, bin, atomic SQL add): ${millions(endpointRate)}  (${(REQUESTS / seconds).toFixed(1)} uploads/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms)`);
    console.log(`ratio endpoint / binning-only: ${(endpointRate / binningRate).toFixed(3)}`);
    console.log(`goal ≥ ${millions(GOAL)} per instance: ${endpointRate >= GOAL ? 'met' : 'NOT met'}`);
  } finally {
    await server.stop();
    await database.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
