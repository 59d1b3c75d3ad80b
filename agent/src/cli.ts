#!/usr/bin/env node
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { appVersion, checkSourceFile, runAgent, statusFilePath, type AgentControls } from './agent.ts';
import { parseSource } from './capture/source.ts';
import { createDetector } from './detect/factory.ts';
import { ConfigError, defaultZone, parseZone, readConfigFile, resolveConfig, type PartialAgentConfig } from './config/config.ts';
import { readEnvFile } from './config/env-file.ts';
import { prepareStateDir, serviceStateNote } from './config/state-dir.ts';
import { describeOpenIntervals, readSavedIntervals } from './count/open-intervals.ts';
import { Outbox } from './outbox/outbox.ts';
import { OutboxLock } from './outbox/outbox-lock.ts';
import { OPEN_INTERVALS_STATE_KEY } from './pipeline.ts';
import { liveStreamLines } from './status/live-stream-lines.ts';
import { snapshotAge } from './status/snapshot-age.ts';
import { cameraVerdict, measureDecode, measurePipeline } from './throughput.ts';

/** Each command's usage and what it does; `hivegate-agent COMMAND --help` prints its own, `--help` all of them. */
const COMMANDS = {
  run: {
    usage: `hivegate-agent run --config FILE [--secrets-file FILE] [--once]
  hivegate-agent run --source FILE_OR_URL --cloud URL --token TOKEN --hive H --box B
                     [--zone "x,y x,y …"] [--detector motion|onnx] [--model PATH] [--once]
                     [--width W --height H --fps F] [--realtime] [--start-time ISO] [--state-dir DIR]
                     [--flush-timeout SECONDS]`,
    about: `Counts the bees going in and out, sends the counts, trajectories and sensor readings to the cloud, and streams
live video when the cloud asks. Flags win over the config file. With --once a file is processed as fast as possible and
every record is delivered: exit code 0, or 1 when records are still queued at the end or the source failed.
--flush-timeout is how long a stop spends delivering what is queued: at most 5 s (a smaller value shortens it; what
is left stays queued for the next start); with --once 30 s by default, or as long as it says.`,
    pipeline: true,
  },
  status: {
    usage: 'hivegate-agent status [--config FILE | --state-dir DIR]',
    about: 'Says whether an agent is running on that state directory, what its outbox holds, what its pipeline last did, and whether the cloud stopped its uploads or live control (a refused token).',
    pipeline: false,
  },
  bench: {
    usage: `hivegate-agent bench --source FILE [--config FILE] [--seconds S] [--threads N]
                     [--zone "x,y x,y …"] [--detector motion|onnx] [--model PATH] [--width W --height H --fps F]`,
    about: `Runs the configured pipeline over a recorded clip as fast as it can, sending nothing, and says whether this
machine keeps up with a camera at source.fps; it compares with ffmpeg decoding the same clip alone.`,
    pipeline: true,
  },
  'check-config': {
    usage: 'hivegate-agent check-config --config FILE [--secrets-file FILE]',
    about: 'Checks a config file as run would, with the secrets from the environment (and --secrets-file), loads its models, and says what the agent will do.',
    pipeline: false,
  },
} as const;
type Command = keyof typeof COMMANDS;

const PIPELINE_NOTES = `Sources: a video file, rtsp:// or http:// URL, /dev/videoN, or rpicam[:extra rpicam-vid args].
The detector is the shipped pair of 8-bit bee models (onnx, models/bee-centernet-int8.onnx over the frame and
models/bee-centernet-slot-int8.onnx over the entrance slot) unless --detector motion or --model.
Secrets may come from HIVEGATE_TOKEN and HIVEGATE_CLOUD_URL instead of flags (a flag wins), in the environment or in
the NAME=value lines of --secrets-file FILE, which wins over the environment. SIGHUP re-reads the config file and the
env file (a variable set in the environment itself stays as the agent was started with it).`;

