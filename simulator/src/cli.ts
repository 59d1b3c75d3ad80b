import { existsSync, realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderClip } from './clip.ts';
import { FileCamera } from './io/camera.ts';
import { isZonedDateTime } from './scenario/scenario.ts';
import { findScenario, SCENARIOS, withOverrides } from './scenario/suite.ts';
import { DEFAULT_TIMING, FLEET_DEFAULTS, runFleet } from './fleet/fleet.ts';

/**
 * Command line for scripts: `sim list | render | camera | fleet`, each with `--help`. Bad usage exits with code 2
 * and a message naming the problem; failures while working exit with 1.
 */

const COMMANDS = {
  list: `usage: sim list

Names the scenarios, one a line: name, split (train or heldout), camera size and rate, description.`,
  render: `usage: sim render --scenario NAME --out DIR [--seed N] [--seconds S] [--hive ID] [--box ID] [--start ISO]

Renders a scenario to DIR/clip.mp4 (H.264) and its ground truth to DIR/truth.json, shows progress on stderr and
prints a one-line JSON summary.
  --scenario NAME  one of \`sim list\`
  --out DIR        output directory, made if missing
  --seed N         the scenario's random seed, 0 to 4294967295 (default: the scenario's own)
  --seconds S      clip length, 0.1 to 3600 (default: the scenario's, 60 for most)
  --hive ID        hiveId in the ground truth's intervals (default sim-hive)
  --box ID         boxId in the ground truth's intervals (default sim-box)
  --start ISO      wall-clock time of the first frame, with a time zone (default: the scenario's)`,
  camera: `usage: sim camera --file CLIP [--loop] [--port N]

Plays a recording as a live camera: an MPEG-TS stream over HTTP on 127.0.0.1, whose URL it prints once the
first frame is ready. Ctrl-C stops it.
  --file CLIP      any recording ffmpeg reads (mp4, mkv, mjpeg…)
  --loop           start over at the end (default: the stream ends with the recording)
  --port N         port, 0 to 65535, 0 for any free one (default 8554)`,
  fleet: `usage: sim fleet --cloud URL --token TOKEN [options]

Runs virtual entrance observers against a cloud for a while and prints a JSON report: every request sent,
succeeded, failed (by cause) or unfinished at the end, latency percentiles per operation, command delivery.
Boxes are fleet-box-0 … fleet-box-(N-1), four to a hive (fleet-hive-0, …). Ctrl-C ends the run early and
prints the report so far, marked as interrupted. Exit code: 0 without errors, 1 with errors, 2 bad usage,
130 (Ctrl-C) or 143 (SIGTERM) when interrupted.
  --cloud URL            the cloud's http(s) address (required)
  --token TOKEN          an API token (default: $HIVEGATE_TOKEN) with the scopes ingest (movement, metrics,
                         trajectories) and device (status, long-poll, command acks, events); with --commands
                         also control (starting and stopping live sessions)
  --devices N            virtual devices, 1 to 20000 (default ${FLEET_DEFAULTS.devices})
  --seconds S            how long the run lasts, 1 to 86400 (default ${FLEET_DEFAULTS.seconds})
  --ramp S               devices come online spread over S seconds, 0 to 3600 (default ${FLEET_DEFAULTS.rampSeconds}: all at once)
  --status-every S       status heartbeat period per device, 1 to 3600 (default ${DEFAULT_TIMING.statusEverySeconds})
  --telemetry-every S    movement + metrics + trajectory upload period per device, 1 to 3600 (default ${DEFAULT_TIMING.telemetryEverySeconds})
  --poll-wait S          how long a command long-poll waits at the cloud, 0 to 25 (default ${DEFAULT_TIMING.pollWaitSeconds})
  --timeout S            a request unanswered this long fails as a timeout (a long-poll: its wait plus S),
                         1 to 600 (default ${DEFAULT_TIMING.requestTimeoutSeconds})
  --commands N           live sessions to start and stop through GraphQL during the run, to time command
                         delivery, 0 to 100000 (default ${FLEET_DEFAULTS.commands})`,
} as const;

type Command = keyof typeof COMMANDS;

