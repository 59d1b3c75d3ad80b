import { beeStateAt, type BeePlan, type BeeState } from './bee.ts';
import type { Population } from './population.ts';

/**
 * Walks a population frame by frame (in increasing order) and yields the bees present at each frame,
 * in drawing order: walking bees first, then by height, so flying bees pass over the others.
 */
export class Timeline {
  private readonly plans: readonly BeePlan[];
  private nextPlan = 0;
  private active: BeePlan[] = [];
  private lastFrame = -1;

  constructor(private readonly population: Population) {
    this.plans = population.plans;
  }

  /** Scene seconds of a frame (frame 0 is t = 0). */
  timeOf(frame: number): number {
    return frame / this.population.scenario.camera.fps;
  }

  statesAt(frame: number): BeeState[] {
    if (frame <= this.lastFrame) throw new Error(`frames must be visited in increasing order (got ${frame} after ${this.lastFrame})`);
    this.lastFrame = frame;
    const t = this.timeOf(frame);
    while (this.nextPlan < this.plans.length && (this.plans[this.nextPlan] as BeePlan).start <= t) {
      this.active.push(this.plans[this.nextPlan] as BeePlan);
      this.nextPlan++;
    }
    this.active = this.active.filter((plan) => plan.end >= t);
    const states: BeeState[] = [];
    for (const plan of this.active) {
      const state = beeStateAt(this.population.layout, plan, t);
      if (state) states.push(state);
    }
    states.sort((a, b) => a.altitude - b.altitude || a.y - b.y || a.plan.id - b.plan.id);
    return states;
  }
}