const EXIT_CODES = 'Exit codes: 0 done, 1 failed (a source, the cloud, records left queued), 2 bad usage or configuration.';

const USAGE = `hivegate-agent — entrance observer agent

Usage:
${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}
  hivegate-agent COMMAND --help
  hivegate-agent --version

${Object.entries(COMMANDS).map(([name, c]) => `${name}: ${c.about}`).join('\n')}

${PIPELINE_NOTES}
${EXIT_CODES}`;

function commandHelp(name: Command): string {
  const command = COMMANDS[name];
  return `Usage:\n  ${command.usage}\n\n${command.about}\n\n${command.pipeline ? `${PIPELINE_NOTES}\n` : ''}${EXIT_CODES}`;
}

const isCommand = (name: string): name is Command => Object.hasOwn(COMMANDS, name);

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    const topic = rest[0];
    if (command === 'help' && topic !== undefined && isCommand(topic)) {
      console.log(commandHelp(topic));
      return 0;
    }
    console.log(USAGE);
    return command ? 0 : 2;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    console.log(appVersion().replace('/', ' '));
    return 0;
  }
  if (isCommand(command) && (rest.includes('--help') || rest.includes('-h'))) {
    console.log(commandHelp(command));
    return 0;
  }
  try {
    refuseNodeEnvFile(rest);
    if (command === 'run') return await run(rest);
    if (command === 'status') return status(rest);
    if (command === 'bench') return await bench(rest);
    if (command === 'check-config') return await checkConfig(rest);
    console.error(`unknown command "${command}"\n\n${USAGE}`);
    return 2;
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`hivegate-agent: ${error.message}`);
      return 2;
    }
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`hivegate-agent: ${(error as Error).message}\n(hivegate-agent ${command} --help shows its usage)`);
      return 2;
    }
    throw error;
  }
}

/** The flags `run` and `bench` share: the config file, the source and how it is read, the detector, the zone. */
const PIPELINE_OPTIONS = {
  config: { type: 'string' },
  source: { type: 'string' },
  zone: { type: 'string' },
  detector: { type: 'string' },
  model: { type: 'string' },
  width: { type: 'string' },
  height: { type: 'string' },
  fps: { type: 'string' },
} as const;

function pipelineFlags(values: { source?: string; zone?: string; detector?: string; model?: string; width?: string; height?: string; fps?: string }): PartialAgentConfig {
  return {
    source: { url: values.source, width: numberFlag('--width', values.width), height: numberFlag('--height', values.height), fps: numberFlag('--fps', values.fps) },
    detector: { kind: values.detector as 'motion' | 'onnx' | undefined, model: values.model },
    counting: values.zone ? { zone: parseZone(values.zone) } : {},
  };
}

