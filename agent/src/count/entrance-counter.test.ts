import { describe, expect, it } from 'vitest';
import type { EndedTrack, TrackPoint, TrackView } from '../track/tracker.ts';
import { createTracking } from '../agent.ts';
import { resolveConfig } from '../config/config.ts';
import { EntranceCounter } from './entrance-counter.ts';

const T0 = 1_767_225_600; // a whole minute, Unix seconds
const zone: [number, number][] = [[0, 300], [640, 300], [640, 480], [0, 480]]; // hive side: the lower band

interface ScriptedBee {
  id: number;
  from: number; // seconds after T0
  to: number;
  path: (s: number) => [number, number];
}

/**
 * Plays scripted bees at 10 fps as the tracker would report them: seen while alive, ended one frame later. From
 * `fromSeconds` after T0 (a run started later) to `seconds`.
 */
function play(counter: EntranceCounter, bees: ScriptedBee[], seconds: number, fromSeconds = 0) {
  const points = new Map<number, TrackPoint[]>();
  const outputs = [];
  for (let k = fromSeconds * 10; k <= seconds * 10; k++) {
    const s = k / 10;
    const t = (T0 + s) * 1000;
    const tracks: TrackView[] = [];
    const ended: EndedTrack[] = [];
    for (const bee of bees) {
      if (s >= bee.from && s <= bee.to) {
        const [x, y] = bee.path(s - bee.from);
        tracks.push({ id: bee.id, x, y, w: 40, h: 16, vx: 0, vy: 0, score: 1, visibleLength: 40 });
        points.set(bee.id, [...(points.get(bee.id) ?? []), { x, y, t }]);
      } else if (points.has(bee.id) && s > bee.to && s - 0.1 <= bee.to) {
        ended.push({ id: bee.id, points: points.get(bee.id)! });
      }
    }
    outputs.push({ s, ...counter.onFrame(t, tracks, ended) });
  }
  return outputs;
}

function counter(maxLatenessSeconds = 120) {
  return new EntranceCounter({ counting: { zone, fps: 10 }, hiveId: 'hive-1', boxId: 'box-1', frameWidth: 640, frameHeight: 480, maxLatenessSeconds, trajectories: { maxTracks: 2 } });
}

