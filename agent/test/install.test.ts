import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOnPath } from '../src/capture/ffmpeg-binary.ts';
import { readConfigFile, resolveConfig } from '../src/config/config.ts';
import { tempDir } from './helpers/media.ts';

// The installer's root-only steps (useradd, systemctl, writing /etc and /opt) cannot run in a test: they are
// checked through --dry-run, which prints every change instead of making it. The unit file is checked by parsing
// and by systemd-analyze; the config template by rendering it and running it through the agent's validator.
const exec = promisify(execFile);
const installDir = join(import.meta.dirname, '..', 'install');
const script = join(installDir, 'install.sh');
const dir = tempDir('install');
afterAll(() => dir.cleanup());

function sh(args: string[], env: NodeJS.ProcessEnv = {}) {
  return exec('bash', [script, ...args], { env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

const places = () => {
  const root = join(dir.path, `root-${Math.random().toString(36).slice(2)}`);
  return { root, args: ['--prefix', join(root, 'opt/hivegate-agent'), '--config-dir', join(root, 'etc/hivegate'), '--unit-dir', join(root, 'systemd'), '--bin-link', join(root, 'bin/hivegate-agent')] };
};

/**
 * A folder holding a `node` that runs `body` (a shell script), and the environment that puts it first on PATH, as
 * /usr/local/bin is before /usr/bin. By default it passes every call on to the node running the tests.
 */
function nodeFirstOnPath(name: string, body = `exec ${JSON.stringify(process.execPath)} "$@"`): { node: string; env: NodeJS.ProcessEnv } {
  const bin = join(dir.path, name);
  mkdirSync(bin, { recursive: true });
  const node = join(bin, 'node');
  writeFileSync(node, `#!/bin/sh\n${body}\n`);
  chmodSync(node, 0o755);
  return { node, env: { PATH: `${bin}:${process.env.PATH ?? ''}` } };
}

/** The plan's change lines (`+ …`), in order. */
const changes = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('+ '));

function indexOf(lines: string[], pattern: RegExp): number {
  const index = lines.findIndex((l) => pattern.test(l));
  if (index < 0) throw new Error(`no step matching ${pattern} in:\n${lines.join('\n')}`);
  return index;
}

describe('install.sh', () => {
  it.skipIf(!findOnPath('shellcheck', process.env.PATH ?? ''))('is shellcheck-clean', async () => {
    const result = await exec('shellcheck', [script, join(installDir, 'pack.sh')]).then(() => 'clean', (e: { stdout: string }) => e.stdout);
    expect(result).toBe('clean');
  });

  it('plans a fresh install in order and changes nothing in a dry run', async () => {
    const { root, args } = places();
    const result = await sh(['--dry-run', '--cloud', 'https://hives.example', '--token', 'abc.def', '--hive', '7', '--box', '3', ...args]);
    expect(result.stderr).not.toMatch(/install\.sh:/);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('dry run - nothing is changed');
    const plan = changes(result.stdout);
    const order = [
      /^\+ (useradd --system --user-group .* hivegate|usermod -a -G video hivegate)/,
      /^\+ bash .*\/pack\.sh --dir /,
      /^\+ cp -a .*hivegate-agent .*opt\/hivegate-agent\.new$/,
      /^\+ \(check that better-sqlite3 loads/,
      /^\+ \/\S*node .*hivegate-agent\.new\/bin\/hivegate-agent\.mjs --help$/,
      /^\+ mv .*hivegate-agent\.new .*opt\/hivegate-agent$/,
      /^\+ install -d -m 0750 -o root -g hivegate .*etc\/hivegate$/,
      /^\+ \(render agent\.yaml\.template .*hive 7, box 3, cloud https:\/\/hives\.example, source rpicam\)$/,
      /^\+ \(write HIVEGATE_TOKEN .*mode 0640 root:hivegate\)$/,
      /^\+ \(write .*systemd\/hivegate-agent\.service/,
      /^\+ systemctl daemon-reload$/,
      /^\+ \/\S*node .*opt\/hivegate-agent\/bin\/hivegate-agent\.mjs check-config --config .*etc\/hivegate\/agent\.yaml/,
      /^\+ systemctl enable hivegate-agent$/,
      /^\+ systemctl restart hivegate-agent$/,
    ].map((pattern) => indexOf(plan, pattern));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(existsSync(root)).toBe(false);
  });

  // The unit ran /usr/bin/node, whichever node the checks had run: Debian's 18 beside a 20 in /usr/local/bin, or 203/EXEC.
  it('has the service run the node it checked, the first on PATH, by its absolute path, and refuses an old one', async () => {
    const { node, env } = nodeFirstOnPath('local-bin');
    const { root, args } = places();
    const result = await sh(['--dry-run', '--cloud', 'https://hives.example', '--token', 'abc', '--hive', '7', '--box', '3', ...args], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`==> node: ${node} (${process.version})`);
    expect(changes(result.stdout)).toEqual(
      expect.arrayContaining([
        `+ ${node} ${root}/opt/hivegate-agent.new/bin/hivegate-agent.mjs --help`,
        `+ (write ${root}/systemd/hivegate-agent.service from hivegate-agent.service: node ${node}, prefix ${root}/opt/hivegate-agent, config ${root}/etc/hivegate)`,
        `+ ${node} ${root}/opt/hivegate-agent/bin/hivegate-agent.mjs check-config --config ${root}/etc/hivegate/agent.yaml --secrets-file ${root}/etc/hivegate/agent.env`,
      ]),
    );
    const unit = join(dir.path, 'local-node.service');
    expect((await sh(['--render-unit', unit, '--prefix', '/opt/hivegate-agent', '--config-dir', '/etc/hivegate'], env)).code).toBe(0);
    expect(readFileSync(unit, 'utf8')).toContain(`\nExecStart=${node} /opt/hivegate-agent/bin/hivegate-agent.mjs run --config /etc/hivegate/agent.yaml --secrets-file /etc/hivegate/agent.env\n`);
    const old = nodeFirstOnPath('old-bin', 'case "$1" in -p) echo 18 ;; --version) echo v18.19.0 ;; esac');
    const refused = await sh(['--render-unit', join(dir.path, 'old-node.service'), '--prefix', '/opt/hivegate-agent'], old.env);
    expect(refused).toMatchObject({ code: 1, stderr: `install.sh: ${old.node} is Node.js v18.19.0, older than 20: put a newer one first on PATH\n` });
    expect(existsSync(join(dir.path, 'old-node.service'))).toBe(false);
  });

  it('installs from a bundle folder when given one, and keeps existing configuration', async () => {
    const { root, args } = places();
    const bundle = join(dir.path, 'fake-bundle');
    await exec('mkdir', ['-p', join(bundle, 'node_modules'), join(root, 'etc/hivegate')]);
    writeFileSync(join(root, 'etc/hivegate/agent.yaml'), 'hiveId: 1\n');
    writeFileSync(join(root, 'etc/hivegate/agent.env'), 'HIVEGATE_TOKEN=x\n');
    const result = await sh(['--dry-run', '--from', bundle, '--token', 'new', ...args]);
    expect(result.code).toBe(0);
    expect(changes(result.stdout).some((l) => l.startsWith(`+ cp -a ${bundle} `))).toBe(true);
    expect(result.stdout).not.toContain('pack.sh');
    expect(result.stdout).toMatch(/keeping .*agent\.yaml/);
    expect(result.stderr).toContain('--token ignored');
    expect(result.stdout).not.toContain('(render agent.yaml.template');
  });

  it('plans an upgrade without touching the user or the configuration', async () => {
    const { args } = places();
    const result = await sh(['--dry-run', '--upgrade', ...args]);
    expect(result.code).toBe(0);
    const plan = changes(result.stdout);
    expect(plan.some((l) => /useradd|usermod|agent\.yaml\.template|HIVEGATE_TOKEN/.test(l))).toBe(false);
    expect(indexOf(plan, /^\+ mv .*\.new /)).toBeLessThan(indexOf(plan, /^\+ systemctl restart hivegate-agent$/));
  });

  it('plans an uninstall that keeps data unless purged', async () => {
    const { root, args } = places();
    await exec('mkdir', ['-p', join(root, 'systemd')]);
    writeFileSync(join(root, 'systemd/hivegate-agent.service'), '[Unit]\n');
    const kept = await sh(['--dry-run', '--uninstall', ...args]);
    expect(kept.code).toBe(0);
    expect(changes(kept.stdout)).toEqual(expect.arrayContaining(['+ systemctl disable --now hivegate-agent', expect.stringMatching(/^\+ rm -rf .*opt\/hivegate-agent /)]));
    expect(kept.stdout).toContain('--purge removes them');
    const purged = await sh(['--dry-run', '--uninstall', '--purge', ...args]);
    expect(changes(purged.stdout)).toContainEqual(expect.stringMatching(/^\+ rm -rf .*etc\/hivegate \/var\/lib\/hivegate-agent$/));
    expect(existsSync(join(root, 'systemd/hivegate-agent.service'))).toBe(true);
  });

  // --help printed a fixed range of the script's lines, whose last was `set -euo pipefail`.
  it('--help prints the comment block at the top and no line of code', async () => {
    const help = await sh(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Installs the HiveGate entrance observer agent /);
    expect(help.stdout).toContain('./install.sh --render-unit FILE');
    expect(help.stdout).toMatch(/native modules built for another CPU are rebuilt from source\.\n$/);
  });

  it('refuses bad input with a clear line', async () => {
    expect(await sh(['--dry-run', '--bogus'])).toMatchObject({ code: 1, stderr: 'install.sh: unknown option --bogus (see --help)\n' });
    expect((await sh(['--dry-run', '--token', 'a b', '--hive', '1'])).stderr).toContain('--token holds characters an API token does not have');
    expect((await sh(['--render-config', join(dir.path, 'x.yaml'), '--hive', '1', '--box', '2'])).stderr).toContain('--cloud is required');
  });
});

describe('config template', () => {
  it('renders into a config the agent accepts, quoting what it is given', async () => {
    const out = join(dir.path, 'agent.yaml');
    const result = await sh(['--render-config', out, '--cloud', 'https://hives.example', '--hive', '7', '--box', 'box "north" \\ 3 & co', '--source', '/dev/video0', '--config-dir', '/etc/hivegate']);
    expect(result.code).toBe(0);
    const config = resolveConfig({ file: readConfigFile(out), env: { HIVEGATE_TOKEN: 'from-env' } });
    expect(config).toMatchObject({
      hiveId: '7', boxId: 'box "north" \\ 3 & co', source: { url: '/dev/video0', pixelFormat: 'rgb24' }, detector: { kind: 'onnx' }, cloud: { url: 'https://hives.example', token: 'from-env' },
      live: { enabled: true }, stateDir: '/var/lib/hivegate-agent',
    });
    expect(readFileSync(out, 'utf8')).not.toMatch(/@[A-Z_]+@/);
    // The same check the installer runs before it starts the service.
    const check = await exec(process.execPath, [join(import.meta.dirname, '..', 'bin', 'hivegate-agent.mjs'), 'check-config', '--config', out], { env: { ...process.env, HIVEGATE_TOKEN: 't' } });
    expect(check.stdout).toContain('identity:      hive 7, box box "north" \\ 3 & co');
  });
});

describe('hivegate-agent.service', () => {
  const rendered = join(dir.path, 'hivegate-agent.service');
  const { node, env } = nodeFirstOnPath('unit-bin');
  let text = '';
  beforeAll(async () => {
    const result = await sh(['--render-unit', rendered, '--prefix', '/opt/hivegate-agent', '--config-dir', '/etc/hivegate'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    text = readFileSync(rendered, 'utf8');
  });

  function parseUnit(source: string): Record<string, Record<string, string[]>> {
    const sections: Record<string, Record<string, string[]>> = {};
    let current: Record<string, string[]> | undefined;
    for (const raw of source.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const section = /^\[(\w+)\]$/.exec(line);
      if (section) {
        current = sections[section[1]!] = {};
        continue;
      }
      const eq = line.indexOf('=');
      if (!current || eq < 0) throw new Error(`unit line outside a section or without =: ${line}`);
      (current[line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
    }
    return sections;
  }

  it('runs the agent unprivileged, in the camera groups, restarted on failure, logging to journald, hardened', () => {
    const unit = parseUnit(text);
    const service = unit.Service!;
    const one = (key: string) => {
      expect(service[key], key).toHaveLength(1);
      return service[key]![0]!;
    };
    expect(one('User')).toBe('hivegate');
    expect(one('SupplementaryGroups').split(' ')).toContain('video');
    // The agent reads agent.env itself: through EnvironmentFile, which systemd reads only at start, a token fixed in
    // it never reached `systemctl reload`.
    expect(one('ExecStart')).toBe(`${node} /opt/hivegate-agent/bin/hivegate-agent.mjs run --config /etc/hivegate/agent.yaml --secrets-file /etc/hivegate/agent.env`);
    expect(one('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(one('Restart')).toBe('on-failure');
    expect(one('StateDirectory')).toBe('hivegate-agent');
    expect(service.EnvironmentFile).toBeUndefined();
    expect(one('StandardOutput')).toBe('journal');
    expect(one('StandardError')).toBe('journal');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('CapabilityBoundingSet')).toBe('');
    // The camera devices must stay visible and V8 must keep its JIT.
    expect(service.PrivateDevices).toBeUndefined();
    expect(service.MemoryDenyWriteExecute).toBeUndefined();
    expect(unit.Install!.WantedBy).toEqual(['multi-user.target']);
    expect(Number(one('TimeoutStopSec'))).toBeGreaterThan(30); // the agent flushes for up to 5 s on SIGTERM, a live stream ends after
    // The default KillMode sent SIGTERM to ffmpeg as well, and every stop logged the camera as lost.
    expect(one('KillMode')).toBe('mixed');
  });

  it.skipIf(!findOnPath('systemd-analyze', process.env.PATH ?? ''))('passes systemd-analyze verify and rates as well hardened', async () => {
    const verify = await exec('systemd-analyze', ['verify', rendered]);
    expect(verify.stderr).toBe('');
    // Exposure on systemd's 0–100 scale (shown as 0.0–10.0): at most 4.0 ("OK").
    await expect(exec('systemd-analyze', ['security', '--offline=yes', '--threshold=40', rendered])).resolves.toBeDefined();
  });
});

describe('pack.sh', () => {
  it('builds a bundle that runs from its own folder, with arm64 binaries and without foreign ones', async () => {
    const bundle = join(dir.path, 'bundle', 'hivegate-agent');
    await exec('bash', [join(installDir, 'pack.sh'), '--dir', bundle]);
    const help = await exec(process.execPath, [join(bundle, 'bin', 'hivegate-agent.mjs'), '--help']);
    expect(help.stdout).toContain('hivegate-agent check-config --config FILE');
    expect(existsSync(join(bundle, 'install', 'install.sh'))).toBe(true);
    expect(existsSync(join(bundle, '.hivegate-agent-bundle'))).toBe(true); // what lets a later --dir replace it
    // The bundle lacked the bee model the config template selects, so a fresh install could not start.
    for (const model of ['bee-centernet.onnx', 'bee-centernet-int8.onnx', 'bee-centernet-slot-int8.onnx']) expect(existsSync(join(bundle, 'models', model))).toBe(true);
    expect(existsSync(join(bundle, 'test'))).toBe(false);
    const store = readdirSync(join(bundle, 'node_modules', '.pnpm'));
    expect(store).toEqual(expect.arrayContaining([expect.stringMatching(/^@esbuild\+linux-arm64@/), expect.stringMatching(/^@esbuild\+linux-x64@/)]));
    const onnx = store.find((name) => name.startsWith('onnxruntime-node@'))!;
    const platforms = readdirSync(join(bundle, 'node_modules', '.pnpm', onnx, 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6'));
    expect(platforms).toEqual(['linux']);
    // The bundle's own copy of the installer finds the bundle it sits in (no workspace build).
    const plan = await exec('bash', [join(bundle, 'install', 'install.sh'), '--dry-run', '--upgrade', '--prefix', join(dir.path, 'nowhere')]);
    expect(plan.stdout).toContain(`+ cp -a ${bundle} `);
  }, 120_000);

  // `--dir /opt` or `--dir .` began with rm -rf of that folder.
  it('refuses a --dir that exists and is not a bundle it made, and leaves it as it was', async () => {
    const folder = join(dir.path, 'precious');
    mkdirSync(join(folder, 'photos'), { recursive: true });
    writeFileSync(join(folder, 'photos', 'hive.jpg'), 'bees');
    const pack = (target: string) =>
      exec('bash', [join(installDir, 'pack.sh'), '--dir', target]).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
    const refused = await pack(folder);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`pack.sh: --dir ${folder} exists and is not a bundle pack.sh made (it has no .hivegate-agent-bundle): nothing was changed; name a new folder, or empty this one first\n`);
    expect(readFileSync(join(folder, 'photos', 'hive.jpg'), 'utf8')).toBe('bees');
    const file = join(dir.path, 'notes.txt');
    writeFileSync(file, 'keep');
    expect((await pack(file)).code).toBe(2);
    expect(readFileSync(file, 'utf8')).toBe('keep');
  });
});
