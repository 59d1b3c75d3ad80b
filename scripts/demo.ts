/**
 * The demo: the cloud on its embedded database, a synthetic entrance clip with known ground truth, the edge agent
 * counting it against the cloud, and what arrived printed next to the truth. Then it keeps serving the web app, with
 * the clip played on a loop as a live camera that a second agent watches as it would at a hive (live counts, live view).
 *   pnpm demo [--scenario busy-afternoon] [--seconds 120] [--port 8600] [--data-dir .data/demo] [--detector motion|onnx] [--no-serve]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startAdminSocket } from '../cloud/src/admin/socket.ts';
import { buildApp } from '../cloud/src/app.ts';
import { loadConfig } from '../cloud/src/config.ts';
import { LoginTakenError } from '../cloud/src/auth/users-repository.ts';
import { hashPassword } from '../cloud/src/auth/passwords.ts';
import { ensureWebBuild } from '../cloud/src/web/build.ts';
import { FileCamera } from '../simulator/src/io/camera.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE = `usage: pnpm demo [--scenario NAME] [--seconds S] [--port N] [--data-dir DIR] [--detector motion|onnx] [--no-serve]
  --scenario   the synthetic scene (default busy-afternoon; pnpm --silent sim list names them)
  --seconds    the clip's length (default 120)
  --port       the cloud's port (default $PORT or 8600); it listens on this machine only unless HOST is set
  --data-dir   the demo's data (default $DATA_DIR or .data/demo)
  --detector   the agent's detector (default: the shipped bee model)
  --no-serve   stop once the clip is counted and shown, instead of serving the web app`;

function readOptions() {
  try {
    return parseArgs({
      options: {
        help: { type: 'boolean', default: false },
        scenario: { type: 'string', default: 'busy-afternoon' },
        seconds: { type: 'string', default: '120' },
        port: { type: 'string', default: process.env.PORT ?? '8600' },
        // PORT and DATA_DIR are read as the cloud reads them (the demo's default folder stays apart from `pnpm start`'s).
        'data-dir': { type: 'string', default: process.env.DATA_DIR ?? path.join(ROOT, '.data', 'demo') },
        detector: { type: 'string' },
        'no-serve': { type: 'boolean', default: false },
      },
    }).values;
  } catch (err) {
    // A mistyped flag printed a TypeError's stack.
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}
const values = readOptions();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const DEMO_LOGIN = 'demo';
const DEMO_PASSWORD = 'hivegate-demo';
const HIVE = 'demo-hive';
const BOX = 'demo-box';

function step(message: string) {
  console.log(`\n▸ ${message}`);
}

/** Runs a workspace script, streaming its stderr (progress) and returning its stdout. */
function pnpm(args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('pnpm', ['--silent', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`pnpm ${args.join(' ')} exited ${code}`))));
  });
}

interface TruthInterval {
  timestamp: number;
  beesIn: number;
  beesOut: number;
  detectedBees?: number;
  avgSpeed?: number;
}

