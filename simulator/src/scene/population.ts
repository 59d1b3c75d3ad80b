import { streamFor, type Prng } from '../random/prng.ts';
import { plannedCrossings, type Scenario } from '../scenario/scenario.ts';
import { beeStateAt, visibleBox, type BeePlan, type BeeRole } from './bee.ts';
import { createLayout, zoneSide, type Layout } from './layout.ts';
import { PathBuilder, shiftSegments, type Vec } from './motion.ts';

/**
 * Turns a scenario into the bees of one clip. Entrance crossings are planned first (how many, and when),
 * then each forager's path is built and shifted in time so that its crossing happens at the planned moment;
 * this makes the ground-truth traffic match the scenario exactly. Residents (wanderers, fanners, guards)
 * are added until their time on screen matches the scenario's density.
 */

export interface Population {
  scenario: Scenario;
  layout: Layout;
  /** Sorted by start time. */
  plans: BeePlan[];
  frameCount: number;
}

const WALK_BODY_LENGTHS_PER_SECOND = 2.2;
const FLY_BODY_LENGTHS_PER_SECOND = 11;
/** Step for finding when a planned bee crosses the zone edge: fine next to any frame rate used here. */
const SAMPLE_STEP = 1 / 100;

interface Geometry {
  layout: Layout;
  L: number;
  W: number;
  H: number;
  /** Lowest y (nearest the slot) a board point may have while staying clearly outside the zone. */
  boardTop: number;
}

function geometry(layout: Layout): Geometry {
  const L = layout.beeLength;
  const zoneBottom = Math.max(...layout.zone.map((p) => p[1]));
  return { layout, L, W: layout.width, H: layout.height, boardTop: zoneBottom + layout.hysteresisPx + 0.45 * L };
}

function boardPoint(g: Geometry, rng: Prng, nearSlot = false, margin = 0): Vec {
  const top = g.boardTop + margin;
  const bottom = g.H * 0.94 - margin;
  const u = nearSlot ? rng.next() ** 2 : rng.next();
  return [rng.range(g.W * 0.06 + margin, g.W * 0.94 - margin), top + (bottom - top) * u];
}

function slotX(g: Geometry, rng: Prng): number {
  return rng.range(g.layout.slotLeft + 0.6 * g.L, g.layout.slotRight - 0.6 * g.L);
}

/** Where a bee's centre is once it is fully inside the hive. */
function insideSlot(g: Geometry, x: number): Vec {
  return [x, g.layout.slotTop - 0.65 * g.L];
}

/** Where a walking bee's centre is as its head reaches the slot. */
function slotMouth(g: Geometry, x: number): Vec {
  return [x, g.layout.slotBottom + 0.45 * g.L];
}

/** A point just beyond a frame edge (left, right or bottom), far enough out that the bee is fully hidden. */
function offscreen(g: Geometry, rng: Prng, altitude: number, towards?: Vec): Vec {
  const out = 0.85 * g.L * (1 + 0.35 * altitude) + 2;
  const sides: Array<'left' | 'right' | 'bottom'> = ['left', 'right', 'bottom', 'bottom'];
  let side = rng.pick(sides);
  if (towards && rng.chance(0.6)) {
    // Prefer the nearest edge: bees rarely cross the whole board to leave it.
    const distances = { left: towards[0], right: g.W - towards[0], bottom: g.H - towards[1] };
    side = (Object.keys(distances) as Array<keyof typeof distances>).reduce((a, b) => (distances[a] <= distances[b] ? a : b));
  }
  const ySpan = (): number => rng.range(Math.max(g.boardTop, g.H * 0.3), g.H * 0.97);
  if (side === 'left') return [-out, ySpan()];
  if (side === 'right') return [g.W + out, ySpan()];
  return [rng.range(g.W * 0.05, g.W * 0.95), g.H + out];
}

function headingFromTo(a: Vec, b: Vec): number {
  return Math.atan2(b[1] - a[1], b[0] - a[0]);
}

/** Control point that bends a flight sideways by up to `bend` of its length. */
function bendControl(rng: Prng, a: Vec, b: Vec, bend: number): Vec {
  const mx = (a[0] + b[0]) / 2;
  const my = (a[1] + b[1]) / 2;
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const k = rng.range(-bend, bend);
  return [mx - dy * k, my + dx * k];
}

interface Speeds {
  walk: number;
  fly: number;
}

