import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OutboxLock } from '../src/outbox/outbox-lock.ts';
import { holdOutboxLockElsewhere } from './helpers/lock-holder.ts';
import { tempDir } from './helpers/media.ts';

const dir = tempDir('outbox-lock');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  dir.cleanup();
});

describe('outbox lock', () => {
  it('keeps a second agent off the outbox, and is free again once the first is killed (SIGKILL)', async () => {
    const outboxPath = join(dir.path, 'state', 'outbox.db');
    const first = await holdOutboxLockElsewhere(outboxPath);
    children.push(first);
    const second = new OutboxLock(outboxPath);
    expect(second.heldByAnother()).toBe(true);
    expect(() => second.start()).toThrow(`another agent is running on the outbox at ${outboxPath}: stop it first`);

    first.kill('SIGKILL');
    await once(first, 'exit');
    expect(second.heldByAnother()).toBe(false); // no stale lock left behind by the killed process
    second.start();
    second.stop();
  }, 30_000);

  it('is taken once per process as well, and released by stop()', () => {
    const outboxPath = join(dir.path, 'same-process', 'outbox.db');
    const first = new OutboxLock(outboxPath);
    first.start();
    first.start(); // idempotent
    const second = new OutboxLock(outboxPath);
    expect(() => second.start()).toThrow('another agent is running on the outbox');
    first.stop();
    second.start();
    second.stop();
  });
});