async function main() {
  const dataDir = path.resolve(values['data-dir']);
  mkdirSync(dataDir, { recursive: true });
  // On this machine only, unless HOST says otherwise: the demo's sign-in and password are printed for all to read.
  const config = { ...loadConfig({ ...process.env, HOST: process.env.HOST ?? '127.0.0.1', DATABASE_URL: '', DATA_DIR: dataDir, PORT: values.port, LOG_LEVEL: 'warn' }) };

  step('Building the web app (skipped when it is current)');
  await ensureWebBuild();

  step(`Starting the cloud on port ${config.port} (embedded database in ${dataDir})`);
  const app = await buildApp(config);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new Error(`port ${config.port} is in use (another cloud or demo?): stop it, or choose another with --port`);
    throw err;
  }
  // The admin CLI (pnpm cli, with DATA_DIR set to the demo's folder) talks to the demo's cloud through this socket: the
  // embedded database opens in one process only, and the CLI was refused while the demo ran.
  const admin: Server = await startAdminSocket(app.ctx);
  const cloudUrl = `http://127.0.0.1:${config.port}`;

  const user = await app.ctx.users.create(DEMO_LOGIN, await hashPassword(DEMO_PASSWORD)).catch(async (err: unknown) => {
    if (err instanceof LoginTakenError) return (await app.ctx.users.findByLogin(DEMO_LOGIN))!;
    throw err;
  });
  const { token } = await app.ctx.tokens.issue({ userId: user.id, name: 'demo observer', scopes: ['ingest', 'device'] });

  const clipDir = path.join(dataDir, `clip-${values.scenario}-${values.seconds}s`);
  if (existsSync(path.join(clipDir, 'truth.json'))) {
    step(`Reusing the synthetic clip in ${clipDir}`);
  } else {
    step(`Rendering ${values.seconds} s of the "${values.scenario}" scenario with ground truth`);
    // Dated just before now: the web app's "today" shows it, and it stays inside the cloud's retention period.
    const start = new Date(Math.floor((Date.now() - (Number(values.seconds) + 60) * 1000) / 60_000) * 60_000).toISOString();
    await pnpm(['sim', 'render', '--scenario', values.scenario, '--seconds', values.seconds, '--start', start, '--out', clipDir, '--hive', HIVE, '--box', BOX]);
  }
  const truth = JSON.parse(readFileSync(path.join(clipDir, 'truth.json'), 'utf8')) as { intervals: TruthInterval[]; entranceZone: number[][]; fps: number };

  step('Running the edge agent on the clip against the cloud');
  const zone = truth.entranceZone.map(([x, y]) => `${x},${y}`).join(' ');
  const agentArgs = (source: string) => [
    'run', '--source', source, '--cloud', cloudUrl, '--token', token, '--hive', HIVE, '--box', BOX, '--zone', zone, '--fps', String(truth.fps),
    ...(values.detector ? ['--detector', values.detector] : []),
  ];
  await pnpm(['agent', ...agentArgs(path.join(clipDir, 'clip.mp4')), '--once', '--state-dir', path.join(dataDir, 'agent')]);

  step('Storing the clip as entrance video (transcoded to HLS in the background)');
  const existing = await app.ctx.videos.list(user.id, BOX, { limit: 1 });
  if (existing.length === 0) {
    const clip = path.join(clipDir, 'clip.mp4');
    await app.ctx.videoService.upload({
      ownerId: user.id,
      boxId: BOX,
      file: { filename: 'entrance.mp4', mimetype: 'video/mp4', encoding: '7bit', createReadStream: () => createReadStream(clip) } as never,
    });
  }

  step('What arrived in the cloud, next to the ground truth');
  const { rows } = await app.ctx.db.query<{ ts: number; beesIn: number; beesOut: number; detectedBees: number | null; avgSpeed: number | null }>(
    `SELECT extract(epoch FROM ts)::bigint AS ts, bees_in AS "beesIn", bees_out AS "beesOut", detected_bees AS "detectedBees", avg_speed AS "avgSpeed"
     FROM movements WHERE owner_id = $1 AND box_id = $2 ORDER BY ts`,
    [user.id, BOX],
  );
  const arrived = new Map(rows.map((r) => [Number(r.ts), r]));
  const line = (cells: (string | number)[]) => cells.map((c, i) => String(c).padStart(i === 0 ? 20 : 9)).join(' ');
  console.log(line(['interval end (UTC)', 'in', 'in truth', 'out', 'out truth', 'bees', 'truth', 'speed', 'truth']));
  let inSum = 0, outSum = 0, inTruth = 0, outTruth = 0;
  for (const t of truth.intervals) {
    const got = arrived.get(t.timestamp);
    inSum += got?.beesIn ?? 0; outSum += got?.beesOut ?? 0; inTruth += t.beesIn; outTruth += t.beesOut;
    console.log(line([new Date(t.timestamp * 1000).toISOString().slice(0, 19), got?.beesIn ?? '-', t.beesIn, got?.beesOut ?? '-', t.beesOut, got?.detectedBees ?? '-', t.detectedBees ?? '-', got?.avgSpeed?.toFixed(2) ?? '-', t.avgSpeed?.toFixed(2) ?? '-']));
  }
  console.log(line(['total', inSum, inTruth, outSum, outTruth, '', '', '', '']));

  const webUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  console.log(`\nThe web app: ${webUrl}/  (sign in as "${DEMO_LOGIN}" with password "${DEMO_PASSWORD}"): movement, the`);
  console.log('heatmap of the trajectories the agent sent, and the clip as stored video once it is transcoded.');
  console.log(`Device token for your own experiments: ${token}`);
  if (values['no-serve']) {
    await new Promise<void>((resolve) => admin.close(() => resolve()));
    await app.close();
    return;
  }

  step('Playing the clip on a loop as a live entrance camera, watched by a second agent as at a hive');
  const camera = new FileCamera({ file: path.join(clipDir, 'clip.mp4'), loop: true });
  const cameraUrl = await camera.start();
  const liveLog = path.join(dataDir, 'agent-live.log');
  // In a process group of its own, so that Ctrl-C reaches it once, as the SIGTERM of `stop` below: a second signal
  // while it flushes ends it at once, as it would end an agent that does not stop. Its log goes straight to a file.
  const liveAgent = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'agent', 'src', 'cli.ts'), ...agentArgs(cameraUrl), '--state-dir', path.join(dataDir, 'agent-live')], {
    cwd: ROOT,
    detached: true,
    // The IPC channel closes however the demo ends, SIGKILL included, and the agent stops when it does.
    stdio: ['ignore', 'ignore', openSync(liveLog, 'a'), 'ipc'],
  });
  process.on('exit', () => liveAgent.kill('SIGTERM'));
  let stopping = false;
  liveAgent.on('exit', (code, signal) => {
    if (!stopping) console.log(`The live agent stopped (${signal ?? `exit code ${code}`}); its log says why: ${liveLog}`);
  });
  console.log(`Camera ${cameraUrl}; the agent's log: ${liveLog}. Within a couple of minutes today's counts start rising`);
  console.log('(the agent sends each minute once it is over), the apiary shows the camera online, and "Start live view" on');
  console.log(`the box's page streams the camera to the browser. The admin CLI reaches this cloud with DATA_DIR=${dataDir} pnpm cli …`);
  console.log('The cloud keeps serving; press Ctrl-C to stop.');
  const stop = async () => {
    if (stopping) return;
    // The agent first, while the cloud can still take what it flushes; then its camera; then the cloud.
    stopping = true;
    if (liveAgent.exitCode === null && liveAgent.signalCode === null) {
      const closed = once(liveAgent, 'close');
      liveAgent.kill('SIGTERM');
      await closed;
    }
    await camera.stop();
    await new Promise<void>((resolve) => admin.close(() => resolve()));
    await app.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  // A closed terminal: stop as for Ctrl-C (Node would otherwise exit at once, leaving the agent to the IPC channel).
  process.on('SIGHUP', () => void stop());
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
