import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli.ts';
import { SCENARIOS } from '../src/scenario/suite.ts';
import { packageDir, probe, run } from './helpers.ts';

const sim = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args]);

/**
 * The CLI's `main` in this process, its console output collected: for answers that come before any work starts
 * (usage, refused options), each of which would otherwise cost a process start. `sim` runs the real command.
 */
async function simHere(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void out.push(`${parts.join(' ')}\n`));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void err.push(`${parts.join(' ')}\n`));
  try {
    return { code: await main(args), stdout: out.join(''), stderr: err.join('') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('sim CLI', () => {
  it('lists every scenario with its split and a description (through the root script)', async () => {
    const result = await run('pnpm', ['--silent', 'sim', 'list'], { cwd: join(packageDir, '..') });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(SCENARIOS.length);
    expect(lines[0]).toMatch(/^quiet-morning\s+train\s+640x480@30\s+\S.+/);
    expect(lines.filter((line) => /\sheldout\s/.test(line)).length).toBe(SCENARIOS.filter((s) => s.split === 'heldout').length);
  }, 30_000);

  it('takes a relative --out from the repository root, where the root script is run', async () => {
    const root = join(packageDir, '..');
    const dir = await mkdtemp(join(tmpdir(), 'hivegate-sim-relative-'));
    try {
      // Before, the root script ran the CLI inside simulator/, so the clip landed under simulator/ instead.
      const result = await run('pnpm', ['--silent', 'sim', 'render', '--scenario', 'quiet-morning', '--seconds', '0.5', '--out', relative(root, dir)], { cwd: root });
      expect(result.code, result.stderr).toBe(0);
      expect((await stat(join(dir, 'clip.mp4'))).size).toBeGreaterThan(1000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('renders a clip and its ground truth, reporting where they are', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hivegate-sim-cli-'));
    try {
      const result = await sim('render', '--scenario', 'quiet-morning', '--seconds', '1', '--seed', '5', '--hive', 'h1', '--start', '2026-05-01T14:00:00Z', '--out', dir);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as { clip: string; truth: string; frames: number; zone: string };
      expect(summary).toMatchObject({ clip: join(dir, 'clip.mp4'), truth: join(dir, 'truth.json'), frames: 30 });
      expect((await stat(summary.clip)).size).toBeGreaterThan(1000);
      expect((await probe(summary.clip)).frames).toBe(30);
      const truth = JSON.parse(await readFile(summary.truth, 'utf8')) as {
        scenario: { seed: number };
        entranceZone: [number, number][];
        intervals: Array<{ hiveId: string; boxId: string; timestamp: number }>;
      };
      // The agent's --zone for the clip: without it a technician counted with the default lower half.
      expect(summary.zone).toBe(truth.entranceZone.map((point) => point.join(',')).join(' '));
      expect(truth.scenario.seed).toBe(5);
      expect(truth.intervals[0]).toMatchObject({ hiveId: 'h1', boxId: 'sim-box', timestamp: Date.parse('2026-05-01T14:01:00Z') / 1000 });
      expect(result.stderr).toContain('render quiet-morning: 30 frames');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it.each([
    [['render', '--scenario', 'no-such-scene', '--out', '/tmp/x'], /unknown scenario "no-such-scene"/],
    [['render', '--scenario', 'dusk'], /--out is required/],
    [['render', '--out', '/tmp/x'], /--scenario is required/],
    [['render', '--scenario', 'dusk', '--out', '/tmp/x', '--seed', 'abc'], /--seed must be an integer/],
    [['render', '--scenario', 'dusk', '--out', '/tmp/x', '--seconds', '0'], /--seconds must be a number/],
    [['render', '--scenario', 'dusk', '--out', '/tmp/x', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['render', '--scenario', 'dusk', '--out', '/tmp/x', '--start', '2026-05-01 14:00'], /--start must be an ISO 8601 date-time with a time zone/],
    [['camera', '--loop'], /--file is required/],
    [['camera', '--file', 'x.mp4', '--port', '70000'], /--port must be an integer/],
    [['fleet', '--cloud', 'http://127.0.0.1:1', '--token', 't', '--ramp', 'soon'], /--ramp must be an integer from 0 to 3600/],
    // Negative numbers: before, Node's "argument is ambiguous" instead of the range.
    [['render', '--scenario', 'dusk', '--out', '/tmp/x', '--seed', '-1'], /--seed must be an integer from 0 to 4294967295, got "-1"/],
    [['render', '--scenario', 'dusk', '--out', '/tmp/x', '--seconds', '-0.5'], /--seconds must be a number from 0.1 to 3600, got "-0.5"/],
    [['fleet', '--cloud', 'http://127.0.0.1:1', '--token', 't', '--seconds', '-5'], /--seconds must be an integer from 1 to 86400, got "-5"/],
    [['paint'], /unknown command "paint"/],
    [[], /usage:/],
  ])('exits 2 with a clear message for bad usage: %j', async (args, message) => {
    const result = await simHere(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  }, 15_000);

  // Paths are taken from where the command runs: these go through a process started in the package.
  it.each([
    // An existing file as --out: before, a raw "EEXIST: file already exists, mkdir".
    [['render', '--scenario', 'dusk', '--out', 'src/cli.ts'], /--out must name a directory \(it is made if missing\), but src\/cli\.ts is a file/],
    [['render', '--scenario', 'dusk', '--out', 'src/cli.ts/clips'], /--out must name a directory .*, but \/.*\/src\/cli\.ts is a file/],
  ])('exits 2 naming the file given as --out: %j', async (args, message) => {
    const result = await sim(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  }, 15_000);

  it.each(['list', 'render', 'camera', 'fleet'])('sim %s --help prints its usage and exits 0', async (command) => {
    // Before, each exited 2 with "Unknown option '--help'".
    const result = await simHere(command, '--help');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^usage: sim ${command}`));
    expect(result.stderr).toBe('');
  }, 15_000);

  it('documents every fleet option with its default, and the token scopes, in the usage and the README', async () => {
    const { stdout } = await simHere('fleet', '-h');
    const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
    const source = await readFile(join(packageDir, 'src/cli.ts'), 'utf8');
    const parsed = source.slice(source.indexOf('async function fleet('));
    const options = [...parsed.slice(0, parsed.indexOf('});')).matchAll(/^\s+'?([a-z-]+)'?: \{ type:/gm)].map((m) => `--${m[1]}`);
    expect(options).toEqual(expect.arrayContaining(['--cloud', '--token', '--devices', '--seconds', '--timeout', '--poll-wait']));
    for (const option of options) {
      expect(stdout, option).toContain(option);
      expect(readme, option).toContain(`\`${option}`);
    }
    for (const [option, fallback] of [['--devices N', 10], ['--seconds S', 60], ['--status-every S', 30], ['--telemetry-every S', 60], ['--poll-wait S', 20], ['--timeout S', 15]] as const) {
      expect(stdout).toMatch(new RegExp(`${option} [^\\n]*(\\n {20,}[^\\n]*)?\\(default ${fallback}\\)`));
      expect(readme).toMatch(new RegExp(`\\| \`${option}\` \\|[^\\n]*\\| ${fallback} \\|`));
    }
    for (const scope of ['ingest', 'device', 'control']) {
      expect(stdout).toContain(scope);
      expect(readme).toContain(`\`${scope}\``);
    }
  }, 15_000);

  // `sim list | head -3` ended in an unhandled EPIPE error and its stack trace once head had read enough.
  it('ends quietly, exit 0, when its reader stops reading', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'list'], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the first line is written
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 15_000);

  it('exits 1 when the work itself fails', async () => {
    const result = await sim('camera', '--file', '/nonexistent/clip.mp4', '--port', '0');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/file cannot be read: \/nonexistent\/clip.mp4/);
  }, 15_000);

  it('exits 1 with ffmpeg\'s reason, without a URL, when the camera\'s file is no video', async () => {
    // Before, it printed its URL and "playing", then restarted ffmpeg every second until stopped.
    const dir = await mkdtemp(join(tmpdir(), 'hivegate-sim-camera-'));
    try {
      const file = join(dir, 'notes.mp4');
      await writeFile(file, 'shopping list\n'.repeat(50));
      const result = await sim('camera', '--file', file, '--port', '0');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/sim: ffmpeg cannot play .*notes\.mp4: .*Invalid data found/s);
      expect(result.stderr).not.toMatch(/playing|restarting/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
