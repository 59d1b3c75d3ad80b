import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../src/http/errors.ts';
import { BUILD_STAMP, isWebBuildStale } from '../src/web/build.ts';
import { webAppRoutes } from '../src/web/routes.ts';
import { acceptsHtml, contentSecurityPolicy, hasDotSegment, isReservedPath, looksLikeFile } from '../src/web/security-headers.ts';

const INDEX = '<!doctype html><html><head><script type="module" src="/assets/app-abc123.js"></script></head><body><div id="app"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;
/** What Chromium sends when it opens or reloads a page. */
const NAVIGATION = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8' };

function fakeBuild(dir: string) {
  mkdirSync(path.join(dir, 'assets'), { recursive: true });
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(dir, 'assets', 'app-abc123.js'), SCRIPT);
  writeFileSync(path.join(dir, 'assets', 'app-abc123.js.br'), brotliCompressSync(SCRIPT));
  writeFileSync(path.join(dir, BUILD_STAMP), 'built\n');
  writeFileSync(path.join(dir, '.private.json'), '{"secret":true}');
}

/** The plugin as app.ts mounts it, next to stand-ins for routes the server keeps for itself. */
async function serve(distDir: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  installErrorHandling(app, () => undefined);
  app.get('/health', async () => ({ hello: 'world' }));
  app.post('/graphql', async () => ({ data: {} }));
  app.get('/media/:grant/:kind/:id/:file', async () => 'media');
  await app.register(webAppRoutes, { distDir });
  await app.ready();
  return app;
}

