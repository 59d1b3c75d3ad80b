import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';

export type RecordKind = 'metrics' | 'movement' | 'trajectories';
export const RECORD_KINDS: readonly RecordKind[] = ['metrics', 'movement', 'trajectories'];

export interface OutboxOptions {
  /** SQLite file; its directory is created. `:memory:` works for tests that need no durability. */
  path: string;
  /** Most records kept waiting (pending + quarantined); beyond it trajectory batches are evicted first, oldest first (see `evict`). */
  maxRecords?: number;
  /** Most payload bytes kept waiting. */
  maxBytes?: number;
  /** Records older than this are evicted unsent (the cloud no longer wants week-old minute counts). */
  maxAgeSeconds?: number;
  /** How long the identity of a sent record is remembered so re-enqueueing it stays a no-op. */
  sentRetentionSeconds?: number;
  /** Most records held in memory while the disk is full (see `enqueueMany`); beyond it trajectory batches go first, then the oldest. */
  maxHeldRecords?: number;
  /** Most payload bytes held in memory while the disk is full. */
  maxHeldBytes?: number;
  /** Where the outbox says that the disk filled up, had room again, or that records were lost to it. */
  log?: (line: string) => void;
  now?: () => number;
}

export interface OutboxRecord {
  /** Negative for a record held in memory while the disk is full. */
  id: number;
  kind: RecordKind;
  dedupeKey: string;
  payload: unknown;
  createdAt: number;
  attempts: number;
}

export interface OutboxStats {
  /** Records waiting to be sent, per kind, those held in memory included. */
  pending: Record<RecordKind, number>;
  /** Of the pending records, those held in memory because the disk is full (0 when all is written). */
  held: number;
  quarantined: number;
  pendingBytes: number;
  oldestPendingAt: number | null;
  /** Records evicted unsent, per kind, since the database was created (and those dropped while the disk was full). */
  dropped: Record<RecordKind, number>;
}

interface Row {
  id: number;
  kind: RecordKind;
  dedupe_key: string;
  payload: string;
  created_at: number;
  attempts: number;
}

interface HeldRecord {
  id: number;
  kind: RecordKind;
  dedupeKey: string;
  payload: unknown;
  bytes: number;
  createdAt: number;
}

/** The kind evicted first when the outbox is over its bounds: the bulkiest, and the one least missed. */
const EVICTED_FIRST: RecordKind = 'trajectories';

type Identity = { kind: RecordKind; dedupeKey: string };
/** `createdAt` is given for a held record written late: its age, for the age bound, counts from when it was made. */
type NewRecord = Identity & { payload: unknown; createdAt?: number };

/**
 * SQLite's answer when a write finds no room: the disk (an SD card filled by logs, say) or the database's page limit.
 * Reads still work then, and a write may succeed again once something has freed space.
 */
