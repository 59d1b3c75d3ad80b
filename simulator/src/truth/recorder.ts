import { visibleBox, type BeeState } from '../scene/bee.ts';
import { zoneSide, type Layout } from '../scene/layout.ts';

/**
 * Builds the ground truth while frames go by: what a perfect labeller would write. Each continuous stretch
 * of visibility of one bee is one track (a bee that leaves the picture and comes back gets a new id). The
 * entrance crossings are the scene's own record of what each bee set out to do, kept only when the frames
 * show it: a bee goes in if it was seen outside the zone, entered it and vanished into the slot; it goes out
 * if it was first seen inside the zone and was last seen outside it. "Inside" and "outside" use the counting
 * rules' hysteresis, and a crossing's time is when the bee last moved to the side it ended on. A bee the clip cuts
 * off (already in view when it begins, or still in view when it ends) is recorded as the frames show it: when it
 * was first seen on one side of the zone and last seen on the other without making its planned crossing in full,
 * its crossing is marked `cutOff`, since a counter that sees only these frames counts it all the same.
 */

export interface TruthBox {
  trackId: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface TruthFrame {
  /** Unix seconds (fractional). */
  t: number;
  boxes: TruthBox[];
}

export interface TruthCrossing {
  trackId: number;
  direction: 'in' | 'out';
  /** Unix seconds: the first frame of the last stretch on the side the bee ended on (in: inside the zone). */
  t: number;
  /**
   * Present (true) when the clip cut the bee off: it was already in view at the first frame or still in view at the
   * last, and what the frames show is not a crossing the scene made (a bee at the slot when the clip begins, or
   * still on its way in when it ends). Counters count it, so the intervals do; it is not the scene's traffic.
   */
  cutOff?: true;
}

/** One continuous stretch of visibility of one bee, with what the bee was doing. */
export interface TruthTrack {
  trackId: number;
  role: BeeState['plan']['role'];
  firstT: number;
  lastT: number;
}

interface OpenTrack {
  track: TruthTrack;
  /** Whether the bee was already in view at the clip's first frame. */
  inFirstFrame: boolean;
  startSide?: 'inside' | 'outside';
  side?: 'inside' | 'outside';
  sideSince: number;
  lastState: BeeState;
}

const round = (value: number, digits: number): number => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};

export class TruthRecorder {
  readonly frames: TruthFrame[] = [];
  readonly crossings: TruthCrossing[] = [];
  readonly tracks: TruthTrack[] = [];
  private readonly open = new Map<number, OpenTrack>();
  private nextTrackId = 1;

  constructor(
    private readonly layout: Layout,
    private readonly startUnix: number,
  ) {}

  /** Unix time of a scene time, rounded to the microsecond so JSON stays short and exact. */
  unixTime(sceneSeconds: number): number {
    return round(this.startUnix + sceneSeconds, 6);
  }

  /**
   * Records one frame. Returns the tracks that ended with the previous frame (their bee is no longer
   * visible), so a caller feeding a counter can close them.
   */
  observe(sceneSeconds: number, states: readonly BeeState[]): { frame: TruthFrame; ended: number[] } {
    const t = this.unixTime(sceneSeconds);
    const boxes: TruthBox[] = [];
    const seen = new Set<number>();
    for (const state of states) {
      const box = visibleBox(this.layout, state);
      if (!box) continue;
      const planId = state.plan.id;
      seen.add(planId);
      let open = this.open.get(planId);
      if (!open) {
        const track: TruthTrack = { trackId: this.nextTrackId++, role: state.plan.role, firstT: t, lastT: t };
        this.tracks.push(track);
        open = { track, inFirstFrame: this.frames.length === 0, sideSince: t, lastState: state };
        this.open.set(planId, open);
      }
      const labelled = { trackId: open.track.trackId, x: round(box.x, 2), y: round(box.y, 2), w: round(box.w, 2), h: round(box.h, 2) };
      const side = zoneSide(this.layout, labelled.x, labelled.y);
      if (side) {
        open.startSide ??= side;
        if (side !== open.side) {
          open.side = side;
          open.sideSince = t;
        }
      }
      open.track.lastT = t;
      open.lastState = state;
      boxes.push(labelled);
    }
    const ended: number[] = [];
    for (const [planId, open] of this.open) {
      if (seen.has(planId)) continue;
      this.close(open, true);
      this.open.delete(planId);
      ended.push(open.track.trackId);
    }
    const frame = { t, boxes };
    this.frames.push(frame);
    return { frame, ended };
  }

  /** Ends every open track at the end of the clip and returns their ids (the clip cut these bees off). */
  finish(): number[] {
    const ended = [...this.open.values()].map((open) => {
      this.close(open, false);
      return open.track.trackId;
    });
    this.open.clear();
    this.crossings.sort((a, b) => a.t - b.t || a.trackId - b.trackId);
    return ended;
  }

  private close(open: OpenTrack, vanished: boolean): void {
    const { trackId } = open.track;
    const intent = open.lastState.plan.plannedCrossing?.direction;
    if (intent === 'in' && open.startSide === 'outside' && open.side === 'inside' && vanished && open.lastState.occludedByWall) {
      this.crossings.push({ trackId, direction: 'in', t: open.sideSince });
      return;
    }
    if (intent === 'out' && open.startSide === 'inside' && open.side === 'outside') {
      this.crossings.push({ trackId, direction: 'out', t: open.sideSince });
      return;
    }
    const cutOff = open.inFirstFrame || !vanished;
    if (cutOff && open.startSide && open.side && open.startSide !== open.side) {
      this.crossings.push({ trackId, direction: open.side === 'inside' ? 'in' : 'out', t: open.sideSince, cutOff: true });
    }
  }
}
