import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { createPrivateDir } from './private-files.ts';

export class DataDirInUseError extends Error {}

/**
 * The embedded database lives in files that only one process may open. The lock file holds the owner's pid;
 * a lock left by a process that no longer runs is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  createPrivateDir(dataDir);
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