describe('EntranceCounter', () => {
  it('holds an interval while a bee first seen in it is still tracked, then emits it with that bee counted', () => {
    const c = counter();
    const outputs = play(c, [
      { id: 1, from: 10, to: 20, path: (s) => [320, 100 + 30 * s] }, // flies in
      { id: 2, from: 55, to: 75, path: (s) => [200, 400 - 20 * s] }, // leaves, crossing at ~ 65 s
    ], 90);
    const emitted = outputs.filter((o) => o.movements.length > 0);
    expect(emitted).toHaveLength(1);
    // Not at 60 s: bee 2 (seen since 55 s) might still count in the first minute. Right after it ended instead.
    expect(emitted[0]!.s).toBeCloseTo(75.1, 5);
    expect(emitted[0]!.movements).toEqual([
      expect.objectContaining({ hiveId: 'hive-1', boxId: 'box-1', beesIn: 1, beesOut: 0, netFlow: 1, detectedBees: 2, timestamp: T0 + 60 }),
    ]);
    const crossings = outputs.flatMap((o) => o.crossings);
    expect(crossings.map((x) => [x.trackId, x.direction])).toEqual([[1, 'in'], [2, 'out']]);
    const rest = c.flush([]);
    expect(rest.movements).toEqual([expect.objectContaining({ beesIn: 0, beesOut: 1, timestamp: T0 + 120 })]);
  });

  it('emits an interval after the lateness allowance even if a bee parked in it is still tracked', () => {
    const c = counter(30);
    const outputs = play(c, [{ id: 7, from: 5, to: 200, path: () => [100, 100] }], 120);
    const first = outputs.find((o) => o.movements.length > 0)!;
    expect(first.s).toBeCloseTo(90, 5); // interval end 60 s + 30 s allowance
    expect(first.summaries[0]).toMatchObject({ intervalStart: T0, stationaryBees: 1, detectedBees: 1, beesIn: 0, beesOut: 0 });
  });

  it('reports the crossing of a track split where it turned back deep, in the frame it is decided', () => {
    const c = new EntranceCounter({ counting: { zone, fps: 10, reversalDepthPx: 20 }, hiveId: 'hive-1', boxId: 'box-1', frameWidth: 640, frameHeight: 480 });
    // Walks from y = 200 to 400 (100 px into the zone) and back out over 4 s.
    const outputs = play(c, [{ id: 3, from: 1, to: 5, path: (s) => [320, s < 2 ? 200 + 100 * s : 600 - 100 * s] }], 8);
    const decided = outputs.filter((o) => o.crossings.length > 0).map((o) => [o.s, o.crossings.map((x) => x.direction)]);
    // In when it crosses back (y < 294 at 4.1 s), out when the track ends.
    expect(decided).toEqual([[4.1, ['in']], [5.1, ['out']]]);
    expect(c.flush([]).movements).toEqual([expect.objectContaining({ beesIn: 1, beesOut: 1, netFlow: 0 })]);
  });

  it('with the agent defaults, splits a track that walks deep into the zone and straight back out', () => {
    // The default zone is the lower half of the frame; the default reversal depth is 25 px. A forager going in that
    // swapped with one coming out at the slot: neither crossing would count without the split.
    const config = resolveConfig({ file: { hiveId: 'hive-1', boxId: 'box-1', source: { url: 'clip.mp4', fps: 10 }, cloud: { url: 'http://127.0.0.1:8600', token: 't' } }, env: {} });
    const { counter: c } = createTracking(config);
    play(c, [{ id: 4, from: 1, to: 5, path: (s) => [320, s < 3 ? 100 + 100 * (s - 1) : 300 - 100 * (s - 3)] }], 8);
    expect(c.flush([]).movements).toEqual([expect.objectContaining({ beesIn: 1, beesOut: 1, netFlow: 0 })]);
  });

  it('with the agent defaults, does not split a bee that flies over the zone', () => {
    // Regression: a wanderer flying low across the frame dipped 90 px into the zone and out again, and was counted in
    // and out as a swap at the slot. It crosses the zone at 300 px/s, 7.5 lengths of its 40 px a second; bees walk at 2–4.
    const config = resolveConfig({ file: { hiveId: 'hive-1', boxId: 'box-1', source: { url: 'clip.mp4', fps: 10 }, cloud: { url: 'http://127.0.0.1:8600', token: 't' } }, env: {} });
    const { counter: c } = createTracking(config);
    const flight = (s: number): [number, number] => [100 + 300 * s, s < 0.5 ? 100 + 460 * s : s < 1 ? 330 : 330 - 460 * (s - 1)];
    play(c, [{ id: 5, from: 1, to: 2.5, path: flight }], 5);
    expect(c.flush([]).movements).toEqual([expect.objectContaining({ beesIn: 0, beesOut: 0 })]);
  });

  // An agent stopped within a minute sent that minute part-counted, and the next run's record of it was dropped as
  // a duplicate (by the outbox, and by the cloud, which keeps the first record of a hive, box and minute).
  it('hands a run restarted within an interval the counts before the stop, and sends that interval once with both', () => {
    const first = counter();
    play(first, [
      { id: 1, from: 2, to: 8, path: (s) => [320, 100 + 40 * s] }, // in, at ~5 s
      { id: 2, from: 8, to: 14, path: (s) => [320, 100 + 60 * s] }, // in at ~11.4 s, still in view at the stop at 12 s
    ], 12);
    const stop = first.suspend([{ id: 2, points: [{ x: 320, y: 340, t: (T0 + 12) * 1000 }] }]);
    expect(stop.movements).toEqual([]);
    expect(stop.crossings.map((x) => x.trackId)).toEqual([2]); // decided at the stop
    expect(stop.trajectories).toHaveLength(1);
    const saved = first.openIntervals();
    expect(saved.map((i) => [i.summary.intervalEnd, i.summary.beesIn, i.summary.detectedBees])).toEqual([[T0 + 60, 2, 2]]);

    const second = counter();
    second.restore(JSON.parse(JSON.stringify(saved)) as typeof saved);
    const outputs = play(second, [
      { id: 1, from: 20, to: 26, path: (s) => [320, 400 - 40 * s] }, // out, at ~20.5 s
      { id: 2, from: 70, to: 75, path: (s) => [320, 100 + 60 * s] }, // in, next minute
    ], 119, 14);
    const sent = [...outputs.flatMap((o) => o.movements), ...second.flush([]).movements];
    expect(sent.map((m) => [m.timestamp, m.beesIn, m.beesOut, m.detectedBees])).toEqual([
      [T0 + 60, 2, 1, 3],
      [T0 + 120, 1, 0, 1],
    ]);
  });

  it("sends an earlier run's interval that is over at this run's first frame, with the hive and box it was counted for", () => {
    const first = counter();
    play(first, [{ id: 1, from: 2, to: 8, path: (s) => [320, 100 + 40 * s] }], 30);
    first.suspend([]);
    const saved = first.openIntervals().map((i) => ({ ...i, boxId: 'box-0' })); // the box was renamed in between
    const second = counter();
    second.restore(saved);
    expect(second.onFrame((T0 + 300) * 1000, [], []).movements).toEqual([expect.objectContaining({ boxId: 'box-0', beesIn: 1, timestamp: T0 + 60 })]);
    expect(second.openIntervals().map((i) => [i.boxId, i.summary.intervalEnd])).toEqual([['box-1', T0 + 360]]);
    expect(() => second.restore(saved)).toThrow('open intervals are restored before the first frame');
  });

  it('carries the parts of all earlier runs through restarts that come before the interval closes', () => {
    const runs = [0, 1, 2].map(() => counter());
    for (const [k, run] of runs.entries()) {
      if (k > 0) run.restore(runs[k - 1]!.openIntervals());
      // Each run sees one bee fly in, then stops; the last runs to the end of its input.
      play(run, [{ id: 1, from: 15 * k + 1, to: 15 * k + 7, path: (s) => [320, 100 + 40 * s] }], 15 * k + 10, 15 * k);
      if (k < 2) expect(run.suspend([]).movements).toEqual([]);
    }
    expect(runs[2]!.flush([]).movements).toEqual([expect.objectContaining({ beesIn: 3, detectedBees: 3, timestamp: T0 + 60 })]);
  });

  it('batches ended tracks into trajectory uploads', () => {
    const c = counter();
    const outputs = play(c, [
      { id: 1, from: 1, to: 3, path: (s) => [10 * s, 20] },
      { id: 2, from: 2, to: 4, path: (s) => [10 * s, 40] },
      { id: 3, from: 5, to: 6, path: (s) => [10 * s, 60] },
    ], 10);
    const batches = outputs.flatMap((o) => o.trajectories);
    expect(batches).toHaveLength(1); // maxTracks 2: tracks 1 and 2
    expect(Object.keys(batches[0]!.trackHistory)).toEqual(['1', '2']);
    expect(batches[0]!.timestamp).toBe(new Date((T0 + 1) * 1000).toISOString());
    const last = c.flush([]);
    expect(last.trajectories.map((b) => Object.keys(b.trackHistory))).toEqual([['3']]);
  });
});
