// How the agent holds up over a long run: the real agent (its CLI, `run --once`, shipped defaults) on a long
// simulator clip, as fast as it goes, delivering to the project's cloud on its embedded database over loopback HTTP.
// The agent writes its status file every 2 s (frames processed, resident memory); the bench reads each one. The run
// is cut into parts by frames, and each part gives its frames/s and its lowest and highest RSS (the lowest is the
// floor the garbage collector gets back to, which is what a leak raises). The baseline is the same run's second part
// (the first holds the start: models loading, code warming up); the ratios of the last part to it show a leak or a
// slowdown as a number. Last, what the agent counted and what the cloud stored, against the truth.
// With --live the clip plays as a network camera in real time (the simulator's camera, over loopback HTTP) and the
// agent runs as on a hive: its live capture path, its device loop with the cloud, stopped by SIGTERM once the clip
// has played. Its frames/s is then the camera's; what the run shows is the memory. It joins the stream a moment after
// the camera starts, so a crossing or two of the first seconds may be missed against the truth.
//   pnpm bench:endurance [-- --seconds 1800 --parts 10 --scenario busy-afternoon --cache DIR --live]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FileCamera } from '@hivegate/simulator';
import { buildApp } from '../../cloud/src/app.ts';
import { hashPassword } from '../../cloud/src/auth/passwords.ts';
import { loadConfig } from '../../cloud/src/config.ts';
import { cachedClip, DEFAULT_CLIP_CACHE } from './clips.ts';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    seconds: { type: 'string', default: '1800' },
    parts: { type: 'string', default: '10' },
    scenario: { type: 'string', default: 'busy-afternoon' },
    cache: { type: 'string', default: DEFAULT_CLIP_CACHE },
    live: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
if (!(Number.isInteger(seconds) && seconds >= 10)) throw new Error(`--seconds must be a whole number of at least 10, got "${values.seconds}"`);
const partCount = Number(values.parts);
if (!(Number.isInteger(partCount) && partCount >= 2 && partCount <= 100)) throw new Error(`--parts must be a whole number from 2 to 100, got "${values.parts}"`);

const agentRoot = fileURLToPath(new URL('..', import.meta.url));
const STATUS_POLL_MS = 250;
/** How long after the clip's length a live agent is stopped: its stream starts a moment after the camera's. */
const LIVE_GRACE_SECONDS = 5;
const MAX_LOG_LINES_SHOWN = 10;

/** One status file the agent wrote: when, how far it had got, its resident memory. */
interface Sample {
  t: number;
  frames: number;
  rssMb?: number;
}

export interface Part {
  fromFrame: number;
  toFrame: number;
  fps: number;
  /** The lowest and highest RSS the agent reported within the part (undefined: no status file fell in it). */
  rssMb: { lowest: number; highest: number } | undefined;
}

/** When the agent had processed `frames`, read off the samples in between (linear between two status files). */
function timeAt(samples: readonly Sample[], frames: number): number {
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    if (b.frames >= frames) return b.frames === a.frames ? b.t : a.t + ((frames - a.frames) / (b.frames - a.frames)) * (b.t - a.t);
  }
  return samples.at(-1)!.t;
}

/** The run cut into `count` parts of equal frames: each part's frames/s and the range of its RSS. */
export function splitRun(samples: readonly Sample[], totalFrames: number, count: number): Part[] {
  const parts: Part[] = [];
  for (let k = 0; k < count; k++) {
    const fromFrame = Math.round((k * totalFrames) / count);
    const toFrame = Math.round(((k + 1) * totalFrames) / count);
    const ms = timeAt(samples, toFrame) - timeAt(samples, fromFrame);
    const inside = samples.filter((s) => s.frames > fromFrame && s.frames <= toFrame && s.rssMb !== undefined).map((s) => s.rssMb!);
    parts.push({ fromFrame, toFrame, fps: ms > 0 ? ((toFrame - fromFrame) * 1000) / ms : Number.NaN, rssMb: inside.length > 0 ? { lowest: Math.min(...inside), highest: Math.max(...inside) } : undefined });
  }
  return parts;
}