async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      ...PIPELINE_OPTIONS,
      cloud: { type: 'string' },
      token: { type: 'string' },
      hive: { type: 'string' },
      box: { type: 'string' },
      realtime: { type: 'boolean' },
      'start-time': { type: 'string' },
      'state-dir': { type: 'string' },
      'flush-timeout': { type: 'string' },
      'secrets-file': { type: 'string' },
      once: { type: 'boolean' },
    },
  });
  const pipeline = pipelineFlags(values);
  const flags: PartialAgentConfig = {
    ...pipeline,
    hiveId: values.hive,
    boxId: values.box,
    source: { ...pipeline.source, realtime: values.realtime, startTime: values['start-time'] },
    cloud: { url: values.cloud, token: values.token },
    stateDir: values['state-dir'],
  };
  const envFile = values['secrets-file'];
  const load = () => {
    const file = values.config ? readConfigFile(values.config) : undefined;
    return resolveConfig({ ...(file ? { file } : {}), flags, env: environment(envFile) });
  };
  const config = load();
  const flushTimeout = numberFlag('--flush-timeout', values['flush-timeout']);
  if (flushTimeout !== undefined && flushTimeout < 0) throw new ConfigError(`--flush-timeout must be 0 or more seconds, got "${values['flush-timeout']}"`);
  // As runAgent bounds it: a one-shot run promised delivery and waits longer than a daemon, which keeps what is left.
  const flushSeconds = values.once ? (flushTimeout ?? 30) : Math.min(flushTimeout ?? 30, 5);

  let signalled: () => void = () => {};
  const stopSignal = new Promise<void>((resolve) => (signalled = resolve));
  const onSignal = (name: string) => {
    // A second SIGINT or SIGTERM takes the default action: the agent ends at once, and what is queued stays queued.
    console.error(`${name}: stopping (flushing queued records for at most ${flushSeconds} s; a second Ctrl-C stops at once)…`);
    signalled();
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  // Started by another program with an IPC channel (the demo starts one so): stop when that program is gone, however
  // it ended, rather than count on with nobody to stop it.
  if (process.channel) process.once('disconnect', () => onSignal('the program that started this agent has ended'));
  // SIGHUP re-reads the config file and environment for new cloud credentials (after a 401, no restart needed). The
  // handler is there from the first moment: Node's default for SIGHUP ends the process, and `systemctl reload` while
  // the models load would have stopped the service for good (systemd does not restart after that signal). One that
  // comes before the agent is ready is applied once it is.
  let controls: AgentControls | undefined;
  let reloadPending = false;
  let credentials = { url: config.cloud.url, token: config.cloud.token };
  const reload = (agent: AgentControls) => {
    try {
      const fresh = load();
      const changed = [fresh.cloud.url !== credentials.url ? 'URL' : '', fresh.cloud.token !== credentials.token ? 'token' : ''].filter(Boolean);
      credentials = { url: fresh.cloud.url, token: fresh.cloud.token };
      // Also when nothing changed: a token enabled again on the cloud's side is tried now, not at the 15-minute retry.
      agent.updateCredentials(fresh.cloud.url, fresh.cloud.token);
      console.error(
        changed.length > 0
          ? `SIGHUP: new cloud ${changed.join(' and ')} taken; a stopped uplink or live control tries again now (the log says when sending has resumed)`
          : 'SIGHUP: config re-read; the cloud URL and token are unchanged (a stopped uplink or live control tries again now with them)',
      );
    } catch (error) {
      console.error(`SIGHUP: config not reloaded: ${(error as Error).message}`);
    }
  };
  process.on('SIGHUP', () => {
    if (controls) reload(controls);
    else reloadPending = true;
  });
  const onReady = (ready: AgentControls) => {
    controls = ready;
    if (reloadPending) reload(ready);
  };
  return runAgent(config, { once: values.once ?? false, stopSignal, onReady, ...(flushTimeout !== undefined ? { flushTimeoutMs: flushTimeout * 1000 } : {}) });
}

