import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ENV_VARIABLES, SHUTDOWN_TIMEOUT_MS } from '../src/config.ts';
import { freePort } from './processes.ts';

const ROOT = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, ROOT), 'utf8');
const run = promisify(execFile);

/** Settings that only docker-compose.yml reads (for its own interpolation), never the cloud. */
const COMPOSE_ONLY_VARIABLES = ['POSTGRES_PASSWORD', 'PUBLISH_ADDRESS'];

/** Compose's `${NAME}` and `${NAME:-default}` interpolation, as `docker compose` does it from .env or the shell. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z_]+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => env[name] || fallback || '');
}

/** Compose's duration strings as this file uses them: `20s`, `1m30s`. */
function seconds(duration: string): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (!match || duration === '') throw new Error(`not a duration: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'));

  it('wires the cloud to a healthy Postgres with persistent volumes and a restart policy', () => {
    const { cloud, postgres } = compose.services;
    expect(cloud.depends_on.postgres.condition).toBe('service_healthy');
    expect(postgres.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(cloud.environment.DATABASE_URL).toMatch(/@postgres:5432\/hivegate$/);
    for (const service of [cloud, postgres]) expect(service.restart).toBe('unless-stopped');
    expect(cloud.volumes).toContain('cloud-data:/data');
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['cloud-data', 'postgres-data']));
  });

  it('only sets variables the cloud reads, and the env template names only those and the file\'s own settings', () => {
    expect(ENV_VARIABLES).toEqual(expect.arrayContaining(Object.keys(compose.services.cloud.environment)));
    const templateNames = read('.env.example')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split('=')[0]!);
    expect([...ENV_VARIABLES, ...COMPOSE_ONLY_VARIABLES]).toEqual(expect.arrayContaining(templateNames));
    for (const name of COMPOSE_ONLY_VARIABLES) expect(read('docker-compose.yml'), name).toContain(`\${${name}`);
  });

  // PORT in the environment section silently overrode a PORT set in .env, and the port was published on every interface.
  it('takes the port from one setting for both the server and the mapping, published on loopback unless told otherwise', () => {
    const { cloud } = compose.services;
    const published = (env: Record<string, string>) => ({ listen: interpolate(cloud.environment.PORT, env), ports: cloud.ports.map((p: string) => interpolate(p, env)) });
    expect(published({})).toEqual({ listen: '8600', ports: ['127.0.0.1:8600:8600'] });
    expect(published({ PORT: '9100' })).toEqual({ listen: '9100', ports: ['127.0.0.1:9100:9100'] });
    expect(published({ PORT: '9100', PUBLISH_ADDRESS: '0.0.0.0' })).toEqual({ listen: '9100', ports: ['0.0.0.0:9100:9100'] });
  });

  // Logs were never rotated, Docker killed the server 10 s into its 15 s drain, and Postgres passed its check while its init server ran.
  it('rotates every container\'s logs, lets the server drain before a kill, and checks Postgres over TCP', () => {
    for (const [name, service] of Object.entries<{ logging?: { driver: string; options: Record<string, string> } }>(compose.services)) {
      expect(service.logging?.driver, name).toBe('json-file');
      expect(service.logging?.options, name).toEqual({ 'max-size': expect.stringMatching(/^\d+m$/), 'max-file': expect.stringMatching(/^\d+$/) });
    }
    expect(seconds(compose.services.cloud.stop_grace_period)).toBeGreaterThan(SHUTDOWN_TIMEOUT_MS / 1000);
    expect(compose.services.postgres.healthcheck.test.join(' ')).toMatch(/pg_isready -h 127\.0\.0\.1 /);
  });

  // The cloud did not wait for minio in the s3 profile; a plain dependency would break `docker compose up` without it.
  it('starts the cloud after minio only when the s3 profile brings minio, which runs a pinned release', () => {
    const { cloud, minio } = compose.services;
    expect(minio.profiles).toEqual(['s3']);
    expect(cloud.profiles).toBeUndefined();
    expect(cloud.depends_on.minio).toEqual({ condition: 'service_started', required: false });
    expect(minio.image).toMatch(/:RELEASE\.\d{4}-\d{2}-\d{2}T/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  it('builds through the bundle script, runs as a non-root user with ffmpeg and a health check', () => {
    expect(dockerfile).toMatch(/RUN bash scripts\/build-cloud-bundle\.sh \/bundle/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/install -y --no-install-recommends ffmpeg/);
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/health/);
    expect(dockerfile).toMatch(/^FROM .* AS build$/m); // multi-stage: the final image has no compilers
  });

  // The bundle was copied owned by node, so the service's own user could rewrite its code.
  it('leaves the code to root and gives the service user only its data folder, 0700', () => {
    const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(final).toMatch(/^COPY --from=build \/bundle \/app$/m);
    expect(final).not.toContain('--chown');
    expect(final).toMatch(/install -d -o node -g node -m 0700 \/data/);
    expect(final.indexOf('USER node')).toBeGreaterThan(final.indexOf('COPY --from=build'));
  });

  // The image installed whatever pnpm 10 was newest, not the one the lockfile was written with.
  it('installs the pnpm that package.json pins', () => {
    const pinned = (JSON.parse(read('package.json')) as { packageManager: string }).packageManager;
    expect(pinned).toMatch(/^pnpm@\d+\.\d+\.\d+$/);
    expect(dockerfile.match(/npm install -g (pnpm@\S+)/g)).toEqual([`npm install -g ${pinned}`]);
  });

  // .env (the database password, JWT_SECRET) was sent to the builder with the rest of the folder.
  it('keeps .env files out of the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['**/.env', '**/.env.*']));
    expect(ignored.filter((line) => line.startsWith('!'))).toEqual([]);
  });
});

describe('the production bundle (the Dockerfile build steps, run on this host)', () => {
  it('builds, starts on the embedded database, answers health and serves the web app', async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'hivegate-bundle-'));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hivegate-bundle-data-'));
    try {
      await run('bash', ['scripts/build-cloud-bundle.sh', out], { cwd: ROOT });
      expect(() => readFileSync(path.join(out, 'test/helper.ts'))).toThrow(); // tests stay out of the image
      const port = await freePort();
      const child = execFile('node', ['--import', 'tsx', 'src/server.ts'], { cwd: out, env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' } });
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      try {
        // A cold start (TypeScript transforms, the embedded database's first boot) is slow on a loaded machine.
        let body: unknown;
        const deadline = Date.now() + 90_000;
        while (body === undefined && Date.now() < deadline && child.exitCode === null) {
          body = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json(), () => undefined);
          if (body === undefined) await new Promise((r) => setTimeout(r, 250));
        }
        expect(body, `the bundle's server said: ${output}`).toEqual({ hello: 'world' });
        // The web app is built into the bundle and served at / with its assets.
        // As a browser asks for a page: anything else gets a 404 for a path that is only the app's.
        const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } });
        expect(page.status).toBe(200);
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        const html = await page.text();
        expect(html).toContain('<div id="app"></div>');
        const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)">/.exec(html)?.[1];
        expect(script).toBeDefined();
        expect((await fetch(`http://127.0.0.1:${port}${script}`)).status).toBe(200);
      } finally {
        child.kill('SIGTERM');
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