const USAGE = `usage:
  sim list                                   name the scenarios
  sim render --scenario NAME --out DIR [--seed N] [--seconds S] [--hive ID] [--box ID] [--start ISO]
                                             write DIR/clip.mp4 and DIR/truth.json
  sim camera --file CLIP [--loop] [--port N] play a recording as a live camera on 127.0.0.1
  sim fleet --cloud URL --token TOKEN [--devices N] [--seconds S] [--ramp S] [--status-every S]
            [--telemetry-every S] [--poll-wait S] [--timeout S] [--commands N]
                                             run virtual entrance observers against a cloud; prints a JSON report
  sim COMMAND --help                         what a command does, and its options with their defaults`;

class UsageError extends Error {}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

/**
 * parseArgs, strict, except that a negative number after an option is its value: parseArgs takes `--seed -1` for
 * an option without its argument ("argument is ambiguous"), where the range check has the clearer message.
 */
function parseOptions<T extends OptionSpec>(args: string[], options: T) {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return parseArgs({ args: joined, strict: true, options });
}

function integerFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  return Number(value);
}

function idFlag(name: string, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (value.length === 0 || value.length > 128) throw new UsageError(`--${name} must be 1 to 128 characters`);
  return value;
}

/**
 * `--out` is made if missing, so the first part of it that exists must be a directory: checked here to name the
 * problem, which mkdir calls EEXIST or ENOTDIR.
 */
async function expectDirectory(out: string): Promise<void> {
  for (let path = resolve(out); ; path = dirname(path)) {
    const found = await stat(path).catch(() => undefined);
    if (found) {
      if (found.isDirectory()) return;
      throw new UsageError(`--out must name a directory (it is made if missing), but ${path === resolve(out) ? out : path} is a file`);
    }
    if (dirname(path) === path) return;
  }
}

function list(): void {
  const width = Math.max(...SCENARIOS.map((s) => s.name.length));
  for (const s of SCENARIOS) {
    const { width: w, height: h, fps } = s.camera;
    console.log(`${s.name.padEnd(width)}  ${s.split.padEnd(7)}  ${`${w}x${h}@${fps}`.padEnd(12)}  ${s.description}`);
  }
}

