import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  assertBody,
  assertValidKey,
  assertValidPrefix,
  assertValidRange,
  BlobKeyConflictError,
  contentTypeForKey,
  resolveContentType,
  resolveRange,
} from './blob-store.ts';
import type { BlobGetResult, BlobHeadResult, BlobListEntry, BlobPutOptions, BlobStore } from './blob-store.ts';

// Upload leftovers from a crash are removed at start once this old; younger ones may belong to
// another process sharing the directory that is still writing them.
const STALE_TEMP_MS = 24 * 60 * 60 * 1000;
const TEMP_DIR = '.tmp';

interface Sidecar {
  contentType: string;
}

/**
 * Keys map to files under rootDir, so the tree is browsable as-is.
 *
 * put streams into `<root>/.tmp/<uuid>` (same filesystem as every key, so rename is atomic), fsyncs,
 * then renames over the key: readers see the old object, the new one, or nothing, never a partial
 * file. One shared temp folder (instead of one temp file next to each key) lets start() sweep crash
 * leftovers without walking the whole tree.
 *
 * Content type: derived from the key's extension; only when the caller asks for a different type
 * is it stored in a hidden sidecar `.<name>.meta.json`, renamed into place before the data. The
 * project's keys (.m3u8, .ts, .png, .mp4 …) never need a sidecar, so the common path is one file and
 * one rename. Limit: two concurrent puts of the same key with different explicit types may leave one
 * writer's data with the other's type.
 */
export class FileBlobStore implements BlobStore {
  readonly #root: string;
  readonly #tempDir: string;
  #started = false;

  constructor(rootDir: string) {
    if (typeof rootDir !== 'string' || rootDir.length === 0) {
      throw new TypeError('FileBlobStore rootDir must be a non-empty path');
    }
    this.#root = path.resolve(rootDir);
    this.#tempDir = path.join(this.#root, TEMP_DIR);
  }

