import { describe, expect, it } from 'vitest';
import { MovementAggregator, percentile, toMovementInput, type BeeObservation } from './counting.ts';
import { isInsidePolygon, signedDistanceToPolygon, zoneFromLine, type Point } from './geometry.ts';

// The hive opening: a 200×40 slot at the top of a 640×480 frame.
const zone: Point[] = [[220, 0], [420, 0], [420, 60], [220, 60]];
const T0 = 1_767_225_600; // a whole minute
const fps = 10;

/** Walks one bee along straight legs at one observation per frame. */
function walk(points: Point[], framesPerLeg: number): Point[] {
  const path: Point[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [ax, ay] = points[i]!;
    const [bx, by] = points[i + 1]!;
    for (let f = 0; f < framesPerLeg; f++) path.push([ax + ((bx - ax) * f) / framesPerLeg, ay + ((by - ay) * f) / framesPerLeg]);
  }
  path.push(points.at(-1)!);
  return path;
}

/**
 * Feeds the tracks frame by frame (with each bee's body length, and how much of it is in view at each point, where
 * given) and ends each after its last point.
 */
function play(
  aggregator: MovementAggregator,
  tracks: Record<string, { from: number; path: Point[]; length?: number; visible?: number[] }>,
  totalFrames: number,
) {
  const crossings = [];
  for (let frame = 0; frame < totalFrames; frame++) {
    const bees: BeeObservation[] = [];
    for (const [id, { from, path, length, visible }] of Object.entries(tracks)) {
      const p = path[frame - from];
      const visibleLength = visible?.[frame - from];
      if (p) bees.push({ trackId: id, x: p[0], y: p[1], ...(length === undefined ? {} : { length }), ...(visibleLength === undefined ? {} : { visibleLength }) });
    }
    aggregator.observeFrame(T0 + frame / fps, bees);
    for (const [id, { from, path }] of Object.entries(tracks)) {
      if (frame - from === path.length - 1) crossings.push(aggregator.endTrack(id));
    }
  }
  return crossings;
}

describe('geometry', () => {
  it('knows inside from outside and measures distance to the edge', () => {
    expect(isInsidePolygon([300, 30], zone)).toBe(true);
    expect(isInsidePolygon([300, 100], zone)).toBe(false);
    expect(signedDistanceToPolygon([300, 30], zone)).toBeCloseTo(-30);
    expect(signedDistanceToPolygon([300, 100], zone)).toBeCloseTo(40);
  });
  it('turns a counting line into the half-plane on its left', () => {
    const above = zoneFromLine([0, 100], [640, 100]); // left of a rightward line is up the image
    expect(isInsidePolygon([320, 50], above)).toBe(true);
    expect(isInsidePolygon([320, 150], above)).toBe(false);
  });
});

