import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';

/** The web app's Vite root and where its build lands (served by routes.ts). */
export const WEB_ROOT = fileURLToPath(new URL('../../web/', import.meta.url));
export const WEB_DIST = path.join(WEB_ROOT, 'dist');
/** Written last into a finished build: its mtime says when the build was made. */
export const BUILD_STAMP = '.build-stamp';

const THIS_FILE = fileURLToPath(import.meta.url);
const CLOUD_PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));
const SHARED_AUTH = fileURLToPath(new URL('../../../shared/src/auth.ts', import.meta.url));
/** Entries under the root that are outputs or scratch, not sources. */
const NOT_SOURCES = new Set(['dist', 'node_modules']);
const LOCK_STALE_MS = 5 * 60_000;
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|webmanifest)$/;

/**
 * The newest mtime under `entry`. Directory mtimes count (a deleted source changes its folder's), except the top
 * one's: swapping in a new build renames entries right there.
 */
function newestMtime(entry: string, top = true): number {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = top ? 0 : stat.mtimeMs;
  for (const name of readdirSync(entry)) {
    if (NOT_SOURCES.has(name) || name.startsWith('.')) continue;
    newest = Math.max(newest, newestMtime(path.join(entry, name), false));
  }
  return newest;
}

/**
 * A build is stale when it is missing or older than any of its inputs: the app's sources, the build recipe
 * (this file), the package manifest that pins the bundled libraries, and the shared module the app imports.
 */
export function isWebBuildStale(root = WEB_ROOT, dist = path.join(root, 'dist'), extraInputs: string[] = [THIS_FILE, CLOUD_PACKAGE, SHARED_AUTH]): boolean {
  const stamp = statSync(path.join(dist, BUILD_STAMP), { throwIfNoEntry: false });
  if (!stamp || !existsSync(path.join(dist, 'index.html'))) return true;
  const newestInput = Math.max(newestMtime(root), ...extraInputs.map((input) => newestMtime(input)));
  return newestInput > stamp.mtimeMs;
}

/** Writes .br and .gz next to each text asset so the static server can send them without compressing per request. */
function precompress(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      precompress(file);
      continue;
    }
    if (!COMPRESSIBLE.test(entry.name)) continue;
    const content = readFileSync(file);
    if (content.length < 1024) continue;
    writeFileSync(`${file}.br`, brotliCompressSync(content, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: content.length } }));
    writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }));
  }
}

/** What the build and the development server agree on (no config file: this is the one place). */
export function sharedViteConfig(root: string) {
  return {
    root,
    configFile: false as const,
    envDir: false as const,
    base: '/',
    publicDir: path.join(root, 'public'),
    oxc: { jsx: { runtime: 'automatic' as const, importSource: 'preact' } },
  };
}

export interface WebBuildOptions {
  root?: string;
  dist?: string;
  logLevel?: 'info' | 'warn' | 'error' | 'silent';
}

/**
 * Bundles the app with Vite into a scratch directory and swaps it into place, so a running server never serves a
 * half-written build; one build at a time (a lock directory), as tests and the bundle script may build at once.
 * Vite is loaded only here: serving a finished build does not need it.
 */
export async function buildWebApp(options: WebBuildOptions = {}): Promise<string> {
  const root = options.root ?? WEB_ROOT;
  return withBuildLock(root, () => buildUnlocked({ ...options, root }));
}

async function buildUnlocked(options: WebBuildOptions & { root: string }): Promise<string> {
  const { root } = options;
  const dist = options.dist ?? path.join(root, 'dist');
  // Dot-named siblings: not taken for sources by the staleness check.
  const sibling = (suffix: string) => path.join(path.dirname(dist), `.${path.basename(dist)}-${suffix}-${process.pid}`);
  const scratch = sibling('tmp');
  const { build } = await import('vite');
  rmSync(scratch, { recursive: true, force: true });
  try {
    await build({
      ...sharedViteConfig(root),
      logLevel: options.logLevel ?? 'warn',
      build: {
        outDir: scratch,
        emptyOutDir: true,
        target: 'es2022',
        // No data: URIs, so the content security policy can stay strict.
        assetsInlineLimit: 0,
        sourcemap: true,
        reportCompressedSize: false,
        // hls.js (light build) is one lazily loaded chunk of about 360 kB; everything else is small.
        chunkSizeWarningLimit: 500,
      },
    });
    precompress(scratch);
    writeFileSync(path.join(scratch, BUILD_STAMP), `${new Date().toISOString()}\n`);
    const previous = sibling('old');
    if (existsSync(dist)) renameSync(dist, previous);
    renameSync(scratch, dist);
    rmSync(previous, { recursive: true, force: true });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return dist;
}

async function withBuildLock<T>(root: string, work: () => Promise<T>): Promise<T> {
  const lock = path.join(root, '.build-lock');
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = statSync(lock, { throwIfNoEntry: false });
      // A builder that died leaves its lock behind; no build takes minutes.
      if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds the app unless the build is current; several processes may call this at once (one builds, the rest wait). */
export async function ensureWebBuild(options: WebBuildOptions = {}): Promise<'built' | 'current'> {
  const root = options.root ?? WEB_ROOT;
  const dist = options.dist ?? path.join(root, 'dist');
  if (!isWebBuildStale(root, dist)) return 'current';
  return withBuildLock(root, async () => {
    if (!isWebBuildStale(root, dist)) return 'current';
    await buildUnlocked({ ...options, root, dist });
    return 'built';
  });
}
