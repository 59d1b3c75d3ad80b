import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { createPrivateDir } from './private-files.ts';

export class DataDirInUseError extends Error {}

/** DATA_DIR cannot be made or written: says so naming the setting, where the bare EACCES named only a path. */
export class DataDirError extends Error {}

/**
 * Creates DATA_DIR when missing, for this user alone (it holds the database, blobs and uploads), and checks this
 * process may write there.
 */
export function prepareDataDir(dataDir: string): void {
  try {
    createPrivateDir(dataDir);
    accessSync(dataDir, constants.W_OK);
  } catch (err) {
    const { code, syscall, path: at } = err as NodeJS.ErrnoException;
    if (!code) throw err;
    const what = syscall === 'mkdir' ? creationFailure(dataDir, code, at, unwritableAncestor) : `it is not writable (${code})`;
    const user = process.getuid ? ` (uid ${process.getuid()})` : '';
    throw new DataDirError(`DATA_DIR ${dataDir} cannot be used: ${what}; make it a folder this user${user} can write, or set DATA_DIR to one`);
  }
}

/**
 * Why DATA_DIR could not be made. Node's recursive mkdir says ENOENT when the folder it would make it in is on a
 * read-only file system: "could not be created (ENOENT …)" sent operators looking for a missing path.
 */
export function creationFailure(dataDir: string, code: string, at: string | undefined, unwritable: (dir: string) => { dir: string; code: string } | undefined): string {
  const blocked = code === 'ENOENT' ? unwritable(dataDir) : undefined;
  if (blocked) return `it could not be created: ${blocked.dir} is not writable (${blocked.code})`;
  return `it could not be created (${code} at ${at ?? dataDir})`;
}

/** The nearest existing folder above `dir`, when this process may not write in it. */
function unwritableAncestor(dir: string): { dir: string; code: string } | undefined {
  let ancestor = path.dirname(dir);
  while (!existsSync(ancestor) && path.dirname(ancestor) !== ancestor) ancestor = path.dirname(ancestor);
  try {
    accessSync(ancestor, constants.W_OK);
    return undefined;
  } catch (err) {
    return { dir: ancestor, code: (err as NodeJS.ErrnoException).code ?? 'unknown' };
  }
}

/**
 * The embedded database lives in files that only one process may open. The lock file holds the owner's pid;
 * a lock left by a process that no longer runs is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  prepareDataDir(dataDir);
  const lockPath = path.join(dataDir, 'embedded-db.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(lockPath, 'utf8').trim());
      if (owner && owner !== process.pid && isRunning(owner)) {
        throw new DataDirInUseError(
          `the embedded database in ${dataDir} is in use by process ${owner}; stop it first, or set DATABASE_URL to use a Postgres server`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new DataDirInUseError(`could not lock ${lockPath}`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