async function main() {
  const clip = await cachedClip(values.scenario, seconds, values.cache);
  const { truth } = clip;
  const dataDir = mkdtempSync(join(tmpdir(), 'hivegate-endurance-'));
  // Errors only: the bench's own lines are its output (a clone without the web app built would warn of it otherwise).
  // A cloud for this run only, so no retention: it refuses records older than it keeps, and the clip is dated 2024.
  const app = await buildApp(loadConfig({ DATABASE_URL: '', DATA_DIR: join(dataDir, 'cloud'), LOG_LEVEL: 'error', PARTITION_MAINTENANCE: 'false' }));
  let camera: FileCamera | undefined;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('the cloud did not get a port');
    const user = await app.ctx.users.create('endurance', await hashPassword('endurance-bench'));
    const { token } = await app.ctx.tokens.issue({ userId: user.id, name: 'endurance observer', scopes: ['ingest', 'device'] });

    const trueIn = truth.crossings.filter((c) => c.direction === 'in').length;
    const trueOut = truth.crossings.length - trueIn;
    console.log(`clip: simulator scenario ${values.scenario}, ${truth.width}x${truth.height} @ ${truth.fps} fps, ${seconds} s (${truth.frameCount} frames); ${trueIn} in, ${trueOut} out`);
    const live = values.live;
    console.log(
      live
        ? 'the agent (run, shipped defaults) on the clip played as a network camera in real time, against the cloud on its embedded database'
        : 'the agent (run --once, shipped defaults) against the cloud on its embedded database, as fast as it goes',
    );
    camera = live ? new FileCamera({ file: clip.clip }) : undefined;
    const source = camera ? await camera.start() : clip.clip;

    const stateDir = join(dataDir, 'agent');
    const statusFile = join(stateDir, 'status.json');
    const zone = truth.entranceZone.map(([x, y]) => `${x},${y}`).join(' ');
    const args = ['--import', 'tsx', 'src/cli.ts', 'run', '--source', source, '--cloud', `http://127.0.0.1:${address.port}`, '--token', token];
    args.push('--hive', 'sim-hive', '--box', 'sim-box', '--zone', zone, '--fps', String(truth.fps), '--state-dir', stateDir, ...(live ? [] : ['--once']));
    const started = Date.now();
    const agent = spawn(process.execPath, args, { cwd: agentRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    agent.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = once(agent, 'close') as Promise<[number | null, NodeJS.Signals | null]>;

    const samples: Sample[] = [{ t: started, frames: 0 }];
    let lastWritten = '';
    let lastDropped = 0;
    const readStatus = () => {
      if (!existsSync(statusFile)) return;
      let status: { updatedAt: string; framesProcessed: number; framesDropped: number; memoryRssMb?: number };
      try {
        status = JSON.parse(readFileSync(statusFile, 'utf8')) as typeof status;
      } catch {
        return; // replaced while read; the next poll sees it whole
      }
      if (status.updatedAt === lastWritten) return;
      lastWritten = status.updatedAt;
      lastDropped = status.framesDropped;
      samples.push({ t: Date.parse(status.updatedAt), frames: status.framesProcessed, ...(status.memoryRssMb === undefined ? {} : { rssMb: status.memoryRssMb }) });
    };
    const poller = setInterval(readStatus, STATUS_POLL_MS);
    // A live agent runs until told: once the clip has played (and a little more for the frames in flight).
    const stopTimer = live ? setTimeout(() => agent.kill('SIGTERM'), (seconds + LIVE_GRACE_SECONDS) * 1000) : undefined;
    const [code, signal] = await exited;
    clearTimeout(stopTimer);
    clearInterval(poller);
    readStatus(); // the one written as the run ended
    if (code !== 0) throw new Error(`the agent exited with ${signal ?? `code ${code}`}:\n${log.trim().split('\n').slice(-10).join('\n')}`);

    const frames = samples.at(-1)!.frames;
    const parts = splitRun(samples, frames, partCount);
    const wallSeconds = (samples.at(-1)!.t - started) / 1000;
    const dropped = live ? `, ${lastDropped} dropped by the capture` : '';
    console.log(`${frames} frames in ${wallSeconds.toFixed(1)} s (${(frames / wallSeconds).toFixed(1)} frames/s, start included${dropped}); ${samples.length - 1} status files read`);
    console.log('part  video (s)        frames/s  RSS (MB, lowest–highest)');
    for (const [k, part] of parts.entries()) {
      const video = `${(part.fromFrame / truth.fps).toFixed(0)}–${(part.toFrame / truth.fps).toFixed(0)}`;
      console.log(`${String(k + 1).padStart(4)}  ${video.padEnd(15)} ${part.fps.toFixed(1).padStart(9)}  ${part.rssMb === undefined ? '–' : `${part.rssMb.lowest}–${part.rssMb.highest}`}`);
    }
    const baseline = parts[partCount >= 3 ? 1 : 0]!;
    const last = parts.at(-1)!;
    const which = partCount >= 3 ? 'the second' : 'the first';
    console.log(`frames/s, last part / ${which}: ${(last.fps / baseline.fps).toFixed(2)}`);
    console.log(
      last.rssMb === undefined || baseline.rssMb === undefined
        ? `RSS, last part / ${which}: – (a part without a status file; run longer)`
        : `RSS, last part / ${which}: lowest ${(last.rssMb.lowest / baseline.rssMb.lowest).toFixed(2)}, highest ${(last.rssMb.highest / baseline.rssMb.highest).toFixed(2)}`,
    );
    const rss = samples.flatMap((s) => (s.rssMb === undefined ? [] : [s.rssMb]));
    console.log(`peak RSS ${rss.length > 0 ? Math.max(...rss) : '–'} MB (of the status files)`);

    // What else the agent had to say over the run (a camera that stalled, the cloud refusing, a rate that moved).
    const said = log.split('\n').filter((line) => line.trim() !== '' && !/^(agent running|agent stopped|SIGTERM: stopping)/.test(line));
    console.log(said.length === 0 ? 'the agent logged nothing but its start and its stop' : `the agent also logged ${said.length} line(s):`);
    for (const line of said.slice(0, MAX_LOG_LINES_SHOWN)) console.log(`  ${line}`);
    if (said.length > MAX_LOG_LINES_SHOWN) console.log(`  … and ${said.length - MAX_LOG_LINES_SHOWN} more`);

    const counted = /agent stopped: .*?in (\d+), out (\d+).*?; (\d+) records still queued/.exec(log);
    // A live agent keeps the intervals still open at its stop for its next start, rather than send them part-counted.
    const saved = /agent stopped: .*open intervals? saved for the next start to complete \(in (\d+), out (\d+)\)/.exec(log);
    const { rows } = await app.ctx.db.query<{ beesIn: string | null; beesOut: string | null; intervals: string }>(
      `SELECT sum(bees_in) AS "beesIn", sum(bees_out) AS "beesOut", count(*) AS intervals FROM movements WHERE owner_id = $1 AND box_id = 'sim-box'`,
      [user.id],
    );
    const stored = rows[0]!;
    console.log(
      `counted by the agent: in ${counted?.[1] ?? '?'}, out ${counted?.[2] ?? '?'} (true ${trueIn}, ${trueOut}); ${counted?.[3] ?? '?'} records left queued; ` +
        `stored in the cloud: in ${Number(stored.beesIn ?? 0)}, out ${Number(stored.beesOut ?? 0)} in ${Number(stored.intervals)} intervals${live ? '' : ` (${truth.intervals.length} expected)`}` +
        `${live ? `; saved for the agent's next start: in ${saved?.[1] ?? 0}, out ${saved?.[2] ?? 0}` : ''}`,
    );
  } finally {
    await camera?.stop();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
