import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * Keeps a second agent off an outbox that a running agent owns: two agents on one outbox would send the same records,
 * race over which is sent, and each count the camera's bees again. The lock is SQLite's own file lock on a small file
 * beside the outbox (`<outbox>.lock`), held in exclusive locking mode while the agent runs. The kernel drops it when
 * the process ends in any way, kill -9 and power loss included, so there is never a stale lock to clear by hand (a
 * pid file would outlive a crash, and after a reboot its pid may belong to another program). `status` reads the
 * outbox itself, which the lock does not touch.
 */
export class OutboxLock {
  private db: Database.Database | undefined;

  constructor(private readonly outboxPath: string) {}

  get path(): string {
    return `${this.outboxPath}.lock`;
  }

  start(): void {
    if (this.db || this.outboxPath === ':memory:') return;
    mkdirSync(dirname(this.path), { recursive: true });
    // An empty file is an empty database to SQLite; creating it first needs no room on a full disk but an inode.
    closeSync(openSync(this.path, 'a'));
    // A `status` looking at the lock holds it for a moment: waiting up to a second never refuses a start for that.
    const db = new Database(this.path, { timeout: 1000 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // In exclusive locking mode the lock a transaction takes is kept after it ends, until the connection closes.
      db.exec('BEGIN EXCLUSIVE');
      db.exec('COMMIT');
    } catch (error) {
      db.close();
      if (isHeld(error)) {
        throw new Error(
          `another agent is running on the outbox at ${this.outboxPath}: stop it first (a second one would send its records again and count the same bees), or give this one a stateDir of its own`,
        );
      }
      throw error;
    }
    this.db = db;
  }

  stop(): void {
    this.db?.close();
    this.db = undefined;
  }

  /** Whether an agent (another process, or another lock in this one) holds the lock now; for `status`. */
  heldByAnother(): boolean {
    if (!existsSync(this.path)) return false;
    const probe = new Database(this.path, { timeout: 0, readonly: true });
    try {
      probe.prepare('SELECT count(*) FROM sqlite_master').get();
      return false;
    } catch (error) {
      if (isHeld(error)) return true;
      throw error;
    } finally {
      probe.close();
    }
  }
}

/** SQLite's answer when another connection holds the lock file. */
function isHeld(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith('SQLITE_BUSY');
}
