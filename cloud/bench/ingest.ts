/**
 * Ingest benchmark: the HTTP path (cloud in its own process, real Postgres) against the raw ceiling of COPY-ing
 * the same rows into the same table in the same run.
 *   pnpm bench:ingest [--rows 200000] [--rate 500] [--seconds 10]
 */
import autocannon from 'autocannon';
import pg from 'pg';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import copyStreams from 'pg-copy-streams';
import { createTestDatabase } from '../test/helper.ts';
import { runScript, startServer } from '../test/processes.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, rate: { type: 'string', default: '500' }, seconds: { type: 'string', default: '10' } } });
const ROWS = Number(values.rows);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const BATCH = 1000;
const T0 = Math.floor(Date.now() / 1000) - 86_400;

function reading(i: number) {
  return { hiveId: `hive-${i % 50}`, fields: { temperatureCelsius: 30 + (i % 7), humidityPercent: 60 + (i % 11), weightKg: 40 + (i % 13) / 10 }, timestamp: T0 + (i % 86_400) };
}

async function rawCopy(url: string, ownerId: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const started = performance.now();
  const lines = (function* () {
    for (let i = 0; i < ROWS; i++) {
      const r = reading(i);
      yield `${ownerId}\t${r.hiveId}\t${new Date(r.timestamp * 1000).toISOString()}\t${r.fields.temperatureCelsius}\t${r.fields.humidityPercent}\t${r.fields.weightKg}\n`;
    }
  })();
  await pipeline(Readable.from(lines), client.query(copyStreams.from('COPY metrics (owner_id, hive_id, ts, temperature_celsius, humidity_percent, weight_kg) FROM STDIN')));
  const seconds = (performance.now() - started) / 1000;
  await client.query('DELETE FROM metrics WHERE owner_id = $1', [ownerId]);
  await client.end();
  return ROWS / seconds;
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon(options, (err, result) => (err ? reject(err) : resolve(result))));
}

async function main() {
  const database = await createTestDatabase();
  const env = { DATABASE_URL: database.url, JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0000', LOG_LEVEL: 'warn', DB_POOL_SIZE: '8' };
  if (process.env.BENCH_ASYNC_COMMIT) await runSql(database.url, 'ALTER DATABASE ' + database.name + ' SET synchronous_commit = off');
  const server = await startServer(env);
  try {
    await runScript('src/cli.ts', ['user', 'add', 'bench'], env);
    await runScript('src/cli.ts', ['user', 'add', 'copy'], env);
    const token = (await runScript('src/cli.ts', ['token', 'create', '--user', 'bench'], env)).stdout.trim();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const copyRowsPerSecond = await rawCopy(database.url, 2);

    let batchNo = 0;
    const batches = await run({
      url: `${server.url}/iot/v1/metrics`,
      connections: 4,
      amount: ROWS / BATCH,
      requests: [{ method: 'POST', headers, setupRequest: (req) => ({ ...req, body: JSON.stringify(Array.from({ length: BATCH }, (_, j) => reading(batchNo++ * BATCH + j))) }) }],
    });
    const httpRowsPerSecond = (batches['2xx'] * BATCH) / (batches.duration);

    let single = 0;
    const singles = await run({
      url: `${server.url}/iot/v1/metrics`,
      connections: 16,
      overallRate: RATE,
      duration: SECONDS,
      requests: [{ method: 'POST', headers, setupRequest: (req) => ({ ...req, body: JSON.stringify(reading(single++)) }) }],
    });

    const report = {
      rows: ROWS,
      copyRowsPerSecond: Math.round(copyRowsPerSecond),
      httpBatchRowsPerSecond: Math.round(httpRowsPerSecond),
      httpToCopyRatio: Number((httpRowsPerSecond / copyRowsPerSecond).toFixed(2)),
      batchLatencyMs: { p50: batches.latency.p50, p99: batches.latency.p99 },
      batchErrors: batches.non2xx + batches.errors,
      singleRate: RATE,
      singleRequestsPerSecond: Math.round(singles.requests.average),
      singleLatencyMs: { p50: singles.latency.p50, p99: singles.latency.p99 },
      singleErrors: singles.non2xx + singles.errors,
    };
    console.log(JSON.stringify(report, null, 2));
    console.log(`HTTP batches: ${report.httpBatchRowsPerSecond} rows/s = ${report.httpToCopyRatio} x raw COPY (${report.copyRowsPerSecond} rows/s); single posts at ${RATE}/s: p50 ${report.singleLatencyMs.p50} ms, p99 ${report.singleLatencyMs.p99} ms`);
  } finally {
    await server.stop();
    await database.drop();
  }
}

await main();

async function runSql(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(sql);
  await client.end();
}