function individualSpeeds(g: Geometry, scenario: Scenario, rng: Prng): Speeds {
  return {
    walk: WALK_BODY_LENGTHS_PER_SECOND * g.L * scenario.speed * rng.range(0.75, 1.3),
    fly: FLY_BODY_LENGTHS_PER_SECOND * g.L * scenario.speed * rng.range(0.8, 1.25),
  };
}

/** Starts a path for a bee arriving on the board (by air or on foot), ending at `landing`. */
function arrive(g: Geometry, rng: Prng, speeds: Speeds, landing: Vec, flying: boolean): PathBuilder {
  if (flying) {
    const hover: Vec = [landing[0] + rng.range(-1.2, 1.2) * g.L, landing[1] + rng.range(0.4, 1.4) * g.L];
    const entry = offscreen(g, rng, 0.9);
    const path = new PathBuilder(entry, 0.9, headingFromTo(entry, hover));
    path.flyTo(hover, speeds.fly, 0.25, 'out', bendControl(rng, entry, hover, 0.25));
    path.flyTo(landing, speeds.fly * 0.15, 0, 'inout');
    return path;
  }
  const entry = offscreen(g, rng, 0, landing);
  const path = new PathBuilder(entry, 0, headingFromTo(entry, landing));
  path.walkTo(landing, speeds.walk);
  return path;
}

/** Ends a path by leaving the frame (taking off, or walking over an edge). */
function leave(g: Geometry, rng: Prng, speeds: Speeds, path: PathBuilder, flying: boolean): void {
  if (flying) {
    if (rng.chance(0.6)) path.hold(rng.range(0.1, 0.7));
    const exit = offscreen(g, rng, 0.9);
    path.flyTo(exit, speeds.fly, 0.9, 'in', bendControl(rng, path.at, exit, 0.3));
  } else {
    path.walkTo(offscreen(g, rng, 0, path.at), speeds.walk);
  }
}

function finishPlan(id: number, role: BeeRole, rng: Prng, path: PathBuilder, shift: number): BeePlan {
  const segments = shiftSegments(path.segments, shift);
  return {
    id,
    role,
    size: rng.range(0.86, 1.14),
    palette: rng.chance(0.7) ? 0 : 1,
    seed: rng.nextUint32(),
    segments,
    start: segments[0]?.t0 ?? shift,
    end: segments[segments.length - 1]?.t1 ?? shift,
  };
}

function shiftPlan(plan: BeePlan, by: number): BeePlan {
  return { ...plan, segments: shiftSegments(plan.segments, by), start: plan.start + by, end: plan.end + by };
}

type Side = 'inside' | 'outside' | 'unseen';

/** Which side of the zone the bee's visible centre is on, sampled finely over its whole plan. */
function sideSamples(layout: Layout, plan: BeePlan): Array<{ t: number; side: Side | undefined }> {
  const samples: Array<{ t: number; side: Side | undefined }> = [];
  for (let t = plan.start; t <= plan.end; t += SAMPLE_STEP) {
    const state = beeStateAt(layout, plan, t);
    const box = state && visibleBox(layout, state);
    samples.push({ t, side: box ? zoneSide(layout, box.x, box.y) : 'unseen' });
  }
  return samples;
}

/**
 * For a bee walking into the slot (plan-local times): when it was first inside the zone, when it entered it
 * for the last time (the moment a counter records the crossing) and when it vanished. Throws if it did not
 * vanish from inside the zone, which would mean the zone does not cover the slot.
 */
function enteringTimes(layout: Layout, plan: BeePlan): { firstInside: number; entered: number; vanish: number } {
  const samples = sideSamples(layout, plan);
  let last = samples.length - 1;
  while (last >= 0 && samples[last]?.side === 'unseen') last--;
  const final = samples[last];
  if (!final || final.side !== 'inside') throw new Error(`bee ${plan.id} vanished into the slot outside the entrance zone`);
  let entered = final.t;
  let i = last;
  for (; i >= 0 && samples[i]?.side !== 'outside'; i--) {
    if (samples[i]?.side === 'inside') entered = (samples[i] as { t: number }).t;
  }
  if (i < 0) throw new Error(`bee ${plan.id} walked into the slot without being seen outside the entrance zone`);
  const firstInside = samples.find((sample) => sample.side === 'inside')?.t ?? entered;
  return { firstInside, entered, vanish: final.t + SAMPLE_STEP };
}

/**
 * For a bee coming out of the slot (plan-local times): when it was last inside the zone before it first
 * left, and when it left for the last time (a bee flying off may cross back over the zone).
 */
