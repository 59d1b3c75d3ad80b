import { describe, expect, it } from 'vitest';
import { snapshotAge } from './snapshot-age.ts';

const now = Date.parse('2026-05-01T10:00:00Z');

describe('snapshotAge', () => {
  it('takes a file the running agent rewrote lately as live', () => {
    expect(snapshotAge({ updatedAtMs: now - 3000, pid: 42, nowMs: now, agentRunning: true, pidAlive: true })).toEqual({ live: true });
  });

  // On a full disk status showed a snapshot minutes old as current.
  it('says a running agent\'s file is stale once it has not been rewritten for a while', () => {
    expect(snapshotAge({ updatedAtMs: now - 90_000, pid: 42, nowMs: now, agentRunning: true, pidAlive: true })).toEqual({
      live: false,
      note: 'STALE: not rewritten for 90 s (the agent rewrites it every 2 s: a full disk? see its log)',
    });
  });

  // After a restart on a full disk status said "agent: running" beside the last run's "capture stopped".
  it('says the file is an earlier run\'s when its pid has ended though an agent runs, however recent it is', () => {
    expect(snapshotAge({ updatedAtMs: now - 4000, pid: 41, nowMs: now, agentRunning: true, pidAlive: false })).toEqual({
      live: false,
      note: 'STALE: written 4 s ago by an earlier run (pid 41, ended); the running agent has not rewritten it: still starting, or a full disk? see its log',
    });
  });

  it('dates the last run\'s file when no agent runs', () => {
    expect(snapshotAge({ updatedAtMs: now - 3 * 3600_000, pid: 41, nowMs: now, agentRunning: false, pidAlive: false })).toEqual({ live: false, note: "the last run's, written 3 h ago; no agent is running" });
    expect(snapshotAge({ updatedAtMs: Number.NaN, pid: undefined, nowMs: now, agentRunning: false, pidAlive: false }).note).toBe("the last run's, written at an unknown time; no agent is running");
  });
});
