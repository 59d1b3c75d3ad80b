import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Owner-only modes: the data dir holds password hashes and, unless JWT_SECRET is set, the token signing key. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and any missing parents) readable by this user only. A folder that already exists keeps its mode:
 * the operator may have chosen it (a DATA_DIR shared with a backup user, say).
 */
export function createPrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Takes group and other access away from `dir` and everything below it, as Postgres insists for its data directory.
 * The folder's 0700 alone already keeps other users out; the files are tightened too because PGlite's initdb
 * writes them 0666, and a copy of the folder (the documented backup: `cp -a`, tar) keeps those modes wherever it
 * lands. Symbolic links are neither followed nor changed.
 */
export function makeTreePrivate(dir: string): void {
  chmodSync(dir, PRIVATE_DIR_MODE);
  const pending = [dir];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const file = path.join(current, entry.name);
      if (entry.isDirectory()) {
        if (lstatSync(file).mode & 0o077) chmodSync(file, PRIVATE_DIR_MODE);
        pending.push(file);
      } else if (entry.isFile() && lstatSync(file).mode & 0o077) {
        chmodSync(file, PRIVATE_FILE_MODE);
      }
    }
  }
}
