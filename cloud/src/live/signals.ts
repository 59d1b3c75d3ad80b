import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from '../db/database.ts';

/**
 * Cross-instance wake-ups for the live gateway over Postgres LISTEN/NOTIFY. Each instance listens once per channel
 * (on the database's single listener connection) and fans notifications out in memory: to device polls waiting for
 * a box's commands, and to GraphQL subscriptions watching a box's sessions. A thousand waiting polls cost a thousand
 * entries in a map, not a thousand connections.
 */
export const COMMANDS_CHANNEL = 'hivegate_live_commands';
export const SESSIONS_CHANNEL = 'hivegate_live_sessions';

interface BoxSignal {
  /** Owner id and box id; `s` is the session id on the sessions channel. */
  o: number;
  b: string;
  s?: string;
}

function boxKey(ownerId: number, boxId: string): string {
  return `${ownerId}\u0000${boxId}`;
}

/** Sends the notification inside the caller's transaction: Postgres delivers it on commit, or never on rollback. */
export async function notifyCommandQueued(tx: Queryable, ownerId: number, boxId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [COMMANDS_CHANNEL, JSON.stringify({ o: ownerId, b: boxId } satisfies BoxSignal)]);
}

export async function notifySessionChanged(tx: Queryable, ownerId: number, boxId: string, sessionId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [SESSIONS_CHANNEL, JSON.stringify({ o: ownerId, b: boxId, s: sessionId } satisfies BoxSignal)]);
}

export interface CommandWait {
  /** Resolves true when a command was queued for the box since the wait was armed, false on time-out or shutdown. */
  wait(timeoutMs: number): Promise<boolean>;
  cancel(): void;
}

export class LiveSignals {
  private readonly commandWaiters = new Map<string, Set<() => void>>();
  private readonly sessionWatchers = new Map<string, Set<(sessionId: string) => void>>();
  private readonly unlisteners: (() => Promise<void>)[] = [];
  private stopping = false;

  constructor(
    private readonly db: Database,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    this.unlisteners.push(await this.db.listen(COMMANDS_CHANNEL, (payload) => this.dispatch(payload, this.commandWaiters)));
    this.unlisteners.push(await this.db.listen(SESSIONS_CHANNEL, (payload) => this.dispatch(payload, this.sessionWatchers)));
  }

  /** Lets every waiting poll return and ends every subscription, so shutdown does not wait for long-polls. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const waiters of [...this.commandWaiters.values()]) for (const wake of [...waiters]) wake();
    for (const watchers of [...this.sessionWatchers.values()]) for (const end of [...watchers]) end('');
    while (this.unlisteners.length > 0) await this.unlisteners.pop()!().catch(() => undefined);
  }

  /** Set once stop() began: waits end at once, and callers should stop waiting. */
  get closed(): boolean {
    return this.stopping;
  }

  get waitingPolls(): number {
    let n = 0;
    for (const set of this.commandWaiters.values()) n += set.size;
    return n;
  }

  private dispatch(payload: string, targets: Map<string, Set<(sessionId: string) => void>>): void {
    let signal: BoxSignal;
    try {
      signal = JSON.parse(payload) as BoxSignal;
    } catch {
      this.log.warn({ payload }, 'live: unreadable notification');
      return;
    }
    const handlers = targets.get(boxKey(signal.o, signal.b));
    if (!handlers) return;
    for (const handler of [...handlers]) handler(signal.s ?? '');
  }

  /**
   * Arms a wake-up for a box. Arm it before looking for commands: a command queued between the look and the wait
   * then still wakes the poll.
   */
  armCommandWait(ownerId: number, boxId: string): CommandWait {
    const key = boxKey(ownerId, boxId);
    let fired = this.stopping;
    let settle: ((value: boolean) => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const waiters = this.commandWaiters.get(key) ?? new Set();
    this.commandWaiters.set(key, waiters);
    const remove = () => {
      waiters.delete(wake);
      if (waiters.size === 0 && this.commandWaiters.get(key) === waiters) this.commandWaiters.delete(key);
      clearTimeout(timer);
    };
    const wake = () => {
      fired = true;
      remove();
      settle?.(!this.stopping);
    };
    waiters.add(wake);
    return {
      wait: (timeoutMs) => {
        if (fired) {
          remove();
          return Promise.resolve(!this.stopping);
        }
        return new Promise<boolean>((resolve) => {
          settle = resolve;
          timer = setTimeout(() => {
            remove();
            resolve(false);
          }, timeoutMs);
        });
      },
      cancel: () => {
        remove();
        settle?.(false);
      },
    };
  }

  /** Session ids of the box as they change, until the consumer returns or the instance stops. */
  sessionChanges(ownerId: number, boxId: string): AsyncIterableIterator<string> {
    const key = boxKey(ownerId, boxId);
    const queue: string[] = [];
    let pending: ((result: IteratorResult<string>) => void) | undefined;
    let done = this.stopping;
    const watchers = this.sessionWatchers.get(key) ?? new Set();
    this.sessionWatchers.set(key, watchers);
    const finish = (): IteratorResult<string> => {
      done = true;
      watchers.delete(push);
      if (watchers.size === 0 && this.sessionWatchers.get(key) === watchers) this.sessionWatchers.delete(key);
      const resolve = pending;
      pending = undefined;
      resolve?.({ value: undefined, done: true });
      return { value: undefined, done: true };
    };
    const push = (sessionId: string) => {
      if (this.stopping) {
        finish();
        return;
      }
      if (pending) {
        const resolve = pending;
        pending = undefined;
        resolve({ value: sessionId, done: false });
        return;
      }
      // A slow consumer only needs the latest news of each session; drop repeats, bound the rest.
      if (!queue.includes(sessionId)) queue.push(sessionId);
      if (queue.length > 100) queue.shift();
    };
    if (!done) watchers.add(push);
    const iterator: AsyncIterableIterator<string> = {
      next: () => {
        const value = queue.shift();
        if (value !== undefined) return Promise.resolve({ value, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (pending = resolve));
      },
      return: () => Promise.resolve(finish()),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }
}
