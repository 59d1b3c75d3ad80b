import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { IntervalSummary } from '@hivegate/shared';
import { afterAll, describe, expect, it } from 'vitest';
import { lostNote } from '../src/agent.ts';
import type { Frame } from '../src/capture/frame.ts';
import type { CounterOutput, EntranceCounter } from '../src/count/entrance-counter.ts';
import type { OpenInterval } from '../src/count/open-intervals.ts';
import type { Detector } from '../src/detect/types.ts';
import { Outbox } from '../src/outbox/outbox.ts';
import { OPEN_INTERVALS_STATE_KEY, Pipeline, type FrameSource } from '../src/pipeline.ts';
import type { BeeTracker } from '../src/track/tracker.ts';
import { tempDir } from './helpers/media.ts';

const dir = tempDir('pipeline-save');
afterAll(() => dir.cleanup());
let n = 0;

const T0 = 1_767_225_600;
const summary = (end: number, beesIn: number): IntervalSummary => ({
  intervalStart: end - 60, intervalEnd: end, beesIn, beesOut: 0, netFlow: beesIn, speedSamples: 0, stationaryBees: 0, detectedBees: beesIn, beeInteractions: 0, unknownDirection: 0, frames: 1,
});
const open = (end: number, beesIn: number): OpenInterval => ({ hiveId: 'h', boxId: 'b', summary: summary(end, beesIn) });
const none: CounterOutput = { movements: [], trajectories: [], crossings: [], summaries: [] } as unknown as CounterOutput;

/**
 * A pipeline over a scripted counter: at each frame `script` says what the counter emits and what it then holds open.
 * The SQLite outbox is real; a full disk is its state writes failing as SQLite fails them then (a row that grows
 * in place may still fit, so a page limit does not stand in reliably).
 */
function scripted(outbox: Outbox, script: ((frame: number) => { emit?: IntervalSummary[]; open: OpenInterval[]; fillDisk?: boolean })[]) {
  let current: OpenInterval[] = [];
  const restored: OpenInterval[][] = [];
  const counter = {
    onFrame: () => {
      const step = script[frame]!(frame);
      if (step.fillDisk) {
        outbox.setState = () => {
          throw new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
        };
      }
      current = step.open;
      frame++;
      return { ...none, movements: (step.emit ?? []).map((s) => ({ hiveId: 'h', boxId: 'b', timestamp: s.intervalEnd, beesIn: s.beesIn, beesOut: 0 })) };
    },
    openIntervals: () => current,
    suspend: () => none,
    restore: (intervals: OpenInterval[]) => restored.push(intervals),
  };
  let frame = 0;
  const frames = script.map((_, i): Frame => ({ data: Uint8Array.of(i), width: 1, height: 1, format: 'gray', index: i, timestampMs: (T0 + i) * 1000 }));
  const source: FrameSource = {
    framesDropped: 0,
    state: 'running',
    stop: async () => {},
    async *[Symbol.asyncIterator]() {
      yield* frames;
    },
  };
  const logs: string[] = [];
  const pipeline = new Pipeline({
    source,
    detector: { detect: async () => [], describe: () => 'none' } as unknown as Detector,
    tracker: { update: () => ({ tracks: [], ended: [] }), flush: () => [] } as unknown as BeeTracker,
    counter: counter as unknown as EntranceCounter,
    outbox,
    log: (line) => logs.push(line),
    saveOpenIntervals: { everyMs: 60_000 },
  });
  return { pipeline, logs, restored };
}

function fileOutbox(path: string): Outbox {
  const outbox = new Outbox({ path });
  outbox.start();
  return outbox;
}

describe('open intervals saved on a disk that fills up', () => {
  // A save that failed on a full disk left the one before it: the next start sent again the intervals the full-disk
  // run had already sent, and the stop line did not say that the open intervals' counts were lost.
  it('discards a save once one of its intervals was sent and it cannot be replaced, and the stop says what was lost', async () => {
    const path = join(dir.path, `outbox-${n++}.db`);
    const first = fileOutbox(path);
    const { pipeline, logs } = scripted(first, [
      () => ({ open: [open(T0 + 60, 2), open(T0 + 120, 1)] }), // saved at the first frame
      () => ({ open: [open(T0 + 60, 3), open(T0 + 120, 1)], fillDisk: true }),
      () => ({ emit: [summary(T0 + 60, 3)], open: [open(T0 + 120, 4), open(T0 + 180, 5)] }),
    ]);
    pipeline.start();
    await pipeline.done;
    expect(logs).toContain('cannot save the open intervals (database or disk is full): a stop now loses what they counted since the last save');
    // Everything the open intervals hold is lost: the save of T0+120 went with the save it was part of.
    expect(pipeline.stats.openIntervalsNotSaved).toEqual({ intervals: 2, beesIn: 9, beesOut: 0 });
    expect(pipeline.stats.openIntervalsSaved).toBeUndefined();
    expect(lostNote(pipeline.stats.openIntervalsNotSaved, { movement: 1, metrics: 0, trajectories: 0 })).toBe(
      '; LOST, the disk being full: the counts of 2 open intervals not saved (in 9, out 0), which were never sent; 1 record held in memory (movement 1), never written or sent',
    );
    first.stop();

    const next = fileOutbox(path);
    expect(next.readGuarded(OPEN_INTERVALS_STATE_KEY)).toEqual({ stale: true });
    const again = scripted(next, [() => ({ open: [] })]);
    again.pipeline.start();
    await again.pipeline.done;
    expect(again.restored).toEqual([]);
    expect(again.logs[0]).toMatch(/^the open intervals the last run saved are out of date/);
    next.stop();
  });

  it('keeps a save that is only behind, and the stop counts what was counted since', async () => {
    const path = join(dir.path, `outbox-${n++}.db`);
    const first = fileOutbox(path);
    const { pipeline } = scripted(first, [
      () => ({ open: [open(T0 + 60, 2)] }),
      () => ({ open: [open(T0 + 60, 5), open(T0 + 120, 1)], fillDisk: true }),
    ]);
    pipeline.start();
    await pipeline.done;
    expect(pipeline.stats.openIntervalsNotSaved).toEqual({ intervals: 2, beesIn: 4, beesOut: 0 });
    expect(pipeline.stats.openIntervalsSaved).toMatchObject({ intervals: 1, beesIn: 2 });
    first.stop();
    const next = fileOutbox(path);
    expect(next.readGuarded(OPEN_INTERVALS_STATE_KEY)).toEqual({ value: { version: 1, intervals: [open(T0 + 60, 2)] } });
    next.stop();
  });
});
