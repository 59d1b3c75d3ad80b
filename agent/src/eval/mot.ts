import { assign } from '../track/hungarian.ts';

/**
 * CLEAR-MOT (MOTA, MOTP) and identity (IDF1) metrics with py-motmetrics' definitions, on centre distance: a
 * hypothesis can stand for a true object only if its centre is closer than `maxDistance` (bees are small and
 * fast, so box overlap says little). Pure: feed frames in order, read the summary.
 */

export type ObjectId = number | string;

/** A true bee or a tracker's hypothesis in one frame: its id and centre, pixels. */
export interface Labelled {
  id: ObjectId;
  x: number;
  y: number;
}

export interface MotSummary {
  frames: number;
  /** True objects summed over frames (the "GT" of MOTA). */
  objects: number;
  /** Hypotheses summed over frames. */
  hypotheses: number;
  /** Frame-level correspondences, switches included. */
  matches: number;
  misses: number;
  falsePositives: number;
  /** A true object matched to another hypothesis than the one it was last matched to. */
  switches: number;
  /** A tracked object lost and then tracked again (each miss stretch inside its tracked span). */
  fragmentations: number;
  /** 1 − (misses + false positives + switches) / objects; can be negative. */
  mota: number;
  /** Mean centre distance of the correspondences, pixels. */
  motp: number;
  precision: number;
  recall: number;
  idtp: number;
  idfp: number;
  idfn: number;
  /** 2·IDTP / (2·IDTP + IDFP + IDFN) under the best one-to-one assignment of whole trajectories. */
  idf1: number;
  idPrecision: number;
  idRecall: number;
  truthTracks: number;
  hypothesisTracks: number;
}

/** Minimum-cost matching of points within `maxDistance` (the Hungarian method: most pairs, then least distance). */
export function matchByDistance(truth: readonly { x: number; y: number }[], found: readonly { x: number; y: number }[], maxDistance: number): [number, number, number][] {
  if (truth.length === 0 || found.length === 0) return [];
  const costs = truth.map((t) => found.map((f) => gated(t, f, maxDistance)));
  return assign(costs).map(([i, j]) => [i, j, costs[i]![j]!]);
}

function gated(a: { x: number; y: number }, b: { x: number; y: number }, maxDistance: number): number {
  const d = Math.hypot(a.x - b.x, a.y - b.y);
  return d < maxDistance ? d : Infinity;
}

/**
 * Accumulates frames like py-motmetrics' MOTAccumulator: a true object keeps the hypothesis it was last matched
 * to while that one is present and within the gate; the rest are matched by the Hungarian method; a match to
 * another hypothesis than the last one is a switch.
 */
export class MotAccumulator {
  private frames = 0;
  private objects = 0;
  private hypotheses = 0;
  private matches = 0;
  private misses = 0;
  private falsePositives = 0;
  private switches = 0;
  private fragmentations = 0;
  private distanceSum = 0;
  /** Each true object's most recent partner, however long ago. */
  private readonly lastPartner = new Map<ObjectId, ObjectId>();
  /** True objects whose last frame was a miss after having been matched: the next match closes a fragment. */
  private readonly lostAfterMatch = new Set<ObjectId>();
  /** Frames in which each pair was within the gate, and frames each trajectory was present (IDF1). */
  private readonly pairFrames = new Map<ObjectId, Map<ObjectId, number>>();
  private readonly truthFrames = new Map<ObjectId, number>();
  private readonly hypothesisFrames = new Map<ObjectId, number>();

  constructor(private readonly maxDistance: number) {
    if (!(maxDistance > 0)) throw new Error(`maxDistance must be positive, got ${maxDistance}`);
  }

  update(truth: readonly Labelled[], hypotheses: readonly Labelled[]): void {
    checkUnique(truth, 'truth');
    checkUnique(hypotheses, 'hypothesis');
    this.frames++;
    this.objects += truth.length;
    this.hypotheses += hypotheses.length;
    const distances = truth.map((t) => hypotheses.map((h) => gated(t, h, this.maxDistance)));

    for (const [i, t] of truth.entries()) {
      this.truthFrames.set(t.id, (this.truthFrames.get(t.id) ?? 0) + 1);
      for (const [j, h] of hypotheses.entries()) {
        if (!Number.isFinite(distances[i]![j]!)) continue;
        let row = this.pairFrames.get(t.id);
        if (!row) this.pairFrames.set(t.id, (row = new Map()));
        row.set(h.id, (row.get(h.id) ?? 0) + 1);
      }
    }
    for (const h of hypotheses) this.hypothesisFrames.set(h.id, (this.hypothesisFrames.get(h.id) ?? 0) + 1);

    const truthTaken = new Array<boolean>(truth.length).fill(false);
    const hypothesisTaken = new Array<boolean>(hypotheses.length).fill(false);
    const matched = (i: number, j: number) => {
      truthTaken[i] = true;
      hypothesisTaken[j] = true;
      const id = truth[i]!.id;
      this.matches++;
      this.distanceSum += distances[i]![j]!;
      this.lastPartner.set(id, hypotheses[j]!.id);
      if (this.lostAfterMatch.delete(id)) this.fragmentations++;
    };

    // 1. Correspondences that still hold.
    const hypothesisIndex = new Map(hypotheses.map((h, j) => [h.id, j]));
    for (const [i, t] of truth.entries()) {
      const partner = this.lastPartner.get(t.id);
      if (partner === undefined) continue;
      const j = hypothesisIndex.get(partner);
      if (j !== undefined && !hypothesisTaken[j] && Number.isFinite(distances[i]![j]!)) matched(i, j);
    }

    // 2. The rest by minimum total distance.
    const freeTruth = truth.flatMap((_, i) => (truthTaken[i] ? [] : [i]));
    const freeHypotheses = hypotheses.flatMap((_, j) => (hypothesisTaken[j] ? [] : [j]));
    if (freeTruth.length > 0 && freeHypotheses.length > 0) {
      const costs = freeTruth.map((i) => freeHypotheses.map((j) => distances[i]![j]!));
      for (const [a, b] of assign(costs)) {
        const i = freeTruth[a]!;
        const j = freeHypotheses[b]!;
        const previous = this.lastPartner.get(truth[i]!.id);
        if (previous !== undefined && previous !== hypotheses[j]!.id) this.switches++;
        matched(i, j);
      }
    }

    // 3. Misses and false positives.
    for (const [i, t] of truth.entries()) {
      if (truthTaken[i]) continue;
      this.misses++;
      if (this.lastPartner.has(t.id)) this.lostAfterMatch.add(t.id);
    }
    for (const taken of hypothesisTaken) if (!taken) this.falsePositives++;
  }