async function render(args: string[]): Promise<void> {
  const { values } = parseOptions(args, {
    scenario: { type: 'string' },
    seed: { type: 'string' },
    seconds: { type: 'string' },
    out: { type: 'string' },
    hive: { type: 'string' },
    box: { type: 'string' },
    start: { type: 'string' },
  });
  if (!values.scenario) throw new UsageError('--scenario is required (see: sim list)');
  if (!values.out) throw new UsageError('--out is required');
  const base = findScenario(values.scenario);
  if (!base) throw new UsageError(`unknown scenario "${values.scenario}"; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  let seconds: number | undefined;
  if (values.seconds !== undefined) {
    seconds = Number(values.seconds);
    if (!/^\d+(\.\d+)?$/.test(values.seconds) || !(seconds >= 0.1 && seconds <= 3600)) {
      throw new UsageError(`--seconds must be a number from 0.1 to 3600, got "${values.seconds}"`);
    }
  }
  await expectDirectory(values.out);
  if (values.start !== undefined && !isZonedDateTime(values.start)) {
    throw new UsageError(`--start must be an ISO 8601 date-time with a time zone (2026-05-01T14:00:00Z), got "${values.start}"`);
  }
  const scenario = withOverrides(base, { seed: integerFlag('seed', values.seed, 0, 0xffffffff), durationSeconds: seconds, startTime: values.start });
  const result = await renderClip({
    scenario,
    outDir: values.out,
    ids: { hiveId: idFlag('hive', values.hive, 'sim-hive'), boxId: idFlag('box', values.box, 'sim-box') },
    progress: process.stderr,
  });
  const crossings = { in: 0, out: 0 };
  for (const crossing of result.truth.crossings) crossings[crossing.direction]++;
  // The agent's --zone for this clip: left at its default (the lower half), a technician's agent counted the looping
  // clip with another zone than the truth's, 16 in per 20 s against 10.
  const zone = result.truth.entranceZone.map(([x, y]) => `${x},${y}`).join(' ');
  console.log(JSON.stringify({ clip: result.clipPath, truth: result.truthPath, frames: result.frames, seconds: Number(result.seconds.toFixed(2)), crossings, zone }));
}

async function camera(args: string[]): Promise<void> {
  const { values } = parseOptions(args, { file: { type: 'string' }, loop: { type: 'boolean' }, port: { type: 'string' } });
  if (!values.file) throw new UsageError('--file is required');
  const player = new FileCamera({
    file: values.file,
    loop: values.loop ?? false,
    port: integerFlag('port', values.port, 0, 65535) ?? 8554,
    log: (line) => console.error(line),
  });
  const url = await player.start();
  console.log(url);
  console.error(`camera: playing ${values.file}${values.loop ? ' in a loop' : ''} at ${url} (Ctrl-C stops)`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      void player.stop().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

async function fleet(args: string[]): Promise<void> {
  const { values } = parseOptions(args, {
    cloud: { type: 'string' },
    token: { type: 'string' },
    devices: { type: 'string' },
    seconds: { type: 'string' },
    commands: { type: 'string' },
    ramp: { type: 'string' },
    'status-every': { type: 'string' },
    'telemetry-every': { type: 'string' },
    'poll-wait': { type: 'string' },
    timeout: { type: 'string' },
  });
  if (!values.cloud || !/^https?:\/\//.test(values.cloud)) throw new UsageError('--cloud must be the cloud\'s http(s) URL');
  const token = values.token ?? process.env.HIVEGATE_TOKEN;
  if (!token) throw new UsageError('--token (or HIVEGATE_TOKEN) is required');
  // Ctrl-C (or a service manager's SIGTERM) ends the run early and still prints what it measured; a second one
  // finds no handler and ends the process at once.
  const interrupt = new AbortController();
  let interruptedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    interruptedBy = signal;
    interrupt.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const report = await runFleet({
    signal: interrupt.signal,
    cloudUrl: values.cloud,
    token,
    devices: integerFlag('devices', values.devices, 1, 20_000) ?? FLEET_DEFAULTS.devices,
    seconds: integerFlag('seconds', values.seconds, 1, 86_400) ?? FLEET_DEFAULTS.seconds,
    commands: integerFlag('commands', values.commands, 0, 100_000) ?? FLEET_DEFAULTS.commands,
    rampSeconds: integerFlag('ramp', values.ramp, 0, 3600) ?? FLEET_DEFAULTS.rampSeconds,
    timing: {
      statusEverySeconds: integerFlag('status-every', values['status-every'], 1, 3600),
      telemetryEverySeconds: integerFlag('telemetry-every', values['telemetry-every'], 1, 3600),
      pollWaitSeconds: integerFlag('poll-wait', values['poll-wait'], 0, 25),
      requestTimeoutSeconds: integerFlag('timeout', values.timeout, 1, 600),
    },
    log: (line) => console.error(line),
  });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  console.log(JSON.stringify(report, null, 2));
  if (interruptedBy) process.exitCode = 128 + osConstants.signals[interruptedBy];
  else if (report.errors > 0) process.exitCode = 1;
}

const isCommand = (name: string | undefined): name is Command => name !== undefined && Object.hasOwn(COMMANDS, name);

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (isCommand(command) && rest.some((arg) => arg === '--help' || arg === '-h')) {
    console.log(COMMANDS[command]);
    return 0;
  }
  try {
    switch (command) {
      case 'list':
        if (rest.length > 0) throw new UsageError(`list takes no arguments, got "${rest.join(' ')}"`);
        list();
        return 0;
      case 'render':
        await render(rest);
        return 0;
      case 'camera':
        await camera(rest);
        return 0;
      case 'fleet':
        await fleet(rest);
        return (process.exitCode as number | undefined) ?? 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        if (command === 'help' && isCommand(rest[0])) {
          console.log(COMMANDS[rest[0]]);
          return 0;
        }
        (command === undefined ? console.error : console.log)(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`sim: ${(error as Error).message}`);
    if (usage) {
      console.error(isCommand(command) ? COMMANDS[command] : USAGE);
      return 2;
    }
    return 1;
  }
}

// Run as a program, not when a test imports `main`.
const entry = process.argv[1];
if (entry !== undefined && existsSync(entry) && realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))) {
  // A reader that stops early (`sim list | head -3`) is no error: it crashed with EPIPE's stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
  process.exitCode = await main(process.argv.slice(2));
}
