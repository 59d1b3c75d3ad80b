import { constants as osConstants } from 'node:os';
import { parseArgs } from 'node:util';
import { renderClip } from './clip.ts';
import { FileCamera } from './io/camera.ts';
import { isZonedDateTime } from './scenario/scenario.ts';
import { findScenario, SCENARIOS, withOverrides } from './scenario/suite.ts';
import { runFleet } from './fleet/fleet.ts';

/**
 * Command line for scripts:
 *   sim list
 *   sim render --scenario NAME [--seed N] [--seconds S] [--hive ID] [--box ID] [--start ISO] --out DIR
 *   sim camera --file CLIP [--loop] [--port N]
 * Bad usage exits with code 2 and a message naming the problem; failures while working exit with 1.
 */

const USAGE = `usage:
  sim list                                   name the scenarios
  sim render --scenario NAME --out DIR [--seed N] [--seconds S] [--hive ID] [--box ID] [--start ISO]
                                             write DIR/clip.mp4 and DIR/truth.json
  sim camera --file CLIP [--loop] [--port N] play a recording as a live camera on 127.0.0.1
  sim fleet --cloud URL --token TOKEN [--devices N] [--seconds S] [--commands N] [--ramp S]
            [--status-every S] [--telemetry-every S] [--poll-wait S] [--timeout S]
                                             run N virtual entrance observers; prints a JSON report`;

class UsageError extends Error {}

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

function list(): void {
  const width = Math.max(...SCENARIOS.map((s) => s.name.length));
  for (const s of SCENARIOS) {
    const { width: w, height: h, fps } = s.camera;
    console.log(`${s.name.padEnd(width)}  ${s.split.padEnd(7)}  ${`${w}x${h}@${fps}`.padEnd(12)}  ${s.description}`);
  }
}

async function render(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      scenario: { type: 'string' },
      seed: { type: 'string' },
      seconds: { type: 'string' },
      out: { type: 'string' },
      hive: { type: 'string' },
      box: { type: 'string' },
      start: { type: 'string' },
    },
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
  console.log(JSON.stringify({ clip: result.clipPath, truth: result.truthPath, frames: result.frames, seconds: Number(result.seconds.toFixed(2)), crossings }));
}

async function camera(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: { file: { type: 'string' }, loop: { type: 'boolean' }, port: { type: 'string' } },
  });
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
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
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
    },
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
    devices: integerFlag('devices', values.devices, 1, 20_000) ?? 10,
    seconds: integerFlag('seconds', values.seconds, 1, 86_400) ?? 60,
    commands: integerFlag('commands', values.commands, 0, 100_000) ?? 0,
    rampSeconds: integerFlag('ramp', values.ramp, 0, 3600) ?? 0,
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

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
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
        (command === undefined ? console.error : console.log)(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`sim: ${(error as Error).message}`);
    if (usage) {
      console.error(USAGE);
      return 2;
    }
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
