/** How often a running agent rewrites its status file (the pipeline's period, kept here with the judgment of its age). */
export const STATUS_REWRITE_MS = 2000;
/** Older than this while an agent runs, the file was not rewritten: a full disk, or a pipeline that hangs. */
export const STALE_AFTER_MS = 5 * STATUS_REWRITE_MS;

export interface SnapshotFacts {
  /** The file's `updatedAt`, Unix ms (NaN when it has none). */
  updatedAtMs: number;
  /** The file's `pid`, when it has one. */
  pid: number | undefined;
  nowMs: number;
  /** Whether an agent holds the outbox now (its lock). */
  agentRunning: boolean;
  /** Whether the file's `pid` is a live process. */
  pidAlive: boolean;
}

/**
 * Whether the status file is the running agent's current one, and if not what it is. On a full disk the file
 * cannot be rewritten: `status` showed the last snapshot as if current, and after a restart on that disk it showed
 * "agent: running" beside the last run's "capture stopped".
 * `live` is false when the figures in it are not the present's (the caller then shows no live rate).
 */
export function snapshotAge(facts: SnapshotFacts): { live: boolean; note?: string } {
  const age = facts.nowMs - facts.updatedAtMs;
  const when = Number.isNaN(age) ? 'at an unknown time' : `${formatAge(age)} ago`;
  if (!facts.agentRunning) return { live: false, note: `the last run's, written ${when}; no agent is running` };
  if (facts.pid !== undefined && !facts.pidAlive) {
    // The running agent writes its first status once its models are loaded, some seconds after it took the outbox.
    return { live: false, note: `STALE: written ${when} by an earlier run (pid ${facts.pid}, ended); the running agent has not rewritten it: still starting, or a full disk? see its log` };
  }
  if (Number.isNaN(age) || age > STALE_AFTER_MS) {
    return { live: false, note: `STALE: not rewritten for ${Number.isNaN(age) ? 'an unknown time' : formatAge(age)} (the agent rewrites it every ${STATUS_REWRITE_MS / 1000} s: a full disk? see its log)` };
  }
  return { live: true };
}

function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`;
}
