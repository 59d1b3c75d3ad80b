import { Type } from 'typebox';
import { compileValidator, type IntervalSummary } from '@hivegate/shared';

/**
 * An interval the counter has not emitted yet, with whose it is: what a live agent saves every few seconds and at
 * its stop, so that the next run completes that interval rather than send it part-counted (the cloud keeps the
 * first record of a hive, box and minute, so a second one for the same minute would be lost).
 */
export interface OpenInterval {
  hiveId: string | number;
  boxId: string | number;
  summary: IntervalSummary;
}

/** The identity of the movement record the interval becomes (as the outbox and the cloud dedupe it). */
export function openIntervalKey(interval: OpenInterval): string {
  return `${String(interval.hiveId)}|${String(interval.boxId)}|${String(interval.summary.intervalEnd)}`;
}

/**
 * One interval from two parts counted by two runs of the agent (one stopped, one started) over the same interval
 * end. What each field becomes, and why:
 * - beesIn, beesOut, unknownDirection, beeInteractions, frames, speedSamples: added. Each run counts its own
 *   crossings, meetings and frames; none is seen by both.
 * - detectedBees: added. It counts tracks, and a run's tracks end with it: a bee in view across the restart is
 *   two tracks, as a bee the tracker loses and finds again is within one run.
 * - stationaryBees: the larger. The bees standing still (guards, fanners) are the very ones in view on both sides
 *   of a restart, so adding would count each of them twice; the larger part counts each once.
 * - avgSpeed: the mean of the two, weighted by their speed samples, which is exactly the mean of all samples.
 * - p95Speed: the two parts' p95 weighted the same way. The exact value would need every sample; the p95 of the
 *   whole always lies between the parts' (at least 95 % of all samples are at or below the larger, fewer than
 *   95 % below the smaller), and the weighted mean lies there too, exact when the parts are alike.
 * - intervalStart: the earlier (an interval length changed between the runs makes a longer interval, same end).
 */
export function mergeIntervalParts(a: IntervalSummary, b: IntervalSummary): IntervalSummary {
  if (a.intervalEnd !== b.intervalEnd) throw new Error(`only parts of one interval merge (ends ${a.intervalEnd} and ${b.intervalEnd})`);
  const beesIn = a.beesIn + b.beesIn;
  const beesOut = a.beesOut + b.beesOut;
  const merged: IntervalSummary = {
    intervalStart: Math.min(a.intervalStart, b.intervalStart),
    intervalEnd: a.intervalEnd,
    beesIn,
    beesOut,
    netFlow: beesIn - beesOut,
    speedSamples: a.speedSamples + b.speedSamples,
    stationaryBees: Math.max(a.stationaryBees, b.stationaryBees),
    detectedBees: a.detectedBees + b.detectedBees,
    beeInteractions: a.beeInteractions + b.beeInteractions,
    unknownDirection: a.unknownDirection + b.unknownDirection,
    frames: a.frames + b.frames,
  };
  const avgSpeed = weightedMean(a.avgSpeed, a.speedSamples, b.avgSpeed, b.speedSamples);
  const p95Speed = weightedMean(a.p95Speed, a.speedSamples, b.p95Speed, b.speedSamples);
  if (avgSpeed !== undefined) merged.avgSpeed = avgSpeed;
  if (p95Speed !== undefined) merged.p95Speed = p95Speed;
  return merged;
}

function weightedMean(a: number | undefined, aWeight: number, b: number | undefined, bWeight: number): number | undefined {
  const wa = a === undefined ? 0 : aWeight;
  const wb = b === undefined ? 0 : bWeight;
  if (wa + wb === 0) return a ?? b;
  return Math.round((((a ?? 0) * wa + (b ?? 0) * wb) / (wa + wb)) * 1000) / 1000;
}

/** Adds `intervals` to `into` (by identity), merging parts of the same interval. */
export function addOpenIntervals(into: Map<string, OpenInterval>, intervals: readonly OpenInterval[]): void {
  for (const interval of intervals) {
    const key = openIntervalKey(interval);
    const known = into.get(key);
    into.set(key, known ? { ...known, summary: mergeIntervalParts(known.summary, interval.summary) } : interval);
  }
}

const Count = Type.Integer({ minimum: 0 });
const Id = Type.Union([Type.String(), Type.Number()]);
const SavedIntervalsSchema = Type.Object({
  version: Type.Literal(1),
  intervals: Type.Array(
    Type.Object({
      hiveId: Id,
      boxId: Id,
      summary: Type.Object({
        intervalStart: Type.Number(),
        intervalEnd: Type.Number(),
        beesIn: Count,
        beesOut: Count,
        netFlow: Type.Number(),
        avgSpeed: Type.Optional(Type.Number({ minimum: 0 })),
        p95Speed: Type.Optional(Type.Number({ minimum: 0 })),
        speedSamples: Count,
        stationaryBees: Count,
        detectedBees: Count,
        beeInteractions: Count,
        unknownDirection: Count,
        frames: Count,
      }),
    }),
  ),
});
const checkSaved = compileValidator(SavedIntervalsSchema);

/** The form the open intervals are saved in (versioned: a later agent may save more). */
export function savedForm(intervals: readonly OpenInterval[]): { version: 1; intervals: readonly OpenInterval[] } {
  return { version: 1, intervals };
}

/** The open intervals a previous run saved; throws, saying what is wrong, for anything else. */
export function readSavedIntervals(value: unknown): OpenInterval[] {
  const checked = checkSaved(value);
  if (!checked.ok) throw new Error(checked.error);
  return checked.value.intervals;
}

/** The bees counted in and out over the intervals. */
export function openIntervalTotals(intervals: readonly OpenInterval[]): { beesIn: number; beesOut: number } {
  let beesIn = 0;
  let beesOut = 0;
  for (const { summary } of intervals) {
    beesIn += summary.beesIn;
    beesOut += summary.beesOut;
  }
  return { beesIn, beesOut };
}

/** "2 intervals (in 5, out 3)", for the log. */
export function describeOpenIntervals(intervals: readonly OpenInterval[]): string {
  const { beesIn, beesOut } = openIntervalTotals(intervals);
  return `${intervals.length} interval${intervals.length === 1 ? '' : 's'} (in ${beesIn}, out ${beesOut})`;
}
