import { describe, expect, it } from 'vitest';
import { isInsidePolygon, signedDistanceToPolygon } from '@hivegate/shared';
import { findScenario, SCENARIOS, withOverrides } from '../scenario/suite.ts';
import type { Scenario } from '../scenario/scenario.ts';
import { beeStateAt, visibleBox } from './bee.ts';
import { planPopulation } from './population.ts';
import { Timeline } from './timeline.ts';

const scenario = (name: string, seconds = 20): Scenario => withOverrides(findScenario(name) as Scenario, { durationSeconds: seconds });

describe('planPopulation', () => {
  it('plans the same bees for the same seed and other bees for another seed', () => {
    const busy = scenario('busy-afternoon');
    expect(JSON.stringify(planPopulation(busy).plans)).toBe(JSON.stringify(planPopulation(busy).plans));
    expect(JSON.stringify(planPopulation(withOverrides(busy, { seed: 99 })).plans)).not.toBe(JSON.stringify(planPopulation(busy).plans));
  });

  it('draws bees 20 to 60 px long at 640x480, walking or flying', () => {
    for (const s of SCENARIOS.filter((each) => each.camera.width === 640 && each.camera.height === 480)) {
      const population = planPopulation(withOverrides(s, { durationSeconds: 15 }));
      const timeline = new Timeline(population);
      let flying = 0;
      for (let frame = 0; frame < population.frameCount; frame += 3) {
        for (const bee of timeline.statesAt(frame)) {
          expect(bee.length, `${s.name} bee ${bee.plan.id}`).toBeGreaterThanOrEqual(20);
          expect(bee.length, `${s.name} bee ${bee.plan.id}`).toBeLessThanOrEqual(60);
          if (bee.mode === 'fly') flying++;
        }
      }
      expect(flying, s.name).toBeGreaterThan(0);
    }
  });

  it('puts the slot inside the entrance zone', () => {
    const { layout } = planPopulation(scenario('dusk', 2));
    for (const x of [layout.slotLeft + 1, (layout.slotLeft + layout.slotRight) / 2, layout.slotRight - 1]) {
      for (const y of [layout.slotTop, layout.slotBottom]) expect(isInsidePolygon([x, y], layout.zone)).toBe(true);
    }
    expect(isInsidePolygon([layout.width / 2, layout.height - 10], layout.zone)).toBe(false);
  });

  it('starts and ends foragers where their trip says: in the slot, or beyond a frame edge', () => {
    const population = planPopulation(scenario('busy-afternoon'));
    const { layout } = population;
    const outside = (x: number, y: number) => x < 0 || x > layout.width || y > layout.height;
    for (const plan of population.plans) {
      const first = beeStateAt(layout, plan, plan.start);
      const last = beeStateAt(layout, plan, plan.end);
      if (!first || !last) throw new Error('plan without a pose at its ends');
      if (plan.role === 'forager-in') {
        expect(last.y).toBeLessThan(layout.slotTop);
        expect(outside(first.x, first.y)).toBe(true);
      }
      if (plan.role === 'forager-out') {
        expect(first.y).toBeLessThan(layout.slotTop);
        expect(outside(last.x, last.y)).toBe(true);
      }
    }
  });

  it('keeps fanners still near the slot with their wings going', () => {
    const population = planPopulation(scenario('fanning-bees'));
    const timeline = new Timeline(population);
    const fanning = timeline.statesAt(300).filter((bee) => bee.mode === 'fan');
    expect(fanning.length).toBeGreaterThanOrEqual(3);
    for (const bee of fanning) {
      expect(bee.y - population.layout.slotBottom).toBeLessThan(population.layout.beeLength);
      expect(Math.abs(bee.heading + Math.PI / 2)).toBeLessThan(0.5);
    }
  });

  it('sends turn-back bees deep into the entrance zone and away again, without going in', () => {
    const population = planPopulation(scenario('heldout-hesitant-bees', 60));
    const { layout } = population;
    const turnBacks = population.plans.filter((plan) => plan.role === 'turn-back');
    expect(turnBacks).toHaveLength(15);
    for (const plan of turnBacks) {
      let deepest = 0;
      for (let t = plan.start; t <= plan.end; t += 0.02) {
        const state = beeStateAt(layout, plan, t);
        const box = state && visibleBox(layout, state);
        if (box) deepest = Math.min(deepest, signedDistanceToPolygon([box.x, box.y], layout.zone));
      }
      expect(deepest, `bee ${plan.id}`).toBeLessThan(-0.35 * layout.beeLength);
      const last = beeStateAt(layout, plan, plan.end)!;
      expect(last.y, `bee ${plan.id} ends off the board, not in the slot`).toBeGreaterThan(layout.slotBottom);
    }
    // Scenarios that do not ask for them have none (and their bees are planned as before).
    expect(planPopulation(scenario('busy-afternoon', 60)).plans.some((plan) => plan.role === 'turn-back')).toBe(false);
  });
});
