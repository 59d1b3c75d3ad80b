import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli.ts';
import { FakeCloud } from './helpers/fake-cloud.ts';
import { holdOutboxLockElsewhere } from './helpers/lock-holder.ts';
import { generateClip, tempDir, twoBeesLavfi } from './helpers/media.ts';

const exec = promisify(execFile);
const dir = tempDir('cli');
const agentRoot = join(import.meta.dirname, '..');
let clip: string;
const cloud = new FakeCloud();

beforeAll(async () => {
  // Starts 3 s before a minute boundary, so the clip spans two counting intervals.
  clip = await generateClip(join(dir.path, 'bees.mp4'), { seconds: 6, fps: 30, width: 640, height: 480, lavfi: twoBeesLavfi(30), creationTime: '2026-05-01T10:00:57Z' });
  await cloud.start();
}, 60_000);
afterAll(async () => {
  await cloud.stop();
  dir.cleanup();
});

/** The real command, as `node --import tsx src/cli.ts`, or with `script` as `node script` (the bin, as the service starts it). */
function cli(args: string[], env: NodeJS.ProcessEnv = {}, script?: string) {
  return exec(process.execPath, script ? [script, ...args] : ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: agentRoot, env: { ...process.env, HIVEGATE_TOKEN: '', ...env } }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/**
 * The CLI's `main` in this process, its console output collected: for answers that come before any work starts
 * (help, refused flags and configs), each of which would otherwise cost a process start of a second or more.
 * `cli` above runs the real command; a test uses it for what the process itself does.
 */
async function cliHere(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void out.push(`${parts.join(' ')}\n`));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void err.push(`${parts.join(' ')}\n`));
  const token = process.env.HIVEGATE_TOKEN;
  process.env.HIVEGATE_TOKEN = '';
  try {
    const code = await main(args);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    log.mockRestore();
    error.mockRestore();
    if (token === undefined) delete process.env.HIVEGATE_TOKEN;
    else process.env.HIVEGATE_TOKEN = token;
  }
}