function leavingTimes(layout: Layout, plan: BeePlan): { lastInsideBeforeLeaving: number; left: number } {
  let side: Side | undefined;
  let lastInside: number | undefined;
  let lastInsideBeforeLeaving: number | undefined;
  let left: number | undefined;
  for (const sample of sideSamples(layout, plan)) {
    if (sample.side === 'inside') {
      lastInside = sample.t;
      side = 'inside';
    } else if (sample.side === 'outside') {
      if (side === undefined) throw new Error(`bee ${plan.id} came out of the slot outside the entrance zone`);
      if (side === 'inside') left = sample.t;
      lastInsideBeforeLeaving ??= lastInside;
      side = 'outside';
    }
  }
  if (side !== 'outside' || left === undefined || lastInsideBeforeLeaving === undefined) throw new Error(`bee ${plan.id} never left the entrance zone`);
  return { lastInsideBeforeLeaving, left };
}

/**
 * For a bee that visits the zone and leaves it again (plan-local times): the last time it was seen outside the
 * zone before it first went in, and the first time it was seen outside again after it was last inside, each at the
 * near end of a stretch outside that lasts at least `minStretch` seconds. Undefined when it never went in, or
 * was not outside that long on both sides of its visit.
 */
function visitWindow(samples: ReadonlyArray<{ t: number; side: Side | undefined }>, minStretch: number): { outsideBefore: number; outsideAfter: number } | undefined {
  const first = samples.findIndex((sample) => sample.side === 'inside');
  if (first < 0) return undefined;
  let last = samples.length - 1;
  while (samples[last]?.side !== 'inside') last--;
  let before = first - 1;
  while (before >= 0 && samples[before]?.side !== 'outside') before--;
  let after = last + 1;
  while (after < samples.length && samples[after]?.side !== 'outside') after++;
  const outsideFor = (from: number, step: number): number => {
    let i = from;
    while (samples[i + step]?.side === 'outside') i += step;
    return Math.abs((samples[i] as { t: number }).t - (samples[from] as { t: number }).t);
  };
  if (before < 0 || after >= samples.length || outsideFor(before, -1) < minStretch || outsideFor(after, 1) < minStretch) return undefined;
  return { outsideBefore: (samples[before] as { t: number }).t, outsideAfter: (samples[after] as { t: number }).t };
}

/** Clamps into [lo, hi]; when the range is empty (a very short clip) the upper end wins. */
function clamp(value: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, value));
}

function sortedUniform(rng: Prng, count: number, lo: number, hi: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(rng.range(lo, hi));
  return times.sort((a, b) => a - b);
}