describe('web app serving', () => {
  let dir: string;
  let app: FastifyInstance;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'hivegate-web-'));
    fakeBuild(dir);
    app = await serve(dir);
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at / with a strict content security policy and no caching', async () => {
    const response = await app.inject({ url: '/', headers: NAVIGATION });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toBe(INDEX);
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("worker-src 'self' blob:");
    expect(csp).toContain("media-src 'self' blob:");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers.vary).toMatch(/^Accept\b/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it('answers a browser opening an app page (deep link, reload) with index.html, dots in ids included', async () => {
    for (const url of ['/hives/7', '/hives/apiary.3?range=7d', '/boxes/b%201', '/profile', '/sign-in?next=%2Fprofile', '/metricsx', '/no/such/page']) {
      const response = await app.inject({ url, headers: NAVIGATION });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toBe(INDEX);
    }
  });

  it('serves hashed assets for a year, pre-compressed when the client accepts it', async () => {
    const plain = await app.inject({ url: '/assets/app-abc123.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(SCRIPT);
    const compressed = await app.inject({ url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.rawPayload.length).toBeLessThan(SCRIPT.length / 4);
    const favicon = await app.inject({ url: '/favicon.svg' });
    expect(favicon.statusCode).toBe(200);
    expect(favicon.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('gives missing files, dotfiles and escapes a 404 instead of the app', async () => {
    for (const url of ['/assets/gone-1234.js', '/favicon.ico', '/.private.json', '/assets/..%2f..%2fpackage.json', '/../package.json']) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(response.body, url).not.toContain('<!doctype html>');
      expect(response.body, url).not.toContain('secret');
    }
    for (const url of [`/${BUILD_STAMP}`, '/.env', '/.git/config', '/.well-known/x']) {
      const response = await app.inject({ url, headers: NAVIGATION });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toEqual({ error: expect.stringContaining('no route') });
    }
  });

  // Every unknown path answered 200 text/html, so a load balancer checking /healthz stayed green with the database down.
  it('gives what is not a browser opening a page the JSON 404, whatever the path', async () => {
    const notPages: [string, Record<string, string>][] = [
      ['/healthz', {}],
      ['/ready', { accept: '*/*' }],
      ['/hives/7', { accept: 'application/json' }],
      ['/profile', { accept: 'text/html;q=0, */*' }],
      ['/', {}],
    ];
    for (const [url, headers] of notPages) {
      const response = await app.inject({ url, headers });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toEqual({ error: `no route GET ${url}` });
      expect(response.headers.vary, url).toBe('Accept');
    }
    // Files of the build are served to whatever asks for them: a script tag or an image sends no text/html.
    expect((await app.inject({ url: '/favicon.svg', headers: { accept: 'image/avif,image/webp,*/*' } })).statusCode).toBe(200);
  });

  it('never answers the server paths with the app', async () => {
    for (const url of ['/graphql', '/graphql/x', '/api/entrance-live/nothing', '/api/typo', '/iot/v1/nothing', '/entrance/v1/nothing', '/media/x', '/health/x', '/metrics', '/openapi.json', '/API/x']) {
      const response = await app.inject({ url, headers: NAVIGATION });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toEqual({ error: expect.stringContaining('no route') });
    }
    expect((await app.inject({ url: '/health' })).json()).toEqual({ hello: 'world' });
    expect((await app.inject({ url: '/media/g/videos/1/index.m3u8' })).body).toBe('media');
    expect((await app.inject({ method: 'POST', url: '/graphql' })).json()).toEqual({ data: {} });
  });

  it('answers HEAD like GET and other methods with the JSON 404', async () => {
    const head = await app.inject({ method: 'HEAD', url: '/hives/1', headers: NAVIGATION });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toMatch(/^text\/html/);
    expect((await app.inject({ method: 'HEAD', url: '/healthz' })).statusCode).toBe(404);
    const post = await app.inject({ method: 'POST', url: '/hives/1', headers: NAVIGATION, payload: {} });
    expect(post.statusCode).toBe(404);
    expect(post.json()).toEqual({ error: 'no route POST /hives/1' });
  });
});

describe('web app not built', () => {
  it('tells a browser how to build it, gives anything else the JSON 404, and the API paths keep working', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hivegate-web-empty-'));
    const app = await serve(path.join(dir, 'dist'));
    try {
      const response = await app.inject({ url: '/hives/1', headers: NAVIGATION });
      expect(response.statusCode).toBe(503);
      expect(response.body).toContain('pnpm build:web');
      const probe = await app.inject({ url: '/healthz' });
      expect(probe.statusCode).toBe(404);
      expect(probe.json()).toEqual({ error: 'no route GET /healthz' });
      expect((await app.inject({ url: '/api/x', headers: NAVIGATION })).statusCode).toBe(404);
      expect((await app.inject({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('security header and path rules', () => {
  it('allows the public URL origin for media and API calls when one is configured', () => {
    const csp = contentSecurityPolicy({ publicUrl: 'https://hives.example.org/base' });
    expect(csp).toContain("connect-src 'self' https://hives.example.org");
    expect(csp).toContain("media-src 'self' https://hives.example.org blob:");
    expect(contentSecurityPolicy()).toContain("connect-src 'self';");
  });

  it('tells server paths and files from app routes', () => {
    expect(isReservedPath('/graphql')).toBe(true);
    expect(isReservedPath('/openapi.json')).toBe(true);
    expect(isReservedPath('/iot/v1/metrics')).toBe(true);
    expect(isReservedPath('/hives/1')).toBe(false);
    expect(isReservedPath('/')).toBe(false);
    expect(looksLikeFile('/assets/x')).toBe(true);
    expect(looksLikeFile('/robots.txt')).toBe(true);
    expect(looksLikeFile('/hives/apiary.3')).toBe(false);
    expect(looksLikeFile('/boxes/12')).toBe(false);
    expect(hasDotSegment('/.env')).toBe(true);
    expect(hasDotSegment('/hives/apiary.3')).toBe(false);
    expect(acceptsHtml('text/html')).toBe(true);
    expect(acceptsHtml('TEXT/HTML; q=0.5')).toBe(true);
    expect(acceptsHtml('text/html;q=0.0, */*')).toBe(false);
    expect(acceptsHtml('*/*')).toBe(false);
    expect(acceptsHtml(undefined)).toBe(false);
  });
});

describe('build staleness', () => {
  it('is stale without a build, current after one, stale again when a source changes', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'hivegate-web-src-'));
    try {
      mkdirSync(path.join(root, 'src'));
      writeFileSync(path.join(root, 'src', 'main.tsx'), 'export {};');
      writeFileSync(path.join(root, 'index.html'), INDEX);
      const dist = path.join(root, 'dist');
      expect(isWebBuildStale(root, dist, [])).toBe(true);
      fakeBuild(dist);
      const past = new Date(Date.now() - 60_000);
      utimesSync(path.join(root, 'src', 'main.tsx'), past, past);
      utimesSync(path.join(root, 'src'), past, past);
      utimesSync(path.join(root, 'index.html'), past, past);
      utimesSync(root, past, past);
      expect(isWebBuildStale(root, dist, [])).toBe(false);
      // The build's own files and scratch directories do not count as sources.
      writeFileSync(path.join(dist, 'assets', 'late.js'), '');
      mkdirSync(path.join(root, '.dist-tmp-1'));
      utimesSync(root, past, past);
      expect(isWebBuildStale(root, dist, [])).toBe(false);
      // Nor does the root folder's own mtime, which moves when a build is swapped in.
      const future = new Date(Date.now() + 60_000);
      utimesSync(root, future, future);
      expect(isWebBuildStale(root, dist, [])).toBe(false);
      utimesSync(path.join(root, 'src', 'main.tsx'), future, future);
      expect(isWebBuildStale(root, dist, [])).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('counts an extra input (the build recipe, the package manifest) newer than the build', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'hivegate-web-src-'));
    try {
      const dist = path.join(root, 'dist');
      fakeBuild(dist);
      const past = new Date(Date.now() - 60_000);
      utimesSync(root, past, past);
      const recipe = path.join(root, '..', `${path.basename(root)}-recipe.ts`);
      writeFileSync(recipe, '');
      const future = new Date(Date.now() + 60_000);
      utimesSync(recipe, future, future);
      try {
        expect(isWebBuildStale(root, dist, [])).toBe(false);
        expect(isWebBuildStale(root, dist, [recipe])).toBe(true);
      } finally {
        rmSync(recipe, { force: true });
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