describe('hivegate-agent CLI', () => {
  const stateDir = join(dir.path, 'state');
  // The clip's bees are drawn rectangles: the motion detector sees them move, the bee model rightly ignores them.
  const runArgs = () => ['run', '--source', clip, '--cloud', cloud.url, '--token', 'good-token', '--hive', 'hive-7', '--box', 'box-3', '--state-dir', stateDir, '--once', '--detector', 'motion'];

  it('run --once processes a file, delivers every record and exits 0', async () => {
    const result = await cli(runArgs());
    // The clip's last second, after both bees have left, is one picture over and over: its repeats are skipped
    // (one kept every 250 ms).
    expect(result.stderr).toContain('agent stopped: 152 frames (and 28 repeats skipped), in 1, out 1');
    expect(result.stderr).not.toContain('source: the source is'); // the clip is 30 fps, as the default reads it
    expect(result.code).toBe(0);
    const movement = cloud.requests.filter((r) => r.path === '/entrance/v1/movement').flatMap((r) => r.body as Record<string, unknown>[]);
    expect(movement).toEqual([
      expect.objectContaining({ hiveId: 'hive-7', boxId: 'box-3', timestamp: Date.parse('2026-05-01T10:01:00Z') / 1000 }),
      expect.objectContaining({ hiveId: 'hive-7', boxId: 'box-3', timestamp: Date.parse('2026-05-01T10:02:00Z') / 1000 }),
    ]);
    const totals = movement.reduce<{ in: number; out: number }>((acc, m) => ({ in: acc.in + (m.beesIn as number), out: acc.out + (m.beesOut as number) }), { in: 0, out: 0 });
    expect(totals).toEqual({ in: 1, out: 1 });
    expect(movement.every((m) => (m.avgSpeed as number) > 2.5 && (m.avgSpeed as number) < 5)).toBe(true); // 110 px/s at 30 fps ≈ 3.7 px/frame
    const trajectories = cloud.requests.filter((r) => r.path === '/api/entrance-heatmaps/trajectories');
    expect(trajectories).toHaveLength(1);
    expect(trajectories[0]!.body).toMatchObject({ boxId: 'box-3', frameDimensions: { width: 640, height: 480 }, timestamp: expect.stringMatching(/^2026-05-01T10:0/) });
    expect(Object.keys((trajectories[0]!.body as { trackHistory: object }).trackHistory)).toHaveLength(2);
  }, 60_000);

  it('a second run over the same file queues nothing new (same identities)', async () => {
    const before = cloud.requests.length;
    const result = await cli(runArgs());
    expect(result.code).toBe(0);
    expect(cloud.requests.length).toBe(before);
    // It said "2 intervals and 1 trajectory batches queued" for records the outbox had deduplicated.
    expect(result.stderr).toContain('0 intervals and 0 trajectory batches queued (2 intervals and 1 batch already queued or sent before, not again)');
  }, 60_000);

  it('status reports the outbox and the last run', async () => {
    const result = await cli(['status', '--state-dir', stateDir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/queued:\s+movement 0, trajectories 0, metrics 0/);
    expect(result.stdout).toMatch(/last upload:\s+\d{4}-/);
    expect(result.stdout).toContain('agent:         not running'); // the run above has ended
    // A stopped agent's rate looked like a camera's now.
    expect(result.stdout).toMatch(/\(the last run's, written \d+ s ago; no agent is running\), capture ended, no current frame rate, 152 frames, 0 dropped, 28 repeats skipped, \d{2,4} MB resident/);
  }, 30_000);

  // A status file that could not be written was complained about every 2 s: on a full disk that only fills it further.
  it('says once that the status file cannot be written, and counts on', async () => {
    const blockedState = join(dir.path, 'blocked-state');
    mkdirSync(join(blockedState, 'status.json.tmp'), { recursive: true }); // the file's temporary name is taken by a folder
    const args = runArgs().map((arg) => (arg === stateDir ? blockedState : arg));
    const result = await cli(args);
    expect(result.code).toBe(0);
    expect(result.stderr.match(/cannot write .*status\.json/g)).toHaveLength(1);
    expect(result.stderr).toContain('agent stopped: 152 frames (and 28 repeats skipped), in 1, out 1');
  }, 60_000);

  it('status says so when the running agent keeps the outbox to itself (as it does when it started on a full disk)', async () => {
    const lockedState = join(dir.path, 'locked-state');
    mkdirSync(lockedState, { recursive: true });
    const agentSide = new Database(join(lockedState, 'outbox.db'));
    agentSide.pragma('locking_mode = EXCLUSIVE');
    agentSide.pragma('journal_mode = WAL');
    agentSide.exec('CREATE TABLE held (a)'); // a write takes the exclusive lock and keeps it
    try {
      const result = await cli(['status', '--state-dir', lockedState]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('queued:        unknown: the running agent keeps the outbox to itself (it started on a full disk; see its log)');
    } finally {
      agentSide.close();
    }
  }, 30_000);

  // Two agents on one state directory (the service running, and the same config run by hand) both sent its records.
  it('run refuses an outbox another running agent owns, sends nothing, and status still reads it', async () => {
    const holder = await holdOutboxLockElsewhere(join(stateDir, 'outbox.db'));
    try {
      const before = cloud.requests.length;
      const result = await cli(runArgs());
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`hivegate-agent: another agent is running on the outbox at ${join(stateDir, 'outbox.db')}: stop it first`);
      expect(cloud.requests.length).toBe(before);
      const status = await cli(['status', '--state-dir', stateDir]);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/queued:\s+movement 0, trajectories 0, metrics 0/);
      expect(status.stdout).toContain('agent:         running (it holds the outbox)');
      // The status file is the ended run's: beside "running" it read as the running agent's (after a restart on a full disk).
      expect(status.stdout).toMatch(/updated \S+ \(STALE: written \d+ s ago by an earlier run \(pid \d+, ended\); the running agent has not rewritten it/);
      // Said once, by the CLI, not also by the module that failed to start.
      expect(result.stderr.match(/another agent is running/g)).toHaveLength(1);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 30_000);

  // SIGHUP (systemctl reload) before the agent was ready ended it, and systemd does not restart after that signal.
  it('takes a SIGHUP while it starts, reloads once ready, and stops cleanly later', async () => {
    const args = ['run', '--source', 'http://127.0.0.1:9/no-camera', '--cloud', cloud.url, '--token', 'good-token', '--hive', 'h', '--box', 'b', '--state-dir', join(dir.path, 'hup-state'), '--once'];
    const agent = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: agentRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    agent.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      // Printed as the run begins, before the models load: the agent is not ready yet.
      await expect.poll(() => stderr, { timeout: 20_000, interval: 20 }).toContain('--once with a live source');
      expect(stderr).not.toContain('agent running');
      agent.kill('SIGHUP');
      await expect.poll(() => stderr, { timeout: 20_000 }).toContain('agent running');
      // Nothing changed, and it says so rather than claim a reload.
      await expect.poll(() => stderr, { timeout: 5000 }).toContain('SIGHUP: config re-read; the cloud URL and token are unchanged');
      const exited = once(agent, 'exit');
      agent.kill('SIGTERM');
      const [code, signal] = (await exited) as [number | null, string | null];
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      // How long the stop may take is said (a --once run waited 30 s in silence for a cloud that was down).
      expect(stderr).toContain('SIGTERM: stopping (flushing queued records for at most 30 s; a second Ctrl-C stops at once)…');
    } finally {
      agent.kill('SIGKILL');
    }
  }, 60_000);

  // The service's token file is agent.env, which systemd read only at start: `systemctl reload` after fixing the
  // token there sent SIGHUP to an agent that kept the old token, and the uplink stayed stopped.
  it('re-reads --secrets-file on SIGHUP: a token fixed there lifts a 401 stop, and what was queued is delivered', async () => {
    const envFile = join(dir.path, 'agent.env');
    writeFileSync(envFile, 'HIVEGATE_TOKEN=revoked-token\n');
    const configFile = join(dir.path, 'env-file.json');
    // No camera (it is retried in the background): a sensor reading read at start is what waits for the cloud.
    writeFileSync(configFile, JSON.stringify({
      hiveId: 'h', boxId: 'env-file', source: { url: 'http://127.0.0.1:9/no-camera' }, cloud: { url: cloud.url }, detector: { kind: 'motion' },
      live: { enabled: false }, sensors: { command: 'echo weightKg=41.2', intervalSeconds: 3600 }, stateDir: join(dir.path, 'env-file-state'),
    }));
    // Started as the service starts it: node, the bin script, the flags (node reads some of those itself).
    const agent = spawn(process.execPath, ['bin/hivegate-agent.mjs', 'run', '--config', configFile, '--secrets-file', envFile], { cwd: agentRoot, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HIVEGATE_TOKEN: '' } });
    let stderr = '';
    agent.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(agent, 'exit');
    const deliveredReadings = () => cloud.requests.filter((r) => r.path === '/iot/v1/metrics' && r.status === 200 && r.authorization === 'Bearer good-token').length;
    try {
      await expect.poll(() => stderr, { timeout: 30_000 }).toContain('the cloud refused the token');
      expect(deliveredReadings()).toBe(0);
      writeFileSync(envFile, '# fixed\nHIVEGATE_TOKEN=good-token\n');
      agent.kill('SIGHUP');
      await expect.poll(deliveredReadings, { timeout: 15_000 }).toBeGreaterThan(0);
      expect(stderr).toContain('SIGHUP: new cloud token taken; a stopped uplink or live control tries again now');
      // Resumed sending was left to be read from the log's silence.
      await expect.poll(() => stderr, { timeout: 5000 }).toMatch(/uplink: sending has resumed: the cloud accepted the token \(\d+ metrics delivered\)/);
      agent.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    } finally {
      agent.kill('SIGKILL');
    }
  }, 60_000);

  // Node takes --env-file for itself even after the script name: with the file missing it exited 9 before the agent ran.
  it('reads its secrets file as --secrets-file, however it is started, and refuses node\'s --env-file by name', async () => {
    const secrets = join(dir.path, 'secrets.env');
    writeFileSync(secrets, 'HIVEGATE_TOKEN=from-the-file\n');
    const missing = join(dir.path, 'no-such.env');
    const configFile = join(dir.path, 'secrets.json');
    writeFileSync(configFile, JSON.stringify({ hiveId: 'h', boxId: 'b', source: { url: clip }, cloud: { url: cloud.url }, detector: { kind: 'motion' }, stateDir: join(dir.path, 'secrets-state') }));
    const start = (args: string[]) => cli(args, {}, 'bin/hivegate-agent.mjs');
    const [missingFile, readable, oldSpelling] = await Promise.all([
      start(['run', '--config', configFile, '--secrets-file', missing]),
      start(['check-config', '--config', configFile, '--secrets-file', secrets]),
      start(['run', '--config', configFile, '--env-file', secrets]),
    ]);
    expect(missingFile).toMatchObject({ code: 2, stderr: `hivegate-agent: --secrets-file ${missing} cannot be read (ENOENT)\n` });
    expect(readable).toMatchObject({ code: 0, stdout: expect.stringContaining(`config ok:     ${configFile}`) });
    expect(oldSpelling).toMatchObject({ code: 2, stderr: expect.stringContaining("hivegate-agent: --env-file is node's own flag, not the agent's: use --secrets-file FILE") });
  }, 30_000);

  // A damaged status file gave "Expected double-quoted property name in JSON at position 20" and nothing else.
  it('status names a damaged status file', async () => {
    const damaged = join(dir.path, 'damaged-state');
    mkdirSync(damaged, { recursive: true });
    const outbox = new Database(join(damaged, 'outbox.db'));
    outbox.close();
    writeFileSync(join(damaged, 'status.json'), '{ broken');
    const result = await cli(['status', '--state-dir', damaged]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`hivegate-agent: the status file ${join(damaged, 'status.json')} cannot be read (`);
  }, 30_000);

  it('rejects bad input with a message naming the field and exit code 2', async () => {
    const missingHive = await cliHere(['run', '--source', clip, '--cloud', cloud.url, '--token', 't', '--box', 'b', '--state-dir', stateDir]);
    expect(missingHive.code).toBe(2);
    expect(missingHive.stderr).toContain('hiveId is required');
    const badZone = await cliHere([...runArgs(), '--zone', '1,2 3']);
    expect(badZone.code).toBe(2);
    expect(badZone.stderr).toContain('--zone point 2 ("3") must be x,y');
    const negativeFlush = await cliHere([...runArgs(), '--flush-timeout=-5']);
    expect(negativeFlush).toMatchObject({ code: 2, stderr: expect.stringContaining('--flush-timeout must be 0 or more seconds, got "-5"') });
  }, 30_000);

  // check-config (which the installer runs) passed a model path with a typo; the service then failed at every start.
  it('check-config loads the models: a missing or broken one is named by its field, exit code 2', async () => {
    const config = (detector: string) => {
      const file = join(dir.path, `check-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ hiveId: 'h', boxId: 'b', source: { url: clip }, cloud: { url: cloud.url, token: 't' }, detector: JSON.parse(detector) as object }));
      return file;
    };
    const ok = await cliHere(['check-config', '--config', config('{}')]);
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringMatching(/detector:\s+onnx centernet \(.*bee-centernet-int8\.onnx\), slot pass ×2/) });
    // No zone set: which one would count was not said.
    expect(ok.stdout).toContain('zone:          none set: the lower half of the frame (0,240 640,240 640,480 0,480); set counting.zone');
    const missing = await cliHere(['check-config', '--config', config(`{"model": "${join(dir.path, 'no-such-model.onnx')}"}`)]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`hivegate-agent: detector.model: cannot load ONNX model ${join(dir.path, 'no-such-model.onnx')}: ENOENT`);
    const notAModel = await cliHere(['check-config', '--config', config(`{"slot": {"model": "${clip}"}}`)]);
    expect(notAModel.code).toBe(2);
    expect(notAModel.stderr).toContain(`hivegate-agent: detector.slot.model: cannot load ONNX model ${clip}:`);
  }, 60_000);

  // A zone drawn on a 1280x720 screenshot, for a 640x480 source: check-config said "config ok" and the agent counted nothing.
  it('check-config refuses a zone outside the frame, naming the point and the frame size, exit code 2', async () => {
    const file = join(dir.path, 'zone-too-large.yaml');
    writeFileSync(file, ['hiveId: h', 'boxId: b', `source: { url: ${JSON.stringify(clip)} }`, 'cloud: { url: "http://127.0.0.1:9", token: t }', 'detector: { kind: motion }', 'counting: { zone: [[73, 96], [900, 96], [900, 700], [73, 700]] }', ''].join('\n'));
    const result = await cliHere(['check-config', '--config', file]);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('hivegate-agent: invalid configuration: counting.zone[1] (900, 96), counting.zone[2] (900, 700) and counting.zone[3] (73, 700) lie outside the 640x480 frame');
  }, 30_000);

  // An unusable stateDir passed check-config, then run failed with a bare "EPERM: operation not permitted, mkdir
  // '/sys/hivegate'" (or ENOTDIR) naming no setting, in a restart loop under the service.
  it('names a stateDir it cannot create or write, in run and check-config, exit code 2', async () => {
    const aFile = join(dir.path, 'a-file');
    writeFileSync(aFile, '');
    const config = (stateDir: string) => {
      const file = join(dir.path, `state-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ hiveId: 'h', boxId: 'b', source: { url: clip }, cloud: { url: cloud.url, token: 't' }, detector: { kind: 'motion' }, stateDir }));
      return file;
    };
    const underAFile = join(aFile, 'state');
    const [run, check] = [await cliHere(['run', '--config', config(underAFile)]), await cliHere(['check-config', '--config', config(underAFile)])];
    for (const result of [run, check]) {
      expect(result).toMatchObject({ code: 2, stderr: `hivegate-agent: stateDir ${underAFile} cannot be used (ENOTDIR at ${underAFile}): a part of that path is a file, not a folder\n` });
    }
    // A stateDir that is itself a file passed (mkdir's EEXIST was taken for a leftover probe file).
    const itself = await cliHere(['check-config', '--config', config(aFile)]);
    expect(itself).toMatchObject({ code: 2, stderr: `hivegate-agent: stateDir ${aFile} cannot be used (EEXIST at ${aFile}): it is a file, not a folder\n` });
    if (process.platform === 'linux') {
      const sys = await cliHere(['run', '--config', config('/sys/hivegate')]);
      expect(sys).toMatchObject({ code: 2, stderr: expect.stringMatching(/^hivegate-agent: stateDir \/sys\/hivegate cannot be used \((EPERM|EACCES|EROFS)[^)]*\): .*ReadWritePaths=/) });
    }
  }, 30_000);

  // A missing source file printed "agent running" and then "capture failed", after the models had loaded.
  it('refuses a source file it cannot read before it starts, naming source.url, exit code 2', async () => {
    const missing = join(dir.path, 'no-such-clip.mp4');
    const result = await cliHere(['run', '--source', missing, '--cloud', cloud.url, '--token', 't', '--hive', 'h', '--box', 'b', '--state-dir', join(dir.path, 'missing-source-state'), '--detector', 'motion', '--once']);
    expect(result).toMatchObject({ code: 2, stderr: `hivegate-agent: source.url ${missing} cannot be read (no such file)\n` });
  }, 30_000);

  // Only the first mistake in a config file was named, so fixing one took a run per mistake.
  it('check-config names every problem of a file at once', async () => {
    const file = join(dir.path, 'three-mistakes.yaml');
    writeFileSync(file, ['hiveId: h', 'boxId: b', 'source: { url: clip.mp4, fps: 0 }', 'cloud: { url: "http://", token: t }', 'detector: { kind: yolo }', ''].join('\n'));
    const result = await cliHere(['check-config', '--config', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      [
        'hivegate-agent: invalid configuration, 3 problems:',
        '  - source.fps must be > 0',
        '  - cloud.url must be an http:// or https:// address with a host name',
        '  - detector.kind must be one of "motion", "onnx"',
        '',
      ].join('\n'),
    );
  }, 30_000);

  // "run --help" was refused as an unknown option, and there was no way to ask the agent's version.
  it('gives each command its own help, and its version', async () => {
    const usageLines = { run: 'hivegate-agent run --config FILE [--secrets-file FILE] [--once]', status: 'hivegate-agent status [--config FILE | --state-dir DIR]', bench: 'hivegate-agent bench --source FILE', 'check-config': 'hivegate-agent check-config --config FILE' };
    const asks = [...Object.keys(usageLines).map((command) => [command, '--help']), ['run', '-h'], ['help', 'bench']];
    const answers = await Promise.all(asks.map((args) => cliHere(args)));
    answers.forEach((help, i) => {
      const command = asks[i]![0] === 'help' ? asks[i]![1]! : asks[i]![0]!;
      expect(help).toMatchObject({ code: 0, stderr: '' });
      expect(help.stdout.startsWith(`Usage:\n  ${usageLines[command as keyof typeof usageLines]}`)).toBe(true);
      expect(help.stdout).toContain('Exit codes: 0 done');
      for (const other of Object.keys(usageLines).filter((name) => name !== command)) expect(help.stdout).not.toContain(`hivegate-agent ${other} `);
    });
    const { version } = JSON.parse(readFileSync(join(agentRoot, 'package.json'), 'utf8')) as { version: string };
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `hivegate-agent ${version}\n` });
    const unknownFlag = await cliHere(['status', '--verbose']);
    expect(unknownFlag).toMatchObject({ code: 2, stderr: "hivegate-agent: Unknown option '--verbose'\n(hivegate-agent status --help shows its usage)\n" });
  }, 60_000);

  it('bench times the pipeline on a clip against decoding it, counts, says whether it keeps up, and sends nothing', async () => {
    const before = cloud.requests.length;
    const result = await cli(['bench', '--source', clip, '--detector', 'motion']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`clip:          ${clip} at 640x480, 30 fps: 180 frames (28 repeats skipped)`);
    expect(result.stdout).toContain('detector:      motion (background subtraction)\n');
    expect(result.stdout).toMatch(/^decode only: +\d+\.\d frames\/s \(ffmpeg reading the clip as the agent does, into nothing\)$/m);
    expect(result.stdout).toMatch(/^pipeline: +\d+\.\d frames\/s, \d+\.\d\d of decode only; detector \d+\.\d\d ms a frame; peak memory \d+ MB$/m);
    expect(result.stdout).toContain('counted:       in 1, out 1');
    expect(result.stdout).toMatch(/^verdict: +(keeps up with|falls behind) a 30 fps camera/m);
    expect(cloud.requests.length).toBe(before);

    const firstSeconds = await cli(['bench', '--source', clip, '--detector', 'motion', '--seconds', '2']);
    expect(firstSeconds.stdout).toContain('30 fps: 60 frames');
  }, 60_000);

  it('bench refuses a camera and bad numbers with a message naming them and exit code 2', async () => {
    const camera = await cliHere(['bench', '--source', 'rtsp://127.0.0.1:8554/entrance']);
    expect(camera).toMatchObject({ code: 2, stderr: expect.stringContaining('source must be a video file to measure throughput, got rtsp://127.0.0.1:8554/entrance') });
    const noSource = await cliHere(['bench']);
    expect(noSource).toMatchObject({ code: 2, stderr: expect.stringContaining('source.url is required') });
    const seconds = await cliHere(['bench', '--source', clip, '--seconds', '0']);
    expect(seconds).toMatchObject({ code: 2, stderr: expect.stringContaining('--seconds must be more than 0, got "0"') });
    // The example config's placeholder token, refused for a run, made bench refuse the file (it sends nothing): the
    // config passes, and the next check is the one that speaks.
    const example = await cliHere(['bench', '--config', join(agentRoot, 'agent.example.yaml'), '--source', clip, '--seconds', '0']);
    expect(example).toMatchObject({ code: 2, stderr: expect.stringContaining('--seconds must be more than 0') });
    const threads = await cliHere(['bench', '--source', clip, '--threads', 'two']);
    expect(threads).toMatchObject({ code: 2, stderr: expect.stringContaining('--threads must be a number, got "two"') });
  }, 60_000);

  it('takes paths from the repository root through the root script, as the README writes them', async () => {
    // Before, `pnpm agent` ran the CLI inside agent/, so `--config agent/agent.example.yaml` was not found.
    const result = await exec('pnpm', ['--silent', 'agent', 'check-config', '--config', 'agent/agent.example.yaml'], { cwd: join(agentRoot, '..'), env: { ...process.env, HIVEGATE_TOKEN: 'device-token' } });
    expect(result.stdout).toContain('config ok:     agent/agent.example.yaml');
    expect(result.stdout).toContain('zone:          0,300 640,300 640,480 0,480');
  }, 30_000);

  it('fails with one clear line when ffmpeg cannot be found', async () => {
    const result = await cli(runArgs(), { FFMPEG_PATH: '/nonexistent/ffmpeg' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('hivegate-agent: FFMPEG_PATH points to /nonexistent/ffmpeg, which is not an executable file');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 30_000);

  it('says so when a file is slower than the rate it is read at, and tracks each of its pictures once', async () => {
    const result = await cli(['run', '--source', clip, '--cloud', cloud.url, '--token', 'good-token', '--hive', 'hive-9', '--box', 'box-3', '--state-dir', join(dir.path, 'state-fps'), '--once', '--detector', 'motion', '--fps', '40']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'source: the source is 30 fps and is read at 40 (source.fps), so 25 % of the frames repeat the one before; they are skipped, and the settings counted in frames follow its rate (tracker.minHits 3, tracker.maxMissedFrames 20, counting.interactionMinFrames 3)',
    );
    // 240 frames read: the same 152 pictures as at the clip's own rate, and the same counts.
    expect(result.stderr).toContain('agent stopped: 152 frames (and 88 repeats skipped), in 1, out 1');
  }, 60_000);

  it('runs the shipped pair of bee models when no detector is named', async () => {
    const result = await cli(['run', '--source', clip, '--cloud', cloud.url, '--token', 'good-token', '--hive', 'hive-8', '--box', 'box-3', '--state-dir', join(dir.path, 'state-default'), '--once']);
    expect(result.stderr).toMatch(/detector onnx centernet \(\S*models\/bee-centernet-int8\.onnx\), slot pass ×2 \(\S*models\/bee-centernet-slot-int8\.onnx\), motion-gated/);
    expect(result.stderr).toContain('agent stopped: 152 frames (and 28 repeats skipped)');
    expect(result.code).toBe(0);
  }, 60_000);
});