  async start(): Promise<void> {
    await mkdir(this.#tempDir, { recursive: true });
    const now = Date.now();
    for (const name of await readdir(this.#tempDir)) {
      const file = path.join(this.#tempDir, name);
      const info = await stat(file).catch(() => null);
      if (info && now - info.mtimeMs > STALE_TEMP_MS) await rm(file, { force: true });
    }
    this.#started = true;
  }

  async stop(): Promise<void> {
    this.#started = false;
  }

  async put(key: string, body: Readable | Buffer, opts?: BlobPutOptions): Promise<{ size: number }> {
    this.#assertStarted();
    assertValidKey(key);
    assertBody(body);
    const contentType = resolveContentType(key, opts?.contentType);
    const target = this.#fileOf(key);
    const temp = path.join(this.#tempDir, `${randomUUID()}.part`);
    try {
      if (Buffer.isBuffer(body)) {
        await writeFile(temp, body, { flag: 'wx', flush: true });
      } else {
        await pipeline(body, createWriteStream(temp, { flags: 'wx', flush: true }));
      }
      const { size } = await stat(temp);
      await this.#moveIntoPlace(key, temp, target, contentType);
      return { size };
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: { start: number; end?: number }): Promise<BlobGetResult | null> {
    this.#assertStarted();
    assertValidKey(key);
    if (range !== undefined) assertValidRange(range);
    const file = this.#fileOf(key);
    let handle: FileHandle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      // Size and bytes both come from the opened file, so a concurrent replace cannot mix versions.
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        return null;
      }
      const contentType = await this.#contentTypeOf(key, file);
      if (range === undefined) {
        return { body: handle.createReadStream(), size: info.size, contentType };
      }
      const resolved = resolveRange(key, range, info.size);
      return {
        body: handle.createReadStream({ start: resolved.start, end: resolved.end }),
        size: info.size,
        contentType,
        range: resolved,
      };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async head(key: string): Promise<BlobHeadResult | null> {
    this.#assertStarted();
    assertValidKey(key);
    const file = this.#fileOf(key);
    const info = await stat(file).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (!info?.isFile()) return null;
    return { size: info.size, contentType: await this.#contentTypeOf(key, file), modifiedAt: info.mtime };
  }

  async delete(key: string): Promise<void> {
    this.#assertStarted();
    assertValidKey(key);
    if (await this.#deleteFile(key)) await this.#pruneEmptyDirs([path.dirname(this.#fileOf(key))]);
  }

  async deletePrefix(prefix: string): Promise<number> {
    this.#assertStarted();
    assertValidPrefix(prefix);
    if (prefix === '') throw new RangeError('prefix must not be empty (refusing to delete the whole store)');
    let count = 0;
    const dirs = new Set<string>();
    for await (const { key } of this.list(prefix)) {
      if (await this.#deleteFile(key)) {
        count += 1;
        dirs.add(path.dirname(this.#fileOf(key)));
      }
    }
    await this.#pruneEmptyDirs([...dirs]);
    return count;
  }

  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    this.#assertStarted();
    assertValidPrefix(prefix);
    // Start at the deepest folder the prefix names completely; its last, partial segment filters.
    const folders = prefix.split('/').slice(0, -1);
    const startKey = folders.length > 0 ? `${folders.join('/')}/` : '';
    yield* this.#walk(path.join(this.#root, ...folders), startKey, prefix);
  }

  async *#walk(dir: string, dirKey: string, prefix: string): AsyncGenerator<BlobListEntry> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    // Sorting folders as "name/" gives the same order as sorting the full keys, like S3 lists.
    const visible = entries
      .filter((entry) => !entry.name.startsWith('.'))
      .map((entry) => ({ entry, sortName: entry.isDirectory() ? `${entry.name}/` : entry.name }))
      .sort((a, b) => (a.sortName < b.sortName ? -1 : a.sortName > b.sortName ? 1 : 0));
    for (const { entry } of visible) {
      const key = dirKey + entry.name;
      if (entry.isDirectory()) {
        const childKey = `${key}/`;
        if (childKey.startsWith(prefix) || prefix.startsWith(childKey)) {
          yield* this.#walk(path.join(dir, entry.name), childKey, prefix);
        }
      } else if (entry.isFile() && key.startsWith(prefix)) {
        const info = await stat(path.join(dir, entry.name)).catch(() => null);
        if (info) yield { key, size: info.size, modifiedAt: info.mtime };
      }
    }
  }

  async #moveIntoPlace(key: string, temp: string, target: string, contentType: string): Promise<void> {
    const sidecar = sidecarOf(target);
    const needsSidecar = contentType !== contentTypeForKey(key);
    // A concurrent delete may prune the (then empty) folder between mkdir and rename: try again.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await mkdir(path.dirname(target), { recursive: true });
        if (needsSidecar) {
          const sidecarTemp = path.join(this.#tempDir, `${randomUUID()}.meta`);
          const meta: Sidecar = { contentType };
          await writeFile(sidecarTemp, JSON.stringify(meta), { flag: 'wx' });
          await rename(sidecarTemp, sidecar).catch(async (error: unknown) => {
            await rm(sidecarTemp, { force: true });
            throw error;
          });
        } else {
          await rm(sidecar, { force: true });
        }
        await rename(temp, target);
        return;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOTDIR' || code === 'EEXIST') {
          throw new BlobKeyConflictError(key, 'a parent of this key is already stored as an object');
        }
        if (code === 'EISDIR' || code === 'ENOTEMPTY') {
          throw new BlobKeyConflictError(key, 'other keys already use it as a folder');
        }
        if (code !== 'ENOENT' || attempt >= 5) throw error;
      }
    }
  }

  async #contentTypeOf(key: string, file: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(sidecarOf(file), 'utf8')) as Partial<Sidecar>;
      if (typeof meta.contentType === 'string') return meta.contentType;
    } catch (error) {
      if (!isMissing(error) && !(error instanceof SyntaxError)) throw error;
    }
    return contentTypeForKey(key);
  }

  /** true when a file was removed. */
  async #deleteFile(key: string): Promise<boolean> {
    const file = this.#fileOf(key);
    const info = await lstat(file).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (!info?.isFile()) return false;
    // Sidecar first: a reader never pairs a stale type with a later object under the same key.
    await rm(sidecarOf(file), { force: true });
    try {
      await unlink(file);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** Removes folders left empty, walking up to (never including) the root. */
  async #pruneEmptyDirs(dirs: string[]): Promise<void> {
    const queue = [...dirs].sort((a, b) => b.length - a.length);
    const seen = new Set<string>();
    for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
      if (seen.has(dir) || dir === this.#root || !dir.startsWith(this.#root + path.sep)) continue;
      seen.add(dir);
      try {
        await rmdir(dir);
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') continue;
        throw error;
      }
      queue.push(path.dirname(dir));
      queue.sort((a, b) => b.length - a.length);
    }
  }

  #fileOf(key: string): string {
    const file = path.join(this.#root, ...key.split('/'));
    // Keys are validated already; this guards the mapping itself.
    if (!file.startsWith(this.#root + path.sep)) throw new Error(`key "${key}" maps outside the store`);
    return file;
  }

  #assertStarted(): void {
    if (!this.#started) throw new Error('FileBlobStore is not started: call start() first');
  }
}

function sidecarOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.meta.json`);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}
