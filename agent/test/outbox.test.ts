import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { identityOf, Outbox } from '../src/outbox/outbox.ts';
import { tempDir } from './helpers/media.ts';

const dir = tempDir('outbox');
afterAll(() => dir.cleanup());
let n = 0;
const freshPath = () => join(dir.path, `outbox-${n++}.db`);

/** Writes to `file` until the disk has no room left. */
/** Writes until not one more block of the filesystem's fits. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [64 * 1024, 4096, 512]) {
      const block = Buffer.alloc(size);
      try {
        for (;;) writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** A real full disk needs a small filesystem of its own: root may mount a tmpfs (as CI runs); elsewhere that test is skipped. */
const canMountTmpfs = (() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = join(dir.path, 'mount-probe');
  try {
    mkdirSync(probe, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe]);
    return true;
  } catch {
    return false;
  }
})();

const movement = (i: number) => ({ hiveId: 'h', boxId: 'b', beesIn: i, beesOut: 0, timestamp: 1_767_225_600 + 60 * i });

describe('Outbox', () => {
  // A damaged outbox file said only "file is not a database", with no path.
  it('names the file when what is at the outbox path is not a database', () => {
    const path = freshPath();
    writeFileSync(path, 'not a database, but long enough to fill a SQLite header: '.repeat(4));
    expect(() => new Outbox({ path }).start()).toThrow(`the outbox at ${path} is not a SQLite database (overwritten or damaged): move it aside and start again`);
  });

  it('stores a record once per identity, also after it was sent', () => {
    const outbox = new Outbox({ path: freshPath() });
    outbox.start();
    const record = movement(1);
    expect(outbox.enqueue('movement', identityOf('movement', record), record)).toBe(true);
    expect(outbox.enqueue('movement', identityOf('movement', record), { ...record, beesIn: 99 })).toBe(false);
    const [pending] = outbox.pending('movement', 10);
    expect(pending).toMatchObject({ kind: 'movement', dedupeKey: 'h|b|1767225660', payload: record });
    outbox.markSent([pending!.id]);
    expect(outbox.pending('movement', 10)).toEqual([]);
    expect(outbox.enqueue('movement', identityOf('movement', record), record)).toBe(false);
    outbox.stop();
  });

  it('keeps kinds apart and returns each kind oldest first', () => {
    const outbox = new Outbox({ path: freshPath() });
    outbox.start();
    outbox.enqueueMany([
      { kind: 'movement', dedupeKey: 'm2', payload: movement(2) },
      { kind: 'metrics', dedupeKey: 'k1', payload: { hiveId: 'h', fields: { weightKg: 1 } } },
      { kind: 'movement', dedupeKey: 'm1', payload: movement(1) },
    ]);
    expect(outbox.pending('movement', 10).map((r) => r.dedupeKey)).toEqual(['m2', 'm1']);
    expect(outbox.pending('metrics', 10).map((r) => r.dedupeKey)).toEqual(['k1']);
    expect(outbox.stats().pending).toEqual({ metrics: 1, movement: 2, trajectories: 0 });
    outbox.stop();
  });

  it('evicts the oldest unsent records beyond its bounds and counts every drop', () => {
    let now = 1_000_000;
    const outbox = new Outbox({ path: freshPath(), maxRecords: 5, maxAgeSeconds: 3600, now: () => now });
    outbox.start();
    for (let i = 0; i < 8; i++) outbox.enqueue('movement', `m${i}`, movement(i));
    expect(outbox.pending('movement', 100).map((r) => r.dedupeKey)).toEqual(['m3', 'm4', 'm5', 'm6', 'm7']);
    expect(outbox.stats().dropped).toEqual({ metrics: 0, movement: 3, trajectories: 0 });
    now += 3601 * 1000; // everything queued so far is now too old
    outbox.enqueue('trajectories', 't1', { batchId: 't1' });
    expect(outbox.pending('movement', 100)).toEqual([]);
    expect(outbox.stats().dropped.movement).toBe(8);
    expect(outbox.pending('trajectories', 10)).toHaveLength(1);
    outbox.stop();
  });

  it('evicts by payload bytes too', () => {
    const outbox = new Outbox({ path: freshPath(), maxBytes: 1000 });
    outbox.start();
    for (let i = 0; i < 10; i++) outbox.enqueue('trajectories', `t${i}`, { batchId: `t${i}`, pad: 'x'.repeat(300) });
    const stats = outbox.stats();
    expect(stats.pendingBytes).toBeLessThanOrEqual(1000);
    expect(stats.pending.trajectories + stats.dropped.trajectories).toBe(10);
    expect(outbox.pending('trajectories', 1)[0]!.dedupeKey).toBe(`t${stats.dropped.trajectories}`);
    outbox.stop();
  });

  // Over its bounds the outbox evicted the oldest records whatever their kind: a backlog of 70–100 KB trajectory
  // batches took the minute counts and sensor readings queued among them with it.
  it('evicts trajectory batches first, oldest first, and only then the oldest of the rest, counting drops per kind', () => {
    const outbox = new Outbox({ path: freshPath(), maxRecords: 6 });
    outbox.start();
    const reading = (i: number) => ({ hiveId: 'h', dedupeKey: `k${i}`, fields: { weightKg: i } });
    outbox.enqueueMany([
      { kind: 'movement', dedupeKey: 'm0', payload: movement(0) },
      { kind: 'trajectories', dedupeKey: 't0', payload: { batchId: 't0' } },
      { kind: 'metrics', dedupeKey: 'k0', payload: reading(0) },
      { kind: 'trajectories', dedupeKey: 't1', payload: { batchId: 't1' } },
      { kind: 'movement', dedupeKey: 'm1', payload: movement(1) },
      { kind: 'trajectories', dedupeKey: 't2', payload: { batchId: 't2' } },
    ]);
    outbox.enqueue('movement', 'm2', movement(2));
    outbox.enqueue('metrics', 'k1', reading(1));
    expect(outbox.pending('trajectories', 10).map((r) => r.dedupeKey)).toEqual(['t2']);
    outbox.enqueue('movement', 'm3', movement(3));
    outbox.enqueue('movement', 'm4', movement(4));
    // No batch left: the oldest of the rest goes.
    expect(outbox.pending('trajectories', 10)).toEqual([]);
    expect(outbox.pending('movement', 10).map((r) => r.dedupeKey)).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(outbox.pending('metrics', 10).map((r) => r.dedupeKey)).toEqual(['k0', 'k1']);
    expect(outbox.stats().dropped).toEqual({ metrics: 0, movement: 1, trajectories: 3 });
    outbox.stop();
  });

  it('evicts trajectory batches first by payload bytes too, newer ones included', () => {
    const outbox = new Outbox({ path: freshPath(), maxBytes: 5000 });
    outbox.start();
    for (let i = 0; i < 10; i++) outbox.enqueue('movement', `m${i}`, movement(i));
    outbox.enqueue('trajectories', 't0', { batchId: 't0', pad: 'x'.repeat(3000) });
    outbox.enqueue('trajectories', 't1', { batchId: 't1', pad: 'x'.repeat(3000) });
    expect(outbox.stats()).toMatchObject({ pending: { movement: 10, trajectories: 1 }, dropped: { metrics: 0, movement: 0, trajectories: 1 } });
    expect(outbox.pending('trajectories', 10).map((r) => r.dedupeKey)).toEqual(['t1']);
    outbox.stop();
  });

  it('quarantines a record so it no longer blocks the queue, keeping why', () => {
    const outbox = new Outbox({ path: freshPath() });
    outbox.start();
    outbox.enqueue('metrics', 'a', { hiveId: 'h', fields: {} });
    outbox.enqueue('metrics', 'b', { hiveId: 'h', fields: { weightKg: 2 } });
    const [bad] = outbox.pending('metrics', 1);
    outbox.quarantine(bad!.id, 'fields must have at least one of temperatureCelsius, humidityPercent, weightKg');
    expect(outbox.pending('metrics', 10).map((r) => r.dedupeKey)).toEqual(['b']);
    expect(outbox.quarantined()).toEqual([expect.objectContaining({ dedupeKey: 'a', error: expect.stringContaining('fields must have') })]);
    expect(outbox.stats().quarantined).toBe(1);
    outbox.stop();
  });

  /** SQLite's page limit, set on the outbox's own connection, stands in for a full disk: writes that need a new page fail with SQLITE_FULL. */
  const fillDisk = (outbox: Outbox) => {
    const db = (outbox as unknown as { db: Database.Database }).db;
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    return { makeRoom: () => db.pragma('max_page_count = 1073741823') };
  };
  const bigBatch = (i: number) => ({ batchId: `t${i}`, trackHistory: 'x'.repeat(20_000) });

  // A full disk stopped counting: enqueueMany threw SQLITE_FULL out of the agent's frame loop (and out of the sensor reader's timer).
  it('holds records in memory while the disk is full, offers them for sending, and writes them once there is room', () => {
    const lines: string[] = [];
    const outbox = new Outbox({ path: freshPath(), log: (line) => lines.push(line) });
    outbox.start();
    expect(outbox.enqueue('movement', 'm0', movement(0))).toBe(true);
    const disk = fillDisk(outbox);
    expect(outbox.enqueue('trajectories', 't1', bigBatch(1))).toBe(true);
    expect(lines).toEqual([expect.stringMatching(/^outbox: the disk is full \(database or disk is full\); holding new records in memory/)]);
    expect(outbox.enqueue('trajectories', 't1', bigBatch(1))).toBe(false); // the same identity, held already
    expect(outbox.enqueue('movement', 'm0', movement(0))).toBe(false); // written before the disk filled
    expect(outbox.enqueue('movement', 'm1', movement(1))).toBe(true); // small enough to fit, but kept in order behind t1
    expect(outbox.stats()).toMatchObject({ pending: { metrics: 0, movement: 2, trajectories: 1 }, held: 2 });
    expect(lines).toHaveLength(1); // said once, not at every record

    // The uplink gets the held records after the written ones, under ids of their own; once sent they are let go.
    const queued = outbox.pending('movement', 10);
    expect(queued.map((r) => [r.dedupeKey, Math.sign(r.id)])).toEqual([['m0', 1], ['m1', -1]]);
    outbox.recordAttempt(queued.map((r) => r.id), 'network: down');
    outbox.markSent(queued.map((r) => r.id));
    expect(outbox.pending('movement', 10)).toEqual([]);
    expect(outbox.stats().held).toBe(1);

    // Room again: the next enqueue first writes what was held, and what went out from memory is known as sent.
    disk.makeRoom();
    expect(outbox.enqueue('movement', 'm2', movement(2))).toBe(true);
    expect(lines.at(-1)).toBe('outbox: the disk has room again; 1 records held in memory are written');
    expect(outbox.stats()).toMatchObject({ pending: { metrics: 0, movement: 1, trajectories: 1 }, held: 0 });
    expect(outbox.pending('trajectories', 10).map((r) => [r.dedupeKey, Math.sign(r.id)])).toEqual([['t1', 1]]);
    expect(outbox.enqueue('movement', 'm1', movement(1))).toBe(false);
    outbox.stop();
  });

  // With the cloud up, held records went out at once and "the disk is full" was logged again for every record; the
  // "room again" line never came, as nothing was held by then.
  it('says once that the disk is full and once that it has room again, whether or not records are still held', () => {
    const lines: string[] = [];
    const outbox = new Outbox({ path: freshPath(), log: (line) => lines.push(line) });
    outbox.start();
    outbox.enqueue('movement', 'm0', movement(0));
    const disk = fillDisk(outbox);
    for (let i = 1; i <= 4; i++) {
      expect(outbox.enqueue('trajectories', `t${i}`, bigBatch(i))).toBe(true);
      outbox.markSent(outbox.pending('trajectories', 10).filter((r) => r.id < 0).map((r) => r.id)); // the cloud takes it at once
    }
    expect(lines).toEqual([expect.stringMatching(/^outbox: the disk is full/)]);
    disk.makeRoom();
    outbox.enqueue('movement', 'm5', movement(5));
    expect(lines).toEqual([expect.stringMatching(/^outbox: the disk is full/), 'outbox: the disk has room again']);
    expect(outbox.enqueue('trajectories', 't1', bigBatch(1))).toBe(false); // sent from memory, known as sent
    outbox.stop();
  });

  it('keeps a held record\'s creation time when it is written late, so the age bound counts from then', () => {
    let now = 1_000_000;
    const outbox = new Outbox({ path: freshPath(), maxAgeSeconds: 3600, now: () => now });
    outbox.start();
    const disk = fillDisk(outbox);
    expect(outbox.enqueue('trajectories', 't1', bigBatch(1))).toBe(true);
    now += 3000 * 1000;
    disk.makeRoom();
    expect(outbox.enqueue('movement', 'm1', movement(1))).toBe(true);
    // Written at the time of writing before, the record got 3000 s more to live than the bound gives.
    expect(outbox.pending('trajectories', 10)).toMatchObject([{ dedupeKey: 't1', createdAt: 1_000_000 }]);
    now += 601 * 1000;
    outbox.enqueue('movement', 'm2', movement(2));
    expect(outbox.pending('trajectories', 10)).toEqual([]);
    expect(outbox.stats().dropped.trajectories).toBe(1);
    outbox.stop();
  });

  it('bounds what it holds while the disk is full, counts what it drops, and says what a stop on a full disk loses', () => {
    const lines: string[] = [];
    const outbox = new Outbox({ path: freshPath(), maxHeldRecords: 3, log: (line) => lines.push(line) });
    outbox.start();
    outbox.enqueue('movement', 'm0', movement(0));
    fillDisk(outbox);
    for (let i = 1; i <= 5; i++) outbox.enqueue('trajectories', `t${i}`, bigBatch(i));
    expect(outbox.pending('trajectories', 10).map((r) => r.dedupeKey)).toEqual(['t3', 't4', 't5']);
    expect(outbox.stats()).toMatchObject({ held: 3, dropped: { metrics: 0, movement: 0, trajectories: 2 } });
    // Refused for good by the cloud, a held record has nowhere to be parked: it goes, and the log says so.
    outbox.quarantine(outbox.pending('trajectories', 1)[0]!.id, '400 from /api/entrance-heatmaps/trajectories: bad');
    expect(outbox.stats().held).toBe(2);
    expect(lines.at(-1)).toMatch(/^outbox: a record held in memory was refused for good and is dropped: 400/);
    outbox.stop();
    expect(lines.at(-1)).toBe('outbox: 2 records held in memory are lost: the disk is still full');
  });

  // A save that could not be replaced on a full disk stayed behind looking current (see test/pipeline-save.test.ts).
  it('keeps a guarded save only while its marker file is there, one marker at a time, and reads an unguarded one as it is', () => {
    const path = freshPath();
    const outbox = new Outbox({ path });
    outbox.start();
    outbox.setState('plain', [1]);
    expect(outbox.readGuarded('plain')).toEqual({ value: [1] });
    outbox.saveGuarded('saved', { a: 1 });
    outbox.saveGuarded('saved', { a: 2 });
    const markers = () => readdirSync(dir.path).filter((name) => name.startsWith(`${basename(path)}.saved-`));
    expect(markers()).toHaveLength(1);
    expect(outbox.readGuarded('saved')).toEqual({ value: { a: 2 } });
    outbox.discardGuarded('saved');
    expect(markers()).toEqual([]);
    expect(outbox.readGuarded('saved')).toEqual({ stale: true });
    outbox.saveGuarded('saved', { a: 3 });
    expect(outbox.readGuarded('saved')).toEqual({ value: { a: 3 } });
    outbox.stop();
  });

  it('drops trajectory batches first from what it holds while the disk is full', () => {
    const outbox = new Outbox({ path: freshPath(), maxHeldRecords: 3 });
    outbox.start();
    fillDisk(outbox);
    outbox.enqueue('trajectories', 't1', bigBatch(1)); // finds no room: from here on records are held
    outbox.enqueue('movement', 'm1', movement(1));
    outbox.enqueue('movement', 'm2', movement(2));
    outbox.enqueue('trajectories', 't2', bigBatch(2));
    outbox.enqueue('movement', 'm3', movement(3));
    expect(outbox.pending('movement', 10).map((r) => r.dedupeKey)).toEqual(['m1', 'm2', 'm3']);
    expect(outbox.stats()).toMatchObject({ held: 3, dropped: { metrics: 0, movement: 0, trajectories: 2 } });
    outbox.stop();
  });

  // An agent restarted on a full disk never got going: SQLite could not size the file of its WAL index (SQLITE_IOERR_SHMSIZE).
  it.skipIf(!canMountTmpfs)('opens, holds and catches up on a real full disk, also when started on one (a 2 MB tmpfs; needs root)', () => {
    const mountPoint = join(dir.path, 'tiny-disk');
    mkdirSync(mountPoint, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2M', 'tmpfs', mountPoint]);
    try {
      const path = join(mountPoint, 'outbox.db');
      const lines: string[] = [];
      const first = new Outbox({ path });
      first.start();
      first.enqueue('movement', 'm0', movement(0));
      first.stop();
      const filler = join(mountPoint, 'filler');
      fillUp(filler);

      const outbox = new Outbox({ path, log: (line) => lines.push(line) });
      outbox.start();
      expect(lines).toEqual([expect.stringContaining('outbox: the disk is full; the outbox is open to this process alone')]);
      expect(outbox.enqueue('trajectories', 't1', bigBatch(1))).toBe(true);
      expect(lines.at(-1)).toMatch(/^outbox: the disk is full \(database or disk is full\); holding new records in memory/);
      expect(outbox.stats()).toMatchObject({ pending: { metrics: 0, movement: 1, trajectories: 1 }, held: 1 });

      rmSync(filler);
      expect(outbox.enqueue('movement', 'm1', movement(1))).toBe(true);
      expect(lines.at(-1)).toBe('outbox: the disk has room again; 1 records held in memory are written');
      expect(outbox.stats()).toMatchObject({ pending: { metrics: 0, movement: 2, trajectories: 1 }, held: 0 });
      outbox.stop();
    } finally {
      // Lazily: a failed assertion may leave the database open, and a busy mount must not hide why it failed.
      execFileSync('umount', ['-l', mountPoint]);
    }
  });

  it.skipIf(!canMountTmpfs)('says where it needs room when a first start finds the disk full (a 2 MB tmpfs; needs root)', () => {
    const mountPoint = join(dir.path, 'tiny-full-disk');
    mkdirSync(mountPoint, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2M', 'tmpfs', mountPoint]);
    try {
      fillUp(join(mountPoint, 'filler'));
      const path = join(mountPoint, 'state', 'outbox.db');
      // Before, SQLite's bare "database or disk is full" was all the agent said at each of systemd's restarts.
      expect(() => new Outbox({ path }).start()).toThrow(`no room on the disk to create the outbox at ${path}: free some space there and start again`);
      rmSync(join(mountPoint, 'filler'));
      const outbox = new Outbox({ path });
      outbox.start();
      expect(outbox.enqueue('movement', 'm0', movement(0))).toBe(true);
      outbox.stop();
    } finally {
      execFileSync('umount', ['-l', mountPoint]);
    }
  });

  it('keeps its database in WAL mode', () => {
    const path = freshPath();
    const outbox = new Outbox({ path });
    outbox.start();
    outbox.stop();
    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('derives identities the way the cloud dedupes', () => {
    expect(identityOf('metrics', { hiveId: 1, fields: { weightKg: 1 }, dedupeKey: 'scale:1' })).toBe('scale:1');
    expect(identityOf('metrics', { hiveId: 1, fields: { weightKg: 1 } })).toMatch(/^sha256:[0-9a-f]{32}$/);
    expect(identityOf('movement', movement(0))).toBe('h|b|1767225600');
    expect(() => identityOf('movement', { hiveId: 1, boxId: 2 })).toThrow(/needs a timestamp/);
    expect(identityOf('trajectories', { batchId: 'abc' })).toBe('abc');
  });

  it('loses and duplicates nothing when the process is killed mid-loop (SIGKILL), and re-enqueueing is a no-op', async () => {
    const path = freshPath();
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures/outbox-writer.ts'), path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const committed: string[] = [];
    const sent: string[] = [];
    let buffer = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) {
          const [what, key] = line.split(' ');
          if (what === 'committed') committed.push(key!);
          if (what === 'sent') sent.push(key!);
        }
        if (committed.length >= 300 && child.exitCode === null && !child.killed) {
          child.kill('SIGKILL');
        }
      });
      child.on('exit', () => resolve());
    });
    expect(child.signalCode).toBe('SIGKILL');
    expect(committed.length).toBeGreaterThanOrEqual(300);

    const db = new Database(path);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = db.prepare(`SELECT dedupe_key AS key, state FROM outbox`).all() as { key: string; state: string }[];
    db.close();
    const stateOf = new Map(rows.map((r) => [r.key, r.state]));
    expect(stateOf.size).toBe(rows.length); // one row per identity
    for (const key of committed) expect(stateOf.has(key), `committed ${key} survived`).toBe(true);
    for (const key of sent) expect(stateOf.get(key)).toBe('sent');
    // Whatever the child had written beyond its last report is at most the one record it was committing.
    expect(rows.length - committed.length).toBeLessThanOrEqual(1);

    // The restarted agent regenerates the same records: only identities never stored are new.
    const outbox = new Outbox({ path });
    outbox.start();
    const total = rows.length + 5;
    let inserted = 0;
    for (let i = 0; i < total; i++) {
      const key = `hive-1|box-1|${1_767_225_600 + 60 * i}`;
      if (outbox.enqueue('movement', key, { i })) inserted++;
    }
    expect(inserted).toBe(5);
    const stats = outbox.stats();
    expect(stats.pending.movement).toBe(total - rows.filter((r) => r.state === 'sent').length);
    outbox.stop();
  }, 60_000);
});