/** How fast this machine runs the configured pipeline on a clip, against decoding the clip alone, and what that means for a camera. */
async function bench(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: { ...PIPELINE_OPTIONS, seconds: { type: 'string' }, threads: { type: 'string' } },
  });
  const file = values.config ? readConfigFile(values.config) : undefined;
  const pipeline = pipelineFlags(values);
  const flags: PartialAgentConfig = { ...pipeline, detector: { ...pipeline.detector, threads: numberFlag('--threads', values.threads) } };
  // Nothing is sent: the identity and the cloud only have to pass the config's checks. The cloud is always the
  // placeholder's: the example config's token "change-me", refused for a run, made bench refuse a file it only reads.
  const placeholders = { hiveId: 'bench', boxId: 'bench', cloud: { url: 'http://127.0.0.1', token: 'unused' } };
  const config = resolveConfig({ file: { ...placeholders, ...file, cloud: { ...file?.cloud, ...placeholders.cloud } }, flags, env: {} });
  const seconds = numberFlag('--seconds', values.seconds);
  if (seconds !== undefined && !(seconds > 0)) throw new ConfigError(`--seconds must be more than 0, got "${values.seconds}"`);
  const { fps, width, height } = config.source;

  const measured = await measurePipeline(config, seconds === undefined ? Infinity : Math.max(1, Math.round(seconds * fps)));
  const decode = await measureDecode(config, measured.framesRead);
  const pipelineFps = (measured.frames / measured.ms) * 1000;
  const decodeFps = (decode.frames / decode.ms) * 1000;
  const threads = config.detector.kind === 'onnx' ? `; ${config.detector.threads} inference thread${config.detector.threads === 1 ? '' : 's'}` : '';
  const repeats = measured.framesRead - measured.frames;
  console.log(
    [
      `clip:          ${config.source.url} at ${width}x${height}, ${fps} fps: ${measured.framesRead} frames${repeats > 0 ? ` (${repeats} repeats skipped)` : ''}`,
      `detector:      ${measured.detector}${threads}`,
      `decode only:   ${decodeFps.toFixed(1)} frames/s (ffmpeg reading the clip as the agent does, into nothing)`,
      `pipeline:      ${pipelineFps.toFixed(1)} frames/s, ${(pipelineFps / decodeFps).toFixed(2)} of decode only; detector ${(measured.detectMs / measured.frames).toFixed(2)} ms a frame` +
        `${measured.inferenceSkipped > 0 ? ` (inference skipped on ${measured.inferenceSkipped} still frames)` : ''}; peak memory ${(measured.peakRssBytes / 2 ** 20).toFixed(0)} MB`,
      `counted:       in ${measured.beesIn}, out ${measured.beesOut}`,
      `verdict:       ${cameraVerdict(pipelineFps, fps)}`,
    ].join('\n'),
  );
  return 0;
}

function status(args: string[]): number {
  const { values } = parseArgs({ args, strict: true, options: { config: { type: 'string' }, 'state-dir': { type: 'string' } } });
  const file = values.config ? readConfigFile(values.config) : {};
  const stateDir = values['state-dir'] ?? file.stateDir ?? '.data/agent';
  const outboxPath = file.outbox?.path ?? join(stateDir, 'outbox.db');
  const statusPath = statusFilePath({ stateDir } as Parameters<typeof statusFilePath>[0]);
  if (!existsSync(outboxPath)) {
    console.error(`no outbox at ${outboxPath}: the agent has not run with this state directory`);
    return 1;
  }
  const pipeline = existsSync(statusPath) ? readStatusFile(statusPath) : undefined;
  const running = new OutboxLock(outboxPath).heldByAnother();
  const lines = [`agent:         ${running ? 'running (it holds the outbox)' : 'not running'}`, `outbox:        ${outboxPath}`, ...outboxLines(outboxPath)];
  if (pipeline) {
    const pid = typeof pipeline.pid === 'number' ? pipeline.pid : undefined;
    const age = snapshotAge({ updatedAtMs: Date.parse(String(pipeline.updatedAt)), pid, nowMs: Date.now(), agentRunning: running, pidAlive: pid !== undefined && processAlive(pid) });
    // A rate from a snapshot that is not the present's would read as the camera's now.
    const rate = age.live ? `${String(pipeline.fps)} fps` : 'no current frame rate';
    lines.push(
      `pipeline:      updated ${String(pipeline.updatedAt)}${age.note ? ` (${age.note})` : ''}, capture ${String(pipeline.captureState)}, ${rate}${pipeline.readFps === undefined ? '' : ` (the source read at ${String(pipeline.readFps)})`}, ${String(pipeline.framesProcessed)} frames, ${String(pipeline.framesDropped)} dropped, ${String(pipeline.framesRepeated ?? 0)} repeats skipped${pipeline.memoryRssMb === undefined ? '' : `, ${String(pipeline.memoryRssMb)} MB resident`}`,
      ...(typeof pipeline.captureProblem === 'string' ? [`capture:       ${captureTrouble(pipeline)}`] : []),
      `counts:        in ${String(pipeline.beesIn)}, out ${String(pipeline.beesOut)}, unknown direction ${String(pipeline.unknownDirection)}, inference skipped ${String(pipeline.inferenceSkipped)}`,
      ...linkStopLines('uplink:        ', 'nothing is sent', pipeline.uplinkStopped),
      ...linkStopLines('live control:  ', 'no live video on request', pipeline.liveControlStopped),
      ...(age.live ? liveStreamLines(pipeline.liveStream) : []),
    );
    // Held records are in the running agent's memory, not in the outbox file read above.
    if (typeof pipeline.outboxHeldInMemory === 'number' && pipeline.outboxHeldInMemory > 0) {
      lines.push(`held:          ${pipeline.outboxHeldInMemory} records in the agent's memory: the disk is full (as of the status above)`);
    }
  } else {
    lines.push('pipeline:      no status file yet');
  }
  console.log(lines.join('\n'));
  return 0;
}