export function planPopulation(scenario: Scenario): Population {
  const { camera, durationSeconds: duration } = scenario;
  const layout = createLayout(camera.width, camera.height, camera.beeLengthPx);
  const g = geometry(layout);
  const plans: BeePlan[] = [];
  let nextId = 1;
  const frameGap = 1 / camera.fps;
  const frameCount = Math.max(1, Math.round(duration * camera.fps));
  const lastFrame = (frameCount - 1) * frameGap;
  const earliest = Math.min(1.5, duration * 0.25);
  const latest = duration - Math.min(0.3, duration * 0.1);
  const planned = plannedCrossings(scenario);

  // Foragers going in: land or walk in, head for the slot, vanish into it at the planned moment.
  const inRng = streamFor(scenario.seed, 'foragers-in');
  for (const target of sortedUniform(inRng, planned.in, earliest, latest)) {
    const rng = inRng.fork(`bee-${nextId}`);
    const speeds = individualSpeeds(g, scenario, rng);
    const path = arrive(g, rng, speeds, boardPoint(g, rng, true), rng.chance(scenario.traffic.flyShare));
    if (rng.chance(0.35)) path.hold(rng.range(0.2, 1.2));
    if (rng.chance(0.4)) path.walkTo(boardPoint(g, rng, true), speeds.walk);
    const x = slotX(g, rng);
    path.walkTo(slotMouth(g, x), speeds.walk);
    path.walkTo(insideSlot(g, x), speeds.walk * 0.7);
    const local = finishPlan(nextId++, 'forager-in', rng, path, 0);
    const { firstInside, entered, vanish } = enteringTimes(layout, local);
    // A counter must see the bee come from outside the zone and see it vanish, both within the clip.
    const when = clamp(target, entered - firstInside + 2 * frameGap, duration - frameGap - (vanish - entered));
    plans.push({ ...shiftPlan(local, when - entered), plannedCrossing: { direction: 'in', t: when } });
  }

  // Foragers going out: emerge from the slot, walk off the zone, take off or walk away.
  const outRng = streamFor(scenario.seed, 'foragers-out');
  for (const target of sortedUniform(outRng, planned.out, Math.min(earliest, 2 * frameGap), latest)) {
    const rng = outRng.fork(`bee-${nextId}`);
    const speeds = individualSpeeds(g, scenario, rng);
    const x = slotX(g, rng);
    const path = new PathBuilder(insideSlot(g, x), 0, Math.PI / 2);
    path.walkTo(slotMouth(g, x), speeds.walk * 0.7);
    if (rng.chance(0.4)) path.walkTo(boardPoint(g, rng, true), speeds.walk);
    path.walkTo(boardPoint(g, rng, true), speeds.walk);
    leave(g, rng, speeds, path, rng.chance(scenario.traffic.flyShare));
    const local = finishPlan(nextId++, 'forager-out', rng, path, 0);
    const { lastInsideBeforeLeaving, left } = leavingTimes(layout, local);
    // The bee must be seen inside the zone within the clip, or no counter could know it came from the hive.
    const when = clamp(target, left - lastInsideBeforeLeaving + 2 * frameGap, duration - frameGap);
    plans.push({ ...shiftPlan(local, when - left), plannedCrossing: { direction: 'out', t: when } });
  }

  // Residents are added until their combined time in the clip matches the wanted density.
  const addResidents = (label: string, mean: number, build: (rng: Prng, id: number) => BeePlan): void => {
    const rng = streamFor(scenario.seed, label);
    let occupancy = 0;
    const wanted = mean * duration;
    for (let guard = 0; occupancy < wanted && guard < 20_000; guard++) {
      const plan = build(rng.fork(`bee-${nextId}`), nextId++);
      const overlap = Math.min(plan.end, duration) - Math.max(plan.start, 0);
      if (overlap <= 0) continue;
      occupancy += overlap;
      plans.push(plan);
    }
  };

  const standAtSlot = (rng: Prng, id: number, role: 'fanner' | 'guard'): BeePlan => {
    const speeds = individualSpeeds(g, scenario, rng);
    const x = slotX(g, rng);
    const path = new PathBuilder(insideSlot(g, x), 0, Math.PI / 2);
    const spot: Vec = [x + rng.range(-0.5, 0.5) * g.L, layout.slotBottom + rng.range(role === 'fanner' ? 0.3 : 0.2, 0.7) * g.L];
    path.walkTo(spot, speeds.walk * 0.6);
    // Fanners and guards keep their spot for minutes, so a counter sees them as stationary.
    const stay = role === 'fanner' ? rng.range(40, 180) : rng.range(30, 150);
    if (role === 'fanner') {
      // Fanners face the entrance and buzz their wings to ventilate the hive.
      path.hold(0.4, 'stand', -Math.PI / 2 + rng.range(-0.25, 0.25));
      path.hold(stay, 'fan', -Math.PI / 2 + rng.range(-0.25, 0.25));
    } else {
      let left = stay;
      while (left > 0) {
        const pause = Math.min(left, rng.range(3, 15));
        path.hold(pause, 'stand', Math.PI / 2 + rng.range(-0.9, 0.9));
        left -= pause;
        // A guard shifts its feet now and then but stays on its spot.
        if (left > 0) path.walkTo([spot[0] + rng.range(-0.12, 0.12) * g.L, spot[1] + rng.range(-0.05, 0.05) * g.L], speeds.walk * 0.4);
      }
    }
    path.walkTo(insideSlot(g, path.at[0]), speeds.walk * 0.6);
    return finishPlan(id, role, rng, path, rng.range(-200, duration));
  };
  addResidents('fanners', scenario.density.fanners, (rng, id) => standAtSlot(rng, id, 'fanner'));
  addResidents('guards', scenario.density.guards, (rng, id) => standAtSlot(rng, id, 'guard'));

  const wander = (rng: Prng, path: PathBuilder, speeds: Speeds, steps: number): void => {
    for (let i = 0; i < steps; i++) {
      const from = path.at;
      const to: Vec = [from[0] + rng.range(-5, 5) * g.L, from[1] + rng.range(-4, 4) * g.L];
      const clamped: Vec = [Math.min(g.W * 0.94, Math.max(g.W * 0.06, to[0])), Math.min(g.H * 0.94, Math.max(g.boardTop, to[1]))];
      path.walkTo(clamped, speeds.walk * rng.range(0.6, 1));
      if (rng.chance(0.6)) path.hold(rng.range(0.3, 2.5));
    }
  };
  addResidents('wanderers', scenario.density.wanderers, (rng, id) => {
    const speeds = individualSpeeds(g, scenario, rng);
    const path = arrive(g, rng, speeds, boardPoint(g, rng), rng.chance(scenario.traffic.flyShare));
    wander(rng, path, speeds, 2 + rng.int(3));
    leave(g, rng, speeds, path, rng.chance(scenario.traffic.flyShare));
    return finishPlan(id, 'wanderer', rng, path, rng.range(-40, duration));
  });

  // Meetings: two bees walk up to each other, stand face to face for a moment, then go their ways.
  const meetRng = streamFor(scenario.seed, 'meetings');
  const meetings = Math.round((scenario.density.meetingsPerMinute * (duration + 10)) / 60);
  for (let m = 0; m < meetings; m++) {
    const rng = meetRng.fork(`meeting-${m}`);
    const when = rng.range(-5, duration);
    const hold = rng.range(0.8, 3);
    const centre = boardPoint(g, rng, false, 0.6 * g.L);
    const angle = rng.range(0, 2 * Math.PI);
    const offset: Vec = [Math.cos(angle) * 0.42 * g.L, Math.sin(angle) * 0.42 * g.L];
    for (const side of [-1, 1]) {
      const beeRng = rng.fork(`side-${side}`);
      const speeds = individualSpeeds(g, scenario, beeRng);
      const spot: Vec = [centre[0] + side * offset[0], centre[1] + side * offset[1]];
      const path = arrive(g, beeRng, speeds, boardPoint(g, beeRng), beeRng.chance(scenario.traffic.flyShare));
      path.walkTo(spot, speeds.walk);
      const arrival = path.now;
      const wait = side < 0 ? beeRng.range(0, 1.5) : 0;
      path.hold(wait + hold, 'stand', side < 0 ? angle : angle + Math.PI);
      wander(beeRng, path, speeds, beeRng.int(2));
      leave(g, beeRng, speeds, path, beeRng.chance(scenario.traffic.flyShare));
      plans.push(finishPlan(nextId++, 'wanderer', beeRng, path, when - wait - arrival));
    }
  }

  // Turn-backs: a bee walks up to the slot, hesitates with its head at it or in it, and turns away.
  const turnRng = streamFor(scenario.seed, 'turn-backs');
  const turnBacks = Math.round(((scenario.density.turnBacksPerMinute ?? 0) * duration) / 60);
  for (let k = 0; k < turnBacks; k++) {
    const rng = turnRng.fork(`turn-back-${k}`);
    const speeds = individualSpeeds(g, scenario, rng);
    const path = arrive(g, rng, speeds, boardPoint(g, rng, true), rng.chance(scenario.traffic.flyShare));
    // The centre stops between a tenth of a bee length into the slot and half a length below it: 0.4 to 0.9 bee
    // length inside the zone.
    path.walkTo([slotX(g, rng), layout.slotBottom + rng.range(-0.1, 0.5) * g.L], speeds.walk * 0.7);
    const atSlot = path.now;
    path.hold(rng.range(0.2, 1.5), 'stand', -Math.PI / 2 + rng.range(-0.4, 0.4));
    path.walkTo(boardPoint(g, rng, true), speeds.walk);
    leave(g, rng, speeds, path, rng.chance(scenario.traffic.flyShare));
    const local = finishPlan(nextId++, 'turn-back', rng, path, 0);
    const target = rng.range(earliest, latest) - atSlot;
    // The clip shows the bee outside the zone before its visit and again after it, or the counting rules would
    // take it for a bee that went in (still in the zone when the clip ends) or came out (in it when the clip
    // begins). A visit that does not fit in the clip is left out.
    const visit = visitWindow(sideSamples(layout, local), 2 * frameGap);
    if (!visit) continue;
    const lo = 2 * frameGap - visit.outsideBefore;
    const hi = lastFrame - 2 * frameGap - visit.outsideAfter;
    if (lo > hi) continue;
    plans.push(shiftPlan(local, clamp(target, lo, hi)));
  }

  const visible = plans.filter((plan) => plan.end >= 0 && plan.start <= duration);
  visible.sort((a, b) => a.start - b.start || a.id - b.id);
  return { scenario, layout, plans: visible, frameCount };
}

