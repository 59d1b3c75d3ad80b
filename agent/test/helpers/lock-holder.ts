import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

/** Another process holding an outbox's lock, as a running agent does; resolves once it holds it. Kill it to let go. */
export async function holdOutboxLockElsewhere(outboxPath: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../fixtures/outbox-lock-holder.ts'), outboxPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  if (chunk.toString() !== 'locked\n') throw new Error(`the lock holder said ${JSON.stringify(chunk.toString())}`);
  return child;
}