/** Whether a process of that id exists (one of another user's, which may not be signalled, does). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A cloud link the cloud stopped (a refused token), as the status file says; nothing while it runs. */
function linkStopLines(label: string, meaning: string, stop: unknown): string[] {
  if (!stop || typeof stop !== 'object' || !('reason' in stop)) return [];
  const nextTry = 'nextTryAt' in stop ? String(stop.nextTryAt) : 'later';
  return [`${label}STOPPED (${meaning}): ${String(stop.reason)}; next try ${nextTry}, or at once on SIGHUP (systemctl reload hivegate-agent) once the token is fixed`];
}

/** Why the source is not delivering, as the status file says. */
function captureTrouble(pipeline: Record<string, unknown>): string {
  const problem = String(pipeline.captureProblem);
  // Between two attempts the source is 'starting' again; the problem stands until it runs.
  if (pipeline.captureState === 'failed') return `failed: ${problem}`;
  const reconnects = Number(pipeline.captureReconnects ?? 0);
  return `reconnecting (${reconnects} reconnect${reconnects === 1 ? '' : 's'} since the agent started): ${problem}`;
}

/** The pipeline's last status as the running agent wrote it; a damaged file is said to be one, not a JSON error. */
function readStatusFile(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`the status file ${path} cannot be read (${(error as Error).message}); the running agent rewrites it every few seconds, or delete it`);
  }
}

/** What the outbox holds, for `status`; an agent that started on a full disk keeps it to itself. */
function outboxLines(outboxPath: string): string[] {
  const outbox = new Outbox({ path: outboxPath });
  try {
    outbox.start();
    const stats = outbox.stats();
    const lastUpload = outbox.getState<{ at: string; kind: string; count: number }>('lastUpload');
    return [
      `queued:        movement ${stats.pending.movement}, trajectories ${stats.pending.trajectories}, metrics ${stats.pending.metrics} (${stats.pendingBytes} bytes)`,
      `oldest queued: ${stats.oldestPendingAt ? new Date(stats.oldestPendingAt).toISOString() : '-'}`,
      `quarantined:   ${stats.quarantined}`,
      `dropped:       movement ${stats.dropped.movement}, trajectories ${stats.dropped.trajectories}, metrics ${stats.dropped.metrics}`,
      `last upload:   ${lastUpload ? `${lastUpload.at} (${lastUpload.count} ${lastUpload.kind})` : 'never'}`,
      ...openIntervalsLine(outbox),
    ];
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'SQLITE_BUSY')) throw error;
    return ['queued:        unknown: the running agent keeps the outbox to itself (it started on a full disk; see its log)'];
  } finally {
    outbox.stop();
  }
}

/** The counts a live agent saved of the intervals it has not sent yet (as of its last save), if any. */
function openIntervalsLine(outbox: Outbox): string[] {
  const saved = outbox.readGuarded<unknown>(OPEN_INTERVALS_STATE_KEY);
  if (saved === undefined) return [];
  if ('stale' in saved) return ['not sent yet:  none kept: the last save is out of date (the agent sent some of its intervals and could not save again on a full disk)'];
  try {
    const intervals = readSavedIntervals(saved.value);
    return intervals.length === 0 ? [] : [`not sent yet:  ${describeOpenIntervals(intervals)} counted in intervals still open, saved for the agent to send when they close`];
  } catch (error) {
    return [`not sent yet:  unreadable (${(error as Error).message})`];
  }
}

