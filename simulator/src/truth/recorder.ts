import { visibleBox, type BeeState } from '../scene/bee.ts';
import { clearlyOutsideZone, insidePolygon, type Layout } from '../scene/layout.ts';

/**
 * Builds the ground truth while frames go by: what a perfect labeller would write. Each continuous stretch
 * of visibility of one bee is one track (a bee that leaves the picture and comes back gets a new id). The
 * entrance crossings are the scene's own record of what each bee actually did, checked against what the
 * frames show: a bee only counts as going in if it was seen outside the zone and then vanished into the
 * slot, and as going out if it was first seen inside the zone and then walked or flew clearly out of it.
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
  /** Unix seconds: for 'in' the last frame the bee was seen, for 'out' the first frame it was clearly outside the zone. */
  t: number;
}

export interface TrackEvent {
  kind: 'end';
  trackId: number;
  t: number;
}

interface OpenTrack {
  trackId: number;
  firstInsideZone: boolean;
  seenOutside: boolean;
  outCounted: boolean;
  lastT: number;
  lastInsideZone: boolean;
  lastState: BeeState;
}

const round = (value: number, digits: number): number => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};

export class TruthRecorder {
  readonly frames: TruthFrame[] = [];
  readonly crossings: TruthCrossing[] = [];
  private readonly open = new Map<number, OpenTrack>();
  private nextTrackId = 1;

  constructor(
    private readonly layout: Layout,
    private readonly startUnix: number,
  ) {}

  /**
   * Records one frame. Returns the tracks that ended just before it (their bee is no longer visible), so a
   * caller feeding a counter can close them.
   */
  observe(sceneSeconds: number, states: readonly BeeState[]): { frame: TruthFrame; ended: number[] } {
    const t = round(this.startUnix + sceneSeconds, 6);
    const boxes: TruthBox[] = [];
    const seen = new Set<number>();
    for (const state of states) {
      const box = visibleBox(this.layout, state);
      if (!box) continue;
      const planId = state.plan.id;
      seen.add(planId);
      const inZone = insidePolygon(this.layout.zone, box.x, box.y);
      const clearlyOut = clearlyOutsideZone(this.layout, box.x, box.y);
      let track = this.open.get(planId);
      if (!track) {
        track = { trackId: this.nextTrackId++, firstInsideZone: inZone, seenOutside: false, outCounted: false, lastT: t, lastInsideZone: inZone, lastState: state };
        this.open.set(planId, track);
      }
      if (clearlyOut) {
        track.seenOutside = true;
        if (track.firstInsideZone && !track.outCounted && state.plan.plannedCrossing?.direction === 'out') {
          track.outCounted = true;
          this.crossings.push({ trackId: track.trackId, direction: 'out', t });
        }
      }
      track.lastT = t;
      track.lastInsideZone = inZone;
      track.lastState = state;
      boxes.push({ trackId: track.trackId, x: round(box.x, 2), y: round(box.y, 2), w: round(box.w, 2), h: round(box.h, 2) });
    }
    const ended: number[] = [];
    for (const [planId, track] of this.open) {
      if (seen.has(planId)) continue;
      this.closeTrack(track, true);
      this.open.delete(planId);
      ended.push(track.trackId);
    }
    const frame = { t, boxes };
    this.frames.push(frame);
    return { frame, ended };
  }

  /** Ends every open track at the end of the clip; returns their ids. Bees cut off by the clip's end do not cross. */
  finish(): number[] {
    const ended = [...this.open.values()].map((track) => {
      this.closeTrack(track, false);
      return track.trackId;
    });
    this.open.clear();
    return ended;
  }

  private closeTrack(track: OpenTrack, vanished: boolean): void {
    const plan = track.lastState.plan;
    const wentIntoSlot = vanished && track.lastState.occludedByWall && track.lastInsideZone;
    if (plan.plannedCrossing?.direction === 'in' && wentIntoSlot && track.seenOutside) {
      this.crossings.push({ trackId: track.trackId, direction: 'in', t: track.lastT });
    }
  }
}