  summary(): MotSummary {
    const { idtp } = this.identityMatches();
    const idfn = this.objects - idtp;
    const idfp = this.hypotheses - idtp;
    const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
    return {
      frames: this.frames,
      objects: this.objects,
      hypotheses: this.hypotheses,
      matches: this.matches,
      misses: this.misses,
      falsePositives: this.falsePositives,
      switches: this.switches,
      fragmentations: this.fragmentations,
      mota: this.objects > 0 ? 1 - (this.misses + this.falsePositives + this.switches) / this.objects : 0,
      motp: ratio(this.distanceSum, this.matches),
      precision: ratio(this.matches, this.hypotheses),
      recall: ratio(this.matches, this.objects),
      idtp,
      idfp,
      idfn,
      idf1: ratio(2 * idtp, 2 * idtp + idfp + idfn),
      idPrecision: ratio(idtp, idtp + idfp),
      idRecall: ratio(idtp, idtp + idfn),
      truthTracks: this.truthFrames.size,
      hypothesisTracks: this.hypothesisFrames.size,
    };
  }

  /**
   * The one-to-one assignment of true to hypothesised trajectories that maximises the frames where partners
   * are within the gate (equivalently minimises IDFP + IDFN). Trajectories that never come near each other are
   * independent, so the assignment is solved per connected group, which keeps the matrices small.
   */
  private identityMatches(): { idtp: number } {
    const parent = new Map<string, string>();
    const find = (key: string): string => {
      let root = key;
      while (parent.get(root) !== root) root = parent.get(root)!;
      let node = key;
      while (node !== root) {
        const next = parent.get(node)!;
        parent.set(node, root);
        node = next;
      }
      return root;
    };
    const truthKey = (id: ObjectId) => `t:${typeof id}:${String(id)}`;
    const hypothesisKey = (id: ObjectId) => `h:${typeof id}:${String(id)}`;
    for (const [t, row] of this.pairFrames) {
      const a = truthKey(t);
      if (!parent.has(a)) parent.set(a, a);
      for (const h of row.keys()) {
        const b = hypothesisKey(h);
        if (!parent.has(b)) parent.set(b, b);
        const ra = find(a);
        const rb = find(b);
        if (ra !== rb) parent.set(ra, rb);
      }
    }
    const groups = new Map<string, { truth: ObjectId[]; hypotheses: Set<ObjectId> }>();
    for (const [t, row] of this.pairFrames) {
      const root = find(truthKey(t));
      let group = groups.get(root);
      if (!group) groups.set(root, (group = { truth: [], hypotheses: new Set() }));
      group.truth.push(t);
      for (const h of row.keys()) group.hypotheses.add(h);
    }
    let idtp = 0;
    for (const group of groups.values()) {
      const hypotheses = [...group.hypotheses];
      // Every pair is allowed (no overlap costs 0, like leaving both unassigned), so the optimum is the maximum.
      const costs = group.truth.map((t) => hypotheses.map((h) => -(this.pairFrames.get(t)!.get(h) ?? 0)));
      for (const [i, j] of assign(costs)) idtp -= costs[i]![j]!;
    }
    return { idtp };
  }
}

function checkUnique(items: readonly Labelled[], what: string): void {
  const seen = new Set<ObjectId>();
  for (const item of items) {
    if (seen.has(item.id)) throw new Error(`${what} id ${String(item.id)} appears twice in one frame`);
    seen.add(item.id);
  }
}

/** Detection quality without identities: per-frame matches of found centres to true ones. */
export class DetectionAccumulator {
  truePositives = 0;
  falsePositives = 0;
  falseNegatives = 0;

  constructor(private readonly maxDistance: number) {
    if (!(maxDistance > 0)) throw new Error(`maxDistance must be positive, got ${maxDistance}`);
  }

  update(truth: readonly { x: number; y: number }[], found: readonly { x: number; y: number }[]): void {
    const pairs = matchByDistance(truth, found, this.maxDistance).length;
    this.truePositives += pairs;
    this.falsePositives += found.length - pairs;
    this.falseNegatives += truth.length - pairs;
  }

  get precision(): number {
    const all = this.truePositives + this.falsePositives;
    return all > 0 ? this.truePositives / all : 0;
  }

  get recall(): number {
    const all = this.truePositives + this.falseNegatives;
    return all > 0 ? this.truePositives / all : 0;
  }
}