/** Validates a config file (with the environment's secrets) the way `run` would, models loaded, and says what it will do. */
async function checkConfig(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { config: { type: 'string' }, 'secrets-file': { type: 'string' } } });
  if (!values.config) throw new ConfigError('check-config needs --config FILE');
  const config = resolveConfig({ file: readConfigFile(values.config), env: environment(values['secrets-file']) });
  // The models are loaded as `run` loads them: a path that is wrong, or a file that is not a model, fails here.
  const detector = await createDetector(config);
  prepareStateDir(config);
  const source = parseSource(config.source.url, config.source);
  if (source.kind === 'file') checkSourceFile(source.path);
  const stateNote = serviceStateNote(config);
  const sensors = config.sensors ? (config.sensors.command ? `command every ${config.sensors.intervalSeconds} s` : `file ${config.sensors.file} every ${config.sensors.intervalSeconds} s`) : 'none';
  console.log(
    [
      `config ok:     ${values.config}`,
      `identity:      hive ${String(config.hiveId)}, box ${String(config.boxId)}, device ${config.deviceId}`,
      `source:        ${config.source.url} (${config.source.width}x${config.source.height} @ ${config.source.fps} fps, ${config.source.pixelFormat})`,
      `cloud:         ${config.cloud.url}`,
      `detector:      ${detector.describe()}`,
      `zone:          ${zoneLine(config)}`,
      `live:          ${config.live.enabled ? `on (status every ${config.live.statusIntervalSeconds} s)` : 'off'}`,
      `sensors:       ${sensors}`,
      `state:         ${config.stateDir} (writable${stateNote ? `; ${stateNote}` : ''})`,
    ].join('\n'),
  );
  return 0;
}

/**
 * Node (20 at least, nodejs/node#54232) takes `--env-file` and `--env-file-if-exists` for itself wherever they stand on
 * its command line, after the script name too, up to a `--`: with the file missing or unreadable it prints
 * "node: FILE: not found" and exits 9 before the agent runs. The agent's flag is `--secrets-file` so that no way of
 * starting it meets that. The old spelling is refused rather than taken: it reaches the agent only while its file
 * can be read, so taking it would work until the day the file went missing, and then fail where no message of ours
 * is ever printed.
 */
function refuseNodeEnvFile(args: string[]): void {
  for (const arg of args) {
    if (arg === '--') return;
    if (/^--env-file(?:-if-exists)?(?:=|$)/.test(arg)) {
      throw new ConfigError(
        `${arg.split('=')[0]!} is node's own flag, not the agent's: use --secrets-file FILE (node reads --env-file before the agent starts and exits 9 when the file is missing)`,
      );
    }
  }
}

/** The counting zone check-config says will be used; none set is the lower half of the frame, which may not be the entrance. */
function zoneLine(config: ReturnType<typeof resolveConfig>): string {
  const points = config.counting.zone.map(([x, y]) => `${x},${y}`).join(' ');
  const fallback = JSON.stringify(config.counting.zone) === JSON.stringify(defaultZone(config.source.width, config.source.height));
  return fallback ? `none set: the lower half of the frame (${points}); set counting.zone to the polygon around the entrance` : points;
}

/** The process's environment, with the variables of the env file (read now, so a SIGHUP sees its edits) over it. */
function environment(envFile: string | undefined): NodeJS.ProcessEnv {
  return envFile === undefined ? process.env : { ...process.env, ...readEnvFile(envFile) };
}

function numberFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ConfigError(`${name} must be a number, got "${value}"`);
  return n;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/cli.ts')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      // Start-up failures (ffmpeg missing, model unreadable, outbox not writable) are one clear line, not a stack.
      console.error(`hivegate-agent: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