describe('MovementAggregator', () => {
  it('counts a bee walking into the entrance as in, at the moment it crossed', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    const [crossing] = play(aggregator, { a: { from: 0, path: walk([[320, 300], [320, 20]], 28) } }, 40);
    expect(crossing).toMatchObject({ trackId: 'a', direction: 'in' });
    expect(crossing!.t).toBeGreaterThan(T0 + 2);
    const [interval] = aggregator.flush();
    expect(interval).toMatchObject({ beesIn: 1, beesOut: 0, netFlow: 1, detectedBees: 1, intervalEnd: T0 + 60 });
  });

  it('counts a bee leaving the entrance as out', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    play(aggregator, { a: { from: 0, path: walk([[320, 20], [500, 400]], 20) } }, 25);
    expect(aggregator.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 1, netFlow: -1 });
  });

  // A bee dancing on the zone edge used to be counted on every crossing by line counters.
  it('counts a bee jittering on the boundary at most once', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    const jitter: Point[] = [[320, 200], [320, 120]];
    for (let i = 0; i < 30; i++) jitter.push([320, i % 2 ? 57 : 64]);
    jitter.push([320, 20]);
    play(aggregator, { a: { from: 0, path: walk(jitter, 3) } }, 200);
    expect(aggregator.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 0 });
  });

  it('does not count a bee that comes out and goes back in', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    play(aggregator, { a: { from: 0, path: walk([[320, 20], [320, 200], [320, 20]], 15) } }, 40);
    expect(aggregator.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0, unknownDirection: 1 });
  });

  it('can count a track first seen at the zone edge as coming from the other side, once it has walked off', () => {
    // The edge is y = 60. Track b takes over a bee 10 px past the edge (its own track was lost as it crossed).
    const tracks = {
      b: { from: 20, path: walk([[320, 70], [320, 300]], 20) },
      // Born as deep inside and walking out: a normal crossing, counted once.
      c: { from: 20, path: walk([[300, 50], [300, 300]], 20) },
      // A fanner standing just outside the edge: never walks off, decides nothing.
      f: { from: 20, path: walk([[360, 70], [362, 72]], 20) },
    };
    const on = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    const crossings = play(on, tracks, 45);
    expect(crossings.filter(Boolean).map((c) => [c!.trackId, c!.direction])).toEqual([['b', 'out'], ['c', 'out']]);
    expect(on.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 2 });
    const off = new MovementAggregator({ zone, fps });
    play(off, tracks, 45);
    expect(off.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 1 });
    // First seen further than edgeBandPx from the edge: a bee that landed there, not one that crossed.
    const landed = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    play(landed, { l: { from: 20, path: walk([[320, 80], [320, 300]], 20) } }, 45);
    expect(landed.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // Regression: bees already at the edge when the video starts were counted as crossings.
    const atStart = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    play(atStart, { s: { from: 0, path: walk([[320, 70], [320, 300]], 20) } }, 25);
    expect(atStart.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
  });

  it('can count a track lost at the zone edge as gone across, unless a new track picks the bee up there', () => {
    // The edge is y = 60. Track a walks up from the board and is lost 10 px short of the edge.
    const lostAtEdge = { a: { from: 20, path: walk([[320, 300], [320, 70]], 20) } };
    const alone = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    expect(play(alone, lostAtEdge, 45).filter(Boolean).map((c) => c!.direction)).toEqual(['in']);
    // Track p begins where a was lost and walks on into the entrance: one bee, counted once (by p). The tracker
    // ends a lost track only after a while, so p has begun by the time a is ended.
    const pickedUp = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    const a = walk([[320, 300], [320, 70]], 20);
    const p = walk([[320, 55], [320, 10]], 10);
    for (let frame = 0; frame < 60; frame++) {
      const bees: BeeObservation[] = [];
      const at = a[frame - 20];
      if (at) bees.push({ trackId: 'a', x: at[0], y: at[1] });
      const pt = p[frame - 41];
      if (pt) bees.push({ trackId: 'p', x: pt[0], y: pt[1] });
      pickedUp.observeFrame(T0 + frame / fps, bees);
    }
    expect(pickedUp.endTrack('a')).toBeNull();
    expect(pickedUp.endTrack('p')).toMatchObject({ direction: 'in' });
    // Still in view when the video ends: not lost, so nothing is assumed.
    const ended = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    play(ended, { a: { from: 20, path: walk([[320, 300], [320, 70], [320, 70]], 20) } }, 45);
    expect(ended.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // Lost at the edge after standing there since it was first seen: nothing to repair.
    const guard = new MovementAggregator({ zone, fps, edgeBandPx: 16 });
    play(guard, { g: { from: 20, path: walk([[330, 70], [332, 68]], 20) } }, 45);
    expect(guard.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
  });

  it('with reversalDepthPx, counts a track that turns back deep across the edge as two bees', () => {
    // The edge is y = 60. Track s walks up from the board to y = 30 (30 px inside) and back out: a forager going in
    // and one coming out whose tracks swapped where they met at the slot.
    const swapped = { s: { from: 0, path: walk([[320, 200], [320, 30], [320, 200]], 20) } };
    const split = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    const crossings: unknown[] = [];
    for (let frame = 0; frame < 41; frame++) {
      const p = swapped.s.path[frame]!;
      crossings.push(...split.observeFrame(T0 + frame / fps, [{ trackId: 's', x: p[0], y: p[1] }]));
    }
    // The first part is decided the moment the track crosses back; it went in when it first got 6 px (the hysteresis) past the edge, at frame 18.
    expect(crossings).toEqual([{ trackId: 's', direction: 'in', t: expect.closeTo(T0 + 1.8, 5) as number }]);
    expect(split.endTrack('s')).toMatchObject({ trackId: 's', direction: 'out' });
    expect(split.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1, netFlow: 0 });
    // Without the option the track started and ended outside: nothing.
    const whole = new MovementAggregator({ zone, fps });
    play(whole, swapped, 45);
    expect(whole.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // Only 10 px inside before turning back (a bee that looked in, or a track jittering past the hysteresis): one
    // track, nothing counted.
    const shallow = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(shallow, { s: { from: 0, path: walk([[320, 200], [320, 50], [320, 200]], 20) } }, 45);
    expect(shallow.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // The other way round: out of the entrance, 40 px onto the board, back in: out, then in.
    const outAndBack = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    const decided = play(outAndBack, { r: { from: 0, path: walk([[320, 20], [320, 100], [320, 20]], 10) } }, 45);
    expect(decided).toMatchObject([{ direction: 'in' }]);
    expect(outAndBack.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
    // Turning back twice, each time deep: three crossings, still one track.
    const twice = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(twice, { w: { from: 0, path: walk([[320, 200], [320, 20], [320, 200], [320, 20]], 20) } }, 65);
    expect(twice.flush()[0]).toMatchObject({ beesIn: 2, beesOut: 1 });
  });

  it('does not split a track that stopped before it turned back: a bee turning round takes its time', () => {
    // As deep as the swapped track above, but standing 0.8 s (8 frames) at the turning point.
    const stand = Array.from({ length: 8 }, (): Point => [320, 30]);
    const path = [...walk([[320, 200], [320, 30]], 20), ...stand, ...walk([[320, 30], [320, 200]], 20)];
    const paused = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(paused, { b: { from: 0, path } }, 55);
    expect(paused.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // With a longer allowance the same pause is taken for a swap.
    const lenient = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalMaxTurnSeconds: 1.5 });
    play(lenient, { b: { from: 0, path } }, 55);
    expect(lenient.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
  });

  it('does not split a bee that flew over the zone, with reversalMaxLengthsPerSecond', () => {
    // A wanderer 40 px long crosses the frame in the air, passing 30 px inside the zone's edge (seen from above, it
    // flies over the zone): 160 px across the zone in 0.4 s, 10 body lengths a second.
    const flight = { f: { from: 0, path: walk([[100, 230], [240, 30], [400, 30], [540, 230]], 4), length: 40 } };
    const checked = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalMaxLengthsPerSecond: 6 });
    play(checked, flight, 15);
    expect(checked.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    const unchecked = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(unchecked, flight, 15);
    expect(unchecked.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
    // Two walking bees swapped at the slot (170 px in 2 s: 2.1 lengths a second) are still split.
    const walking = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalMaxLengthsPerSecond: 6 });
    play(walking, { s: { from: 0, path: walk([[320, 200], [320, 30], [320, 200]], 20), length: 40 } }, 45);
    expect(walking.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
    // The speed is measured in the bee's own lengths: a bee 120 px long (a close camera) at the same pixel speed walks.
    const close = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalMaxLengthsPerSecond: 6 });
    play(close, { c: { from: 0, path: flight.f.path, length: 120 } }, 15);
    expect(close.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
    // Without lengths there is nothing to measure against: split as before.
    const unmeasured = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalMaxLengthsPerSecond: 6 });
    play(unmeasured, { f: { from: 0, path: flight.f.path } }, 15);
    expect(unmeasured.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
  });

  it('still splits a track that paused at its turn when the bee it met there came from the far side and vanished', () => {
    // Track s walks in to y = 30 and stands 0.8 s as above; track o came out of the slot to the same spot and was lost
    // there as s stood on it (their peaks merged), and s then walked off with that bee.
    const stand = Array.from({ length: 8 }, (): Point => [320, 30]);
    const path = [...walk([[320, 200], [320, 30]], 20), ...stand, ...walk([[320, 30], [320, 200]], 20)];
    const partner = walk([[320, 5], [322, 30]], 18);
    const swapped = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(swapped, { s: { from: 0, path }, o: { from: 6, path: partner } }, 55);
    expect(swapped.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
    // The same bee beside a guard who stays in view: a bee turning round, one track, nothing counted.
    const guarded = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(guarded, { s: { from: 0, path }, g: { from: 0, path: Array.from({ length: 55 }, (): Point => [335, 30]) } }, 55);
    expect(guarded.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // A bee that vanished far from the turn, or long before it, says nothing about it.
    const elsewhere = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(elsewhere, { s: { from: 0, path }, o: { from: 6, path: walk([[400, 5], [400, 30]], 18) } }, 55);
    expect(elsewhere.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    const earlier = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(earlier, { s: { from: 0, path }, o: { from: 0, path: walk([[320, 5], [322, 30]], 5) } }, 55);
    expect(earlier.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
  });

  it('with reversalHiddenShare, still splits a paused track when the bee it followed shrank to a sliver over there', () => {
    // A forager walks up into the slot and all but vanishes (its box 40 px long on the board, 12 px at the last) while
    // a bee coming out at that spot takes its track over: slow bees, one peak standing 0.8 s at the turn.
    const stand = Array.from({ length: 8 }, (): Point => [320, 30]);
    const path = [...walk([[320, 200], [320, 30]], 20), ...stand, ...walk([[320, 30], [320, 200]], 20)];
    const sliver = path.map((_, i) => (i >= 22 && i <= 26 ? 12 : 40));
    const swapped = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalHiddenShare: 0.65 });
    play(swapped, { s: { from: 0, path, visible: sliver } }, 55);
    expect(swapped.flush()[0]).toMatchObject({ beesIn: 1, beesOut: 1 });
    // A bee that turns round with its head in the slot keeps most of its body in view (30 of 40 px): not split.
    const headIn = path.map((_, i) => (i >= 22 && i <= 26 ? 30 : 40));
    const turned = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalHiddenShare: 0.65 });
    play(turned, { b: { from: 0, path, visible: headIn } }, 55);
    expect(turned.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // Without the option, or without visible lengths to compare, the pause decides: not split.
    const unchecked = new MovementAggregator({ zone, fps, reversalDepthPx: 20 });
    play(unchecked, { s: { from: 0, path, visible: sliver } }, 55);
    expect(unchecked.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    const unmeasured = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalHiddenShare: 0.65 });
    play(unmeasured, { s: { from: 0, path } }, 55);
    expect(unmeasured.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
    // A sliver on the side the track came from (a bee half-seen as it landed) says nothing about the turn.
    const landed = path.map((_, i) => (i < 3 ? 12 : i >= 22 && i <= 26 ? 30 : 40));
    const landing = new MovementAggregator({ zone, fps, reversalDepthPx: 20, reversalHiddenShare: 0.65 });
    play(landing, { b: { from: 0, path, visible: landed } }, 55);
    expect(landing.flush()[0]).toMatchObject({ beesIn: 0, beesOut: 0 });
  });

  it('attributes a crossing to the interval in which it happened, across a boundary', () => {
    const aggregator = new MovementAggregator({ zone, fps, intervalSeconds: 2 });
    // Crosses inwards around frame 10 (t = 1 s), track ends at 3.5 s in the next interval.
    play(aggregator, { a: { from: 0, path: [...walk([[320, 200], [320, 20]], 12), ...Array.from({ length: 22 }, () => [320, 20] as Point)] } }, 40);
    const [first, second] = aggregator.flush();
    expect(first).toMatchObject({ intervalStart: T0, beesIn: 1 });
    expect(second).toMatchObject({ intervalStart: T0 + 2, beesIn: 0 });
  });

  it('measures speed in pixels per nominal frame from real time gaps', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    // 5 px per observation, but observations are 2 frames apart (every other frame skipped): 2.5 px/frame.
    for (let i = 0; i < 10; i++) aggregator.observeFrame(T0 + (2 * i) / fps, [{ trackId: 1, x: 100 + 5 * i, y: 300 }]);
    const [interval] = aggregator.flush();
    expect(interval!.avgSpeed).toBeCloseTo(2.5);
    expect(interval!.p95Speed).toBeCloseTo(2.5);
  });

  it('counts stationary bees and one interaction per episode', () => {
    const aggregator = new MovementAggregator({ zone, fps, interactionMinFrames: 3 });
    for (let f = 0; f < 50; f++) {
      const apart = f >= 20 && f < 30;
      aggregator.observeFrame(T0 + f / fps, [
        { trackId: 'fanner', x: 100 + (f % 2), y: 300 },
        { trackId: 'visitor', x: apart ? 300 : 120, y: 300 },
      ]);
    }
    const [interval] = aggregator.flush();
    expect(interval!.stationaryBees).toBe(1); // the visitor moved 180 px
    expect(interval!.beeInteractions).toBe(2); // close, apart, close again: two episodes
    expect(interval!.detectedBees).toBe(2);
  });

  it('takes a new interactionMinFrames while counting', () => {
    const aggregator = new MovementAggregator({ zone, fps, interactionMinFrames: 3 });
    aggregator.setInteractionMinFrames(2);
    // Two bees close for two frames, apart, close for one frame: one meeting at 2, none at 3.
    const closeAt = [true, true, false, true, false];
    closeAt.forEach((close, f) =>
      aggregator.observeFrame(T0 + f / fps, [
        { trackId: 'a', x: 100, y: 300 },
        { trackId: 'b', x: close ? 120 : 300, y: 300 },
      ]),
    );
    expect(aggregator.flush()[0]!.beeInteractions).toBe(1);
    expect(() => aggregator.setInteractionMinFrames(0)).toThrow('interactionMinFrames must be a whole number of at least 1, got 0');
  });

  it('emits closed intervals once and sends a late crossing to the oldest open interval', () => {
    const aggregator = new MovementAggregator({ zone, fps, intervalSeconds: 1 });
    aggregator.observeFrame(T0, [{ trackId: 'x', x: 320, y: 300 }]);
    aggregator.observeFrame(T0 + 0.5, [{ trackId: 'x', x: 320, y: 20 }]);
    aggregator.observeFrame(T0 + 1.5, []);
    expect(aggregator.closeIntervalsBefore(T0 + 1).map((i) => i.intervalStart)).toEqual([T0]);
    expect(aggregator.closeIntervalsBefore(T0 + 1)).toEqual([]);
    expect(aggregator.endTrack('x')).toMatchObject({ direction: 'in' });
    expect(aggregator.flush()).toEqual([expect.objectContaining({ intervalStart: T0 + 1, beesIn: 1 })]);
  });

  it('shows the open intervals as they stand without closing them, with the speed samples behind their speeds', () => {
    const aggregator = new MovementAggregator({ zone, fps, intervalSeconds: 1 });
    aggregator.observeFrame(T0, [{ trackId: 'x', x: 320, y: 300 }]);
    aggregator.observeFrame(T0 + 0.1, [{ trackId: 'x', x: 320, y: 290 }]);
    aggregator.observeFrame(T0 + 1.2, [{ trackId: 'x', x: 320, y: 20 }]);
    const open = aggregator.openIntervals();
    expect(open.map((i) => [i.intervalStart, i.frames, i.speedSamples])).toEqual([[T0, 2, 1], [T0 + 1, 1, 0]]);
    expect(open[0]!.avgSpeed).toBeCloseTo(10);
    expect(aggregator.endTrack('x')).toMatchObject({ direction: 'in' });
    // Still open: the crossing lands in the interval it happened in, and both are emitted once.
    expect(aggregator.flush().map((i) => [i.intervalStart, i.beesIn])).toEqual([[T0, 0], [T0 + 1, 1]]);
    expect(aggregator.openIntervals()).toEqual([]);
  });

  it('refuses frames out of time order', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    aggregator.observeFrame(T0 + 1, []);
    expect(() => aggregator.observeFrame(T0, [])).toThrow(/time order/);
  });

  it('shapes an interval as the movement record the cloud takes', () => {
    const aggregator = new MovementAggregator({ zone, fps });
    aggregator.observeFrame(T0 + 1, []);
    const [interval] = aggregator.flush();
    expect(toMovementInput(interval!, 'hive-1', 7)).toEqual({
      hiveId: 'hive-1', boxId: 7, beesOut: 0, beesIn: 0, netFlow: 0, stationaryBees: 0, detectedBees: 0, beeInteractions: 0, timestamp: T0 + 60,
    });
  });
});

describe('percentile', () => {
  it('uses the nearest rank', () => {
    expect(percentile([], 95)).toBeUndefined();
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile(Array.from({ length: 100 }, (_, i) => i + 1), 95)).toBe(95);
  });
});