export function isStorageFull(error: unknown): boolean {
  if (error instanceof Database.SqliteError) return error.code === 'SQLITE_FULL';
  // A file beside the database (a `saveGuarded` marker) finds no room either.
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** The identity the cloud dedupes on, so the same record queued twice is stored once. */
export function identityOf(kind: RecordKind, payload: Record<string, unknown>): string {
  switch (kind) {
    case 'metrics':
      if (typeof payload.dedupeKey === 'string') return payload.dedupeKey;
      return `sha256:${createHash('sha256').update(JSON.stringify(payload)).digest('hex').slice(0, 32)}`;
    case 'movement':
      if (payload.timestamp === undefined) throw new Error('a movement record needs a timestamp to be queued (it is its identity)');
      return `${String(payload.hiveId)}|${String(payload.boxId)}|${String(payload.timestamp)}`;
    case 'trajectories':
      if (typeof payload.batchId !== 'string') throw new Error('a trajectory batch needs a batchId to be queued');
      return payload.batchId;
  }
}

/**
 * Durable queue of everything the agent must deliver. A record is written here before any attempt to send it;
 * a unique index on (kind, identity) makes a re-enqueue a no-op, even after it was sent.
 *
 * When the disk is full, new records are held in memory instead (bounded too, trajectory batches dropped first, every drop
 * counted) and offered
 * to the uplink like the written ones, so counting goes on and counts still reach the cloud; each later enqueue
 * first tries to write them. Only what is held when the agent stops on a disk that is still full is lost, and the
 * log says how much.
 */
export class Outbox {
  private db: Database.Database | undefined;
  private readonly maxRecords: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly sentRetentionMs: number;
  private readonly now: () => number;
  private insertMany: ((items: NewRecord[]) => Record<RecordKind, number>) | undefined;
  private readonly maxHeldRecords: number;
  private readonly maxHeldBytes: number;
  /** Records that could not be written because the disk is full, oldest first. */
  private held: HeldRecord[] = [];
  private heldBytes = 0;
  private nextHeldId = -1;
  /**
   * Identities of held records the cloud already has (the newest, as many as records may be held): written as sent
   * once there is room, so a re-enqueue stays a no-op.
   */
  private sentWhileFull: Identity[] = [];
  /** Held records dropped beyond the bounds, or quarantined, not yet added to the database's counters. */
  private heldCounts = new Map<string, number>();
  /** The records held in memory that the last stop could not write (the disk still full): lost. */
  lostAtStop: Record<RecordKind, number> = noneOfEach();
  /** Whether the last write found the disk full (said once each way: `enqueueMany`, `noteRoom`). */
  private diskFull = false;
  /** The guard markers of an in-memory outbox, which has no folder to keep them in (`saveGuarded`). */
  private readonly memoryGuards = new Set<string>();

  constructor(private readonly options: OutboxOptions) {
    this.maxRecords = options.maxRecords ?? 200_000;
    this.maxBytes = options.maxBytes ?? 100 * 1024 * 1024;
    this.maxAgeMs = (options.maxAgeSeconds ?? 30 * 24 * 3600) * 1000;
    this.sentRetentionMs = (options.sentRetentionSeconds ?? 7 * 24 * 3600) * 1000;
    this.maxHeldRecords = options.maxHeldRecords ?? 10_000;
    this.maxHeldBytes = options.maxHeldBytes ?? 16 * 1024 * 1024;
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.db) return;
    if (this.options.path !== ':memory:') mkdirSync(dirname(this.options.path), { recursive: true });
    let db: Database.Database | undefined;
    try {
      db = this.open();
      // FULL, not NORMAL: in WAL mode NORMAL skips the fsync at commit, so a power cut (the usual way a Pi in a
      // field loses power) can undo commits that were already reported as stored. The outbox exists to survive
      // exactly that, and it commits a few times a minute, so the extra fsync per commit costs nothing that matters.
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      createSchema(db);
    } catch (error) {
      db?.close();
      // Records are held in memory only beside a database; on a first start without room there is none to fall back on.
      if (isStorageFull(error)) throw new Error(`no room on the disk to create the outbox at ${this.options.path}: free some space there and start again`);
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_NOTADB') {
        throw new Error(`the outbox at ${this.options.path} is not a SQLite database (overwritten or damaged): move it aside and start again`);
      }
      throw error;
    }
    this.db = db;
    const insert = db.prepare(
      `INSERT INTO outbox (kind, dedupe_key, payload, bytes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (kind, dedupe_key) DO NOTHING`,
    );
    this.insertMany = db.transaction((items: NewRecord[]) => {
      const now = this.now();
      const inserted = noneOfEach();
      for (const item of items) {
        const json = JSON.stringify(item.payload);
        inserted[item.kind] += insert.run(item.kind, item.dedupeKey, json, Buffer.byteLength(json), item.createdAt ?? now, now).changes;
      }
      if (total(inserted) > 0) this.evict(now);
      return inserted;
    });
  }

  /**
   * Opens the database in WAL mode. On a full disk SQLite cannot size the shared-memory index it keeps in a file
   * beside the database, and a restarted agent would never get going; exclusive locking keeps that index in this
   * process's memory instead. The price: `status` from another process cannot read the outbox until a restart with
   * room.
   */
  private open(): Database.Database {
    const db = new Database(this.options.path);
    try {
      db.pragma('journal_mode = WAL');
      return db;
    } catch (error) {
      db.close();
      if (!(isStorageFull(error) || (error instanceof Database.SqliteError && error.code === 'SQLITE_IOERR_SHMSIZE'))) throw error;
    }
    const alone = new Database(this.options.path);
    try {
      alone.pragma('locking_mode = EXCLUSIVE');
      alone.pragma('journal_mode = WAL');
    } catch (error) {
      alone.close();
      throw error;
    }
    this.options.log?.('outbox: the disk is full; the outbox is open to this process alone (`status` cannot read it until a restart with room)');
    return alone;
  }

  stop(): void {
    if (this.db) this.writeHeld();
    for (const h of this.held) this.lostAtStop[h.kind]++;
    if (this.held.length > 0) this.options.log?.(`outbox: ${this.held.length} records held in memory are lost: the disk is still full`);
    this.held = [];
    this.heldBytes = 0;
    this.db?.close();
    this.db = undefined;
  }

  private get database(): Database.Database {
    if (!this.db) throw new Error('outbox is not started');
    return this.db;
  }

  /** Stores a record unless one with the same identity is already known; true when it was new. */
  enqueue(kind: RecordKind, dedupeKey: string, payload: unknown): boolean {
    return this.enqueueMany([{ kind, dedupeKey, payload }]) === 1;
  }

  /**
   * Stores several records in one transaction; returns how many were new. On a full disk they are held in memory
   * (see the class) and this returns how many of them were new there.
   */
  enqueueMany(items: NewRecord[]): number {
    return total(this.enqueueEach(items));
  }

  /** As `enqueueMany`, with how many were new per kind (the rest were known already: queued, or sent). */
  enqueueEach(items: NewRecord[]): Record<RecordKind, number> {
    if (!this.db || !this.insertMany) throw new Error('outbox is not started');
    // Checked here for every path: written now, held, or written later from what was held.
    for (const item of items) if (!RECORD_KINDS.includes(item.kind)) throw new Error(`unknown record kind ${String(item.kind)}`);
    this.writeHeld();
    if (this.held.length === 0) {
      try {
        const inserted = this.insertMany(items);
        this.noteRoom(0);
        return inserted;
      } catch (error) {
        if (!isStorageFull(error)) throw error;
        if (!this.diskFull) this.options.log?.(`outbox: the disk is full (${(error as Error).message}); holding new records in memory (at most ${this.maxHeldRecords}) and sending them from there`);
        this.diskFull = true;
      }
    }
    return this.hold(items);
  }

  /** Keeps records that could not be written, unless known already; the oldest go beyond the bounds. */
  private hold(items: NewRecord[]): Record<RecordKind, number> {
    const known = this.database.prepare(`SELECT 1 FROM outbox WHERE kind = ? AND dedupe_key = ?`);
    const same = (item: Identity) => (other: Identity) => other.kind === item.kind && other.dedupeKey === item.dedupeKey;
    const added = noneOfEach();
    for (const item of items) {
      if (known.get(item.kind, item.dedupeKey) || this.held.some(same(item)) || this.sentWhileFull.some(same(item))) continue;
      const bytes = Buffer.byteLength(JSON.stringify(item.payload));
      this.held.push({ id: this.nextHeldId--, kind: item.kind, dedupeKey: item.dedupeKey, payload: item.payload, bytes, createdAt: this.now() });
      this.heldBytes += bytes;
      added[item.kind]++;
    }
    while (this.held.length > this.maxHeldRecords || this.heldBytes > this.maxHeldBytes) {
      // As on disk (`evict`): trajectory batches go first.
      const bulky = this.held.findIndex((h) => h.kind === EVICTED_FIRST);
      const [dropped] = this.held.splice(bulky >= 0 ? bulky : 0, 1) as [HeldRecord];
      this.heldBytes -= dropped.bytes;
      this.countHeld(`dropped_${dropped.kind}`);
    }
    return added;
  }

  /** Writes the held records (and the identities sent from memory) once the disk has room again. */
  private writeHeld(): void {
    if (this.held.length === 0 && this.sentWhileFull.length === 0 && this.heldCounts.size === 0) return;
    const db = this.database;
    const written = this.held.length;
    try {
      db.transaction(() => {
        this.insertMany!(this.held);
        const now = this.now();
        const sent = db.prepare(
          `INSERT INTO outbox (kind, dedupe_key, payload, bytes, state, created_at, updated_at) VALUES (?, ?, '', 0, 'sent', ?, ?) ON CONFLICT (kind, dedupe_key) DO NOTHING`,
        );
        for (const item of this.sentWhileFull) sent.run(item.kind, item.dedupeKey, now, now);
        for (const [name, n] of this.heldCounts) this.bump(name, n);
      })();
    } catch (error) {
      if (isStorageFull(error)) return;
      throw error;
    }
    // Identities alone are tiny rows that fit where a record does not: only records written show room.
    if (written > 0) this.noteRoom(written);
    this.held = [];
    this.heldBytes = 0;
    this.sentWhileFull = [];
    this.heldCounts.clear();
  }

  /**
   * Says once that a full disk has room again. Keyed to the disk, not to what is held: with the held records sent
   * (the cloud up), the next record found the disk full again and said so anew, and the room was never announced.
   */
  private noteRoom(written: number): void {
    if (this.diskFull) this.options.log?.(`outbox: the disk has room again${written > 0 ? `; ${written} records held in memory are written` : ''}`);
    this.diskFull = false;
  }

  private countHeld(name: string): void {
    this.heldCounts.set(name, (this.heldCounts.get(name) ?? 0) + 1);
  }

  /** How many records are held in memory because the disk is full (0 when all is written). */
  get heldRecords(): number {
    return this.held.length;
  }

  /** Oldest pending records of a kind: the written ones, then those held in memory. */
  pending(kind: RecordKind, limit: number): OutboxRecord[] {
    const rows = this.database
      .prepare(`SELECT id, kind, dedupe_key, payload, created_at, attempts FROM outbox WHERE state = 'pending' AND kind = ? ORDER BY id LIMIT ?`)
      .all(kind, limit) as Row[];
    const written: OutboxRecord[] = rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      dedupeKey: row.dedupe_key,
      payload: JSON.parse(row.payload) as unknown,
      createdAt: row.created_at,
      attempts: row.attempts,
    }));
    if (written.length >= limit) return written;
    const held = this.held.filter((h) => h.kind === kind).slice(0, limit - written.length);
    return [...written, ...held.map((h) => ({ id: h.id, kind: h.kind, dedupeKey: h.dedupeKey, payload: h.payload, createdAt: h.createdAt, attempts: 0 }))];
  }

  /** The cloud has them: forget the payloads, keep the identities for a while. */
  markSent(ids: readonly number[]): void {
    const heldIds = new Set(ids.filter((id) => id < 0));
    if (heldIds.size > 0) {
      for (const h of this.held) if (heldIds.has(h.id)) this.sentWhileFull.push({ kind: h.kind, dedupeKey: h.dedupeKey });
      if (this.sentWhileFull.length > this.maxHeldRecords) this.sentWhileFull.splice(0, this.sentWhileFull.length - this.maxHeldRecords);
      this.releaseHeld(heldIds);
      ids = ids.filter((id) => id > 0);
    }
    if (ids.length === 0) return;
    const db = this.database;
    const mark = db.prepare(`UPDATE outbox SET state = 'sent', payload = '', bytes = 0, updated_at = ? WHERE id = ? AND state = 'pending'`);
    db.transaction(() => {
      const now = this.now();
      for (const id of ids) mark.run(now, id);
      db.prepare(`DELETE FROM outbox WHERE state = 'sent' AND updated_at < ?`).run(now - this.sentRetentionMs);
    })();
  }

  /** The cloud rejected this one record for good: park it where it blocks nothing. */
  quarantine(id: number, reason: string): void {
    if (id < 0) {
      // Held in memory, it has nowhere to be parked: it is let go and counted.
      this.releaseHeld(new Set([id]));
      this.countHeld('quarantined_total');
      this.options.log?.(`outbox: a record held in memory was refused for good and is dropped: ${reason.slice(0, 200)}`);
      return;
    }
    this.database.prepare(`UPDATE outbox SET state = 'quarantined', last_error = ?, updated_at = ? WHERE id = ?`).run(reason.slice(0, 2000), this.now(), id);
    this.bump('quarantined_total', 1);
  }

  /** Notes a failed delivery attempt (for status and diagnosis). */
  recordAttempt(ids: readonly number[], error: string): void {
    ids = ids.filter((id) => id > 0); // held records keep no attempt count
    if (ids.length === 0) return;
    const db = this.database;
    const update = db.prepare(`UPDATE outbox SET attempts = attempts + 1, last_error = ?, updated_at = ? WHERE id = ?`);
    db.transaction(() => {
      const now = this.now();
      for (const id of ids) update.run(error.slice(0, 2000), now, id);
    })();
  }

  quarantined(): { id: number; kind: RecordKind; dedupeKey: string; payload: unknown; error: string | null }[] {
    const rows = this.database
      .prepare(`SELECT id, kind, dedupe_key, payload, last_error FROM outbox WHERE state = 'quarantined' ORDER BY id`)
      .all() as (Row & { last_error: string | null })[];
    return rows.map((r) => ({ id: r.id, kind: r.kind, dedupeKey: r.dedupe_key, payload: JSON.parse(r.payload) as unknown, error: r.last_error }));
  }

  stats(): OutboxStats {
    const db = this.database;
    const pending = { metrics: 0, movement: 0, trajectories: 0 } as Record<RecordKind, number>;
    for (const row of db.prepare(`SELECT kind, COUNT(*) AS n FROM outbox WHERE state = 'pending' GROUP BY kind`).all() as { kind: RecordKind; n: number }[]) {
      pending[row.kind] = row.n;
    }
    const totals = db
      .prepare(`SELECT COALESCE(SUM(bytes), 0) AS bytes, MIN(created_at) AS oldest FROM outbox WHERE state = 'pending'`)
      .get() as { bytes: number; oldest: number | null };
    const quarantined = (db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE state = 'quarantined'`).get() as { n: number }).n;
    const dropped = { metrics: 0, movement: 0, trajectories: 0 } as Record<RecordKind, number>;
    for (const kind of RECORD_KINDS) dropped[kind] = this.counter(`dropped_${kind}`) + (this.heldCounts.get(`dropped_${kind}`) ?? 0);
    for (const h of this.held) pending[h.kind]++;
    const oldestHeld = this.held[0]?.createdAt ?? null;
    const oldest = totals.oldest === null ? oldestHeld : oldestHeld === null ? totals.oldest : Math.min(totals.oldest, oldestHeld);
    return { pending, held: this.held.length, quarantined, pendingBytes: totals.bytes + this.heldBytes, oldestPendingAt: oldest, dropped };
  }

  private releaseHeld(ids: ReadonlySet<number>): void {
    this.held = this.held.filter((h) => {
      if (!ids.has(h.id)) return true;
      this.heldBytes -= h.bytes;
      return false;
    });
  }

  setState(key: string, value: unknown): void {
    this.database
      .prepare(`INSERT INTO agent_state (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`)
      .run(key, JSON.stringify(value), this.now());
  }

  /**
   * Saves `value` under `key` so that it counts only while a marker file named after this save exists beside the
   * database. A save that cannot be written (a full disk) would otherwise leave the one before it looking current;
   * `discardGuarded` removes that one's marker, and removing a file works on a full disk, where no write to the
   * database does. Throws what the write threw; the save before stays as it was.
   */
  saveGuarded(key: string, value: unknown): void {
    const before = this.guardOf(key);
    const guard = randomBytes(6).toString('hex');
    this.createGuard(key, guard);
    try {
      this.setState(key, { guard, value });
    } catch (error) {
      this.removeGuard(key, guard);
      throw error;
    }
    if (before !== undefined) this.removeGuard(key, before);
  }

  /** What `saveGuarded` saved under `key`: `stale` when its marker is gone (a later save failed and discarded it). */
  readGuarded<T>(key: string): { value: T } | { stale: true } | undefined {
    const saved = this.getState<unknown>(key);
    if (saved === undefined) return undefined;
    // Saved by an agent from before guards: taken as it is.
    if (!isGuarded(saved)) return { value: saved as T };
    return this.hasGuard(key, saved.guard) ? { value: saved.value as T } : { stale: true };
  }

  /** Makes what is saved under `key` count no more, without writing to the database (see `saveGuarded`). */
  discardGuarded(key: string): void {
    const guard = this.guardOf(key);
    if (guard !== undefined) this.removeGuard(key, guard);
  }

  private guardOf(key: string): string | undefined {
    const saved = this.getState<unknown>(key);
    return isGuarded(saved) ? saved.guard : undefined;
  }

  private guardPath(key: string, guard: string): string {
    return `${this.options.path}.${key}-${guard}`;
  }

  private createGuard(key: string, guard: string): void {
    if (this.options.path === ':memory:') {
      this.memoryGuards.add(`${key}-${guard}`);
      return;
    }
    closeSync(openSync(this.guardPath(key, guard), 'wx'));
  }

  private hasGuard(key: string, guard: string): boolean {
    return this.options.path === ':memory:' ? this.memoryGuards.has(`${key}-${guard}`) : existsSync(this.guardPath(key, guard));
  }

  private removeGuard(key: string, guard: string): void {
    if (this.options.path === ':memory:') {
      this.memoryGuards.delete(`${key}-${guard}`);
      return;
    }
    try {
      unlinkSync(this.guardPath(key, guard));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    // Markers a killed agent left between creating one and removing the one before.
    const current = this.guardOf(key);
    const prefix = `${basename(this.options.path)}.${key}-`;
    for (const name of readdirSync(dirname(this.options.path))) {
      if (name.startsWith(prefix) && name !== `${prefix}${current}`) {
        try {
          unlinkSync(join(dirname(this.options.path), name));
        } catch {
          // gone already, or not ours to remove: it counts for nothing either way
        }
      }
    }
  }

  getState<T>(key: string): T | undefined {
    const row = this.database.prepare(`SELECT value FROM agent_state WHERE key = ?`).get(key) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  counter(name: string): number {
    const row = this.database.prepare(`SELECT value FROM counters WHERE name = ?`).get(name) as { value: number } | undefined;
    return row?.value ?? 0;
  }

  private bump(name: string, by: number): void {
    this.database
      .prepare(`INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = value + excluded.value`)
      .run(name, by);
  }

  /**
   * Evicts unsent records beyond the age bound, then beyond the count and size bounds: trajectory batches first, oldest
   * first, and only then the oldest of the rest. A batch is 70–100 KB of tracks a heatmap can do without; a minute's
   * movement record or a sensor reading is a few hundred bytes that nothing else replaces. Every drop is counted per kind.
   */
  private evict(now: number): void {
    const db = this.database;
    const drop = (rows: { id: number; kind: RecordKind }[]) => {
      const remove = db.prepare(`DELETE FROM outbox WHERE id = ?`);
      const perKind = new Map<RecordKind, number>();
      for (const row of rows) {
        remove.run(row.id);
        perKind.set(row.kind, (perKind.get(row.kind) ?? 0) + 1);
      }
      for (const [kind, n] of perKind) this.bump(`dropped_${kind}`, n);
    };
    drop(db.prepare(`SELECT id, kind FROM outbox WHERE state != 'sent' AND created_at < ?`).all(now - this.maxAgeMs) as { id: number; kind: RecordKind }[]);
    const { n, bytes } = db.prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS bytes FROM outbox WHERE state != 'sent'`).get() as { n: number; bytes: number };
    if (n <= this.maxRecords && bytes <= this.maxBytes) return;
    const victims: { id: number; kind: RecordKind }[] = [];
    let count = n;
    let size = bytes;
    const candidates = [
      db.prepare(`SELECT id, kind, bytes FROM outbox WHERE state != 'sent' AND kind = ? ORDER BY id`),
      db.prepare(`SELECT id, kind, bytes FROM outbox WHERE state != 'sent' AND kind != ? ORDER BY id`),
    ];
    for (const query of candidates) {
      for (const row of query.iterate(EVICTED_FIRST) as IterableIterator<{ id: number; kind: RecordKind; bytes: number }>) {
        if (count <= this.maxRecords && size <= this.maxBytes) break;
        victims.push({ id: row.id, kind: row.kind });
        count--;
        size -= row.bytes;
      }
    }
    drop(victims);
  }
}

function noneOfEach(): Record<RecordKind, number> {
  return { metrics: 0, movement: 0, trajectories: 0 };
}

function total(counts: Record<RecordKind, number>): number {
  return counts.metrics + counts.movement + counts.trajectories;
}

function isGuarded(saved: unknown): saved is { guard: string; value: unknown } {
  return typeof saved === 'object' && saved !== null && 'guard' in saved && typeof saved.guard === 'string' && 'value' in saved;
}

function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS outbox (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      kind TEXT NOT NULL,
      dedupe_key TEXT NOT NULL,
      payload TEXT NOT NULL,
      bytes INTEGER NOT NULL,
      state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'quarantined')),
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT
    );
    CREATE UNIQUE INDEX IF NOT EXISTS outbox_identity ON outbox (kind, dedupe_key);
    CREATE INDEX IF NOT EXISTS outbox_queue ON outbox (state, kind, id);
    CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS agent_state (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL);
  `);
}
