import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ENV_VARIABLES } from '../src/config.ts';
import { freePort } from './processes.ts';

const ROOT = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, ROOT), 'utf8');
const run = promisify(execFile);

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'));

  it('wires the cloud to a healthy Postgres with persistent volumes and a restart policy', () => {
    const { cloud, postgres } = compose.services;
    expect(cloud.depends_on.postgres.condition).toBe('service_healthy');
    expect(postgres.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(cloud.environment.DATABASE_URL).toMatch(/@postgres:5432\/hivegate$/);
    expect(cloud.ports).toContain('8600:8600');
    for (const service of [cloud, postgres]) expect(service.restart).toBe('unless-stopped');
    expect(cloud.volumes).toContain('cloud-data:/data');
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['cloud-data', 'postgres-data']));
  });

  it('only sets variables the cloud reads, and the env template names only those too', () => {
    expect(ENV_VARIABLES).toEqual(expect.arrayContaining(Object.keys(compose.services.cloud.environment)));
    const templateNames = read('.env.example')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split('=')[0]!)
      .filter((name) => name !== 'POSTGRES_PASSWORD');
    expect(ENV_VARIABLES).toEqual(expect.arrayContaining(templateNames));
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
