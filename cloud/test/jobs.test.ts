import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { migrate } from '../src/db/migrate.ts';
import { PostgresDatabase } from '../src/db/postgres.ts';
import { JobQueue, PermanentJobError, type JobHandler, type JobQueueConfig } from '../src/jobs/job-queue.ts';
import { createTestDatabase, waitFor } from './helper.ts';

const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child() { return silent; }, level: 'silent' } as unknown as FastifyBaseLogger;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
const opened: { queue?: JobQueue; db: PostgresDatabase }[] = [];

function openDb(): PostgresDatabase {
  const db = new PostgresDatabase({ url: database.url, poolSize: 4 });
  opened.push({ db });
  return db;
}

/** One "instance": its own connection pool and queue, as a second process would have. */
async function instance(handlers: Record<string, JobHandler<never>>, config: Partial<JobQueueConfig> = {}, log = silent) {
  const db = openDb();
  const queue = new JobQueue(db, { workers: 1, leaseSeconds: 30, pollSeconds: 60, ...config }, log);
  for (const [kind, handler] of Object.entries(handlers)) queue.define(kind, handler);
  await queue.start();
  opened.at(-1)!.queue = queue;
  return { db, queue };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let kindCounter = 0;
const freshKind = () => `test.kind${++kindCounter}`;

beforeAll(async () => {
  database = await createTestDatabase();
  const db = openDb();
  await migrate(db);
});

afterAll(async () => {
  for (const { queue, db } of opened.reverse()) {
    await queue?.stop().catch(() => undefined);
    await db.close().catch(() => undefined);
  }
  await database.drop();
});

describe('job queue', () => {
  it('wakes an idle worker by NOTIFY: the job runs long before the 60 s poll', async () => {
    const kind = freshKind();
    const ran: unknown[] = [];
    const { queue } = await instance({ [kind]: { run: async (job) => void ran.push(job.payload) } });
    await sleep(100); // the worker is idle now, sleeping until the poll
    const id = await queue.enqueue(kind, { hello: 'bees' });
    await waitFor(async () => (await queue.get(id!))?.state === 'done', 'the job to finish', 5000);
    expect(ran).toEqual([{ hello: 'bees' }]);
  });

  it('retries a failing job with backoff, then marks it FAILED with the reason and tells the handler once', async () => {
    const kind = freshKind();
    const attempts: number[] = [];
    const failed: string[] = [];
    const logged: string[] = [];
    const note = (level: string) => (fields: object, message: string) => void logged.push(`${level} ${message} ${JSON.stringify(fields)}`);
    const recording = { ...silent, info: note('info'), warn: note('warn') } as unknown as FastifyBaseLogger;
    const { queue } = await instance({
      [kind]: {
        maxAttempts: 3,
        backoff: { baseSeconds: 0.05, maxSeconds: 0.2, jitter: 0 },
        run: async (job) => {
          attempts.push(job.attempt);
          throw new Error(`camera unplugged (try ${job.attempt})`);
        },
        onFailed: async (_job, reason) => void failed.push(reason),
      },
    }, {}, recording);
    const id = (await queue.enqueue(kind, {}))!;
    const job = await waitFor(async () => {
      const j = await queue.get(id);
      return j?.state === 'failed' ? j : null;
    }, 'the job to fail');
    expect(attempts).toEqual([1, 2, 3]);
    expect(job.attempts).toBe(3);
    expect(job.lastError).toBe('gave up after 3 attempts: camera unplugged (try 3)');
    // A retry after a failure was logged at info: a transcode failing on a bad FFMPEG_PATH over and over went unseen.
    expect(logged.filter((line) => line.includes('job will retry'))).toEqual([
      expect.stringMatching(/^warn job will retry .*camera unplugged \(try 1\)/),
      expect.stringMatching(/^warn job will retry .*camera unplugged \(try 2\)/),
    ]);
    expect(failed).toEqual(['gave up after 3 attempts: camera unplugged (try 3)']);
  });

  // A heatmap render failing on a read-only DATA_DIR ("gave up after 5 attempts: EROFS…") was logged at warn only.
  it('logs a job failing on a storage fault at error, on every try and when it gives up', async () => {
    const kind = freshKind();
    const logged: string[] = [];
    const note = (level: string) => (_fields: object, message: string) => void logged.push(`${level} ${message}`);
    const recording = { ...silent, warn: note('warn'), error: note('error') } as unknown as FastifyBaseLogger;
    const { queue } = await instance({
      [kind]: {
        maxAttempts: 2,
        backoff: { baseSeconds: 0.05, maxSeconds: 0.05, jitter: 0 },
        run: async () => {
          throw Object.assign(new Error("EROFS: read-only file system, open '/srv/hivegate/.data/blobs/x.png'"), { code: 'EROFS', syscall: 'open' });
        },
      },
    }, {}, recording);
    const id = (await queue.enqueue(kind, {}))!;
    await waitFor(async () => (await queue.get(id))?.state === 'failed', 'the job to fail');
    expect(logged).toEqual(['error job will retry', 'error job failed']);
  });

  it('fails at once on a permanent error', async () => {
    const kind = freshKind();
    let runs = 0;
    const { queue } = await instance({
      [kind]: {
        maxAttempts: 5,
        run: async () => {
          runs += 1;
          throw new PermanentJobError('file is not a video');
        },
      },
    });
    const id = (await queue.enqueue(kind, {}))!;
    const job = await waitFor(async () => {
      const j = await queue.get(id);
      return j?.state === 'failed' ? j : null;
    }, 'the job to fail');
    expect(runs).toBe(1);
    expect(job.lastError).toBe('file is not a video');
  });

  it('shares work between instances: every job runs exactly once, and both instances take some', async () => {
    const kind = freshKind();
    const runsBy = new Map<string, number[]>();
    const handler = (name: string): JobHandler<{ n: number }> => ({
      run: async (job) => {
        runsBy.set(name, [...(runsBy.get(name) ?? []), job.payload.n]);
        await sleep(30);
      },
    });
    const a = await instance({ [kind]: handler('a') as JobHandler<never> }, { workers: 2 });
    await instance({ [kind]: handler('b') as JobHandler<never> }, { workers: 2 });
    await a.db.transaction(async (tx) => {
      for (let n = 0; n < 30; n += 1) await a.queue.enqueue(kind, { n }, { tx });
    });
    await waitFor(async () => (await a.queue.list(kind)).every((j) => j.state === 'done'), 'all jobs to finish');
    const all = [...(runsBy.get('a') ?? []), ...(runsBy.get('b') ?? [])].sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 30 }, (_, n) => n));
    expect(runsBy.get('a')?.length).toBeGreaterThan(0);
    expect(runsBy.get('b')?.length).toBeGreaterThan(0);
  });

  it('lets another instance take over the job of one that crashed, once its lease runs out', async () => {
    const kind = freshKind();
    const starts: string[] = [];
    let releaseHung!: () => void;
    const hung = new Promise<void>((resolve) => (releaseHung = resolve));
    // The first instance's handler hangs like a frozen process; then its database connections are cut: no
    // heartbeat, no bookkeeping, exactly what a killed process leaves behind.
    const crashing = await instance(
      {
        [kind]: {
          run: async () => {
            starts.push('crashing');
            await hung;
          },
        },
      },
      { leaseSeconds: 1 },
    );
    const id = (await crashing.queue.enqueue(kind, {}))!;
    await waitFor(async () => starts.length === 1, 'the first instance to start the job');
    await crashing.db.close();

    const survivor = await instance({ [kind]: { run: async (job) => void starts.push(`survivor attempt ${job.attempt}`) } }, { leaseSeconds: 1, pollSeconds: 0.2 });
    const job = await waitFor(async () => {
      const j = await survivor.queue.get(id);
      return j?.state === 'done' ? j : null;
    }, 'the survivor to finish the job');
    expect(starts).toEqual(['crashing', 'survivor attempt 2']);
    expect(job.attempts).toBe(2);
    releaseHung();
  });

  it('keeps a job longer than its lease by heartbeats: nobody else takes it', async () => {
    const kind = freshKind();
    const runs: string[] = [];
    const slow = (name: string): JobHandler<never> => ({
      run: async () => {
        runs.push(name);
        await sleep(2500);
      },
    });
    const a = await instance({ [kind]: slow('a') }, { leaseSeconds: 0.6, pollSeconds: 0.1 });
    const id = (await a.queue.enqueue(kind, {}))!;
    await waitFor(async () => runs.length === 1, 'the job to start');
    await instance({ [kind]: slow('b') }, { leaseSeconds: 0.6, pollSeconds: 0.1 });
    await waitFor(async () => (await a.queue.get(id))?.state === 'done', 'the job to finish');
    expect(runs).toEqual([runs[0]]);
  });

  it('hands a running job back when its instance stops, without counting the attempt', async () => {
    const kind = freshKind();
    const events: string[] = [];
    const first = await instance({
      [kind]: {
        run: (job) =>
          new Promise<void>((_, reject) => {
            events.push('started');
            job.signal.addEventListener('abort', () => reject(job.signal.reason as Error));
          }),
      },
    });
    const id = (await first.queue.enqueue(kind, {}))!;
    await waitFor(async () => events.length === 1, 'the job to start');
    await first.queue.stop();
    const released = await first.queue.get(id);
    expect(released).toMatchObject({ state: 'queued', attempts: 0, lockedUntil: null });

    const second = await instance({ [kind]: { run: async (job) => void events.push(`finished on attempt ${job.attempt}`) } });
    await waitFor(async () => (await second.queue.get(id))?.state === 'done', 'the next instance to finish it');
    expect(events).toEqual(['started', 'finished on attempt 1']);
  });

  it('coalesces jobs with the same dedupe key while one waits, and runs delayed jobs when due', async () => {
    const kind = freshKind();
    const ran: number[] = [];
    const { queue } = await instance({ [kind]: { run: async () => void ran.push(Date.now()) } });
    const enqueuedAt = Date.now();
    const ids = await Promise.all([1, 2, 3].map(() => queue.enqueue(kind, {}, { dedupeKey: 'box-1/2026-05-01', delaySeconds: 0.5 })));
    expect(ids.filter((id) => id !== null)).toHaveLength(1);
    await waitFor(async () => ran.length === 1, 'the delayed job');
    expect(ran[0]! - enqueuedAt).toBeGreaterThanOrEqual(450);
    // Once it has run, the key is free again.
    expect(await queue.enqueue(kind, {}, { dedupeKey: 'box-1/2026-05-01' })).not.toBeNull();
  });

  // With one worker, heatmap renders waited behind a transcode for as long as it ran (minutes for a long clip).
  it('runs quick jobs in a lane of their own, beside a long job, one at a time', async () => {
    const slow = freshKind();
    const quick = freshKind();
    let releaseSlow!: () => void;
    const slowHeld = new Promise<void>((resolve) => (releaseSlow = resolve));
    const running = { slow: 0, quick: 0 };
    const most = { slow: 0, quick: 0 };
    const quickDone: number[] = [];
    const track = async (lane: 'slow' | 'quick', work: () => Promise<void>) => {
      most[lane] = Math.max(most[lane], ++running[lane]);
      await work();
      running[lane]--;
    };
    const { queue } = await instance({
      [slow]: { run: () => track('slow', () => slowHeld) },
      [quick]: { quick: true, run: (job) => track('quick', async () => void (await sleep(50), quickDone.push((job.payload as { n: number }).n))) },
    });
    await queue.enqueue(slow, {});
    await queue.enqueue(slow, {});
    await waitFor(async () => running.slow === 1, 'a slow job to start');
    for (const n of [1, 2, 3]) await queue.enqueue(quick, { n });
    await waitFor(async () => quickDone.length === 3, 'the quick jobs to run beside the slow one', 5000);
    expect(most).toEqual({ slow: 1, quick: 1 }); // one worker for the slow kind, one lane for the quick one
    releaseSlow();
    await waitFor(async () => (await queue.list(slow)).every((job) => job.state === 'done'), 'both slow jobs to finish');
    await queue.purgeFinished();
  });

  it('an instance with zero workers only enqueues', async () => {
    const kind = freshKind();
    let ran = false;
    const { queue } = await instance({ [kind]: { run: async () => void (ran = true) } }, { workers: 0 });
    const id = (await queue.enqueue(kind, {}))!;
    await sleep(300);
    expect(ran).toBe(false);
    expect((await queue.get(id))?.state).toBe('queued');
    await queue.purgeFinished();
  });
});
