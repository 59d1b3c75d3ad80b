import { MovementAggregator, toMovementInput, type Crossing, type EntranceMovementInput, type IntervalSummary, type Point } from '@hivegate/shared';
import { scenarioStartUnix, type Scenario } from '../scenario/scenario.ts';
import type { BeeState } from '../scene/bee.ts';
import type { Population } from '../scene/population.ts';
import { Timeline } from '../scene/timeline.ts';
import { TruthRecorder, type TruthCrossing, type TruthFrame, type TruthTrack } from './recorder.ts';

/** Counting interval written into the ground truth; the shared rules' default. */
export const INTERVAL_SECONDS = 60;

/** Everything `truth.json` holds. Times are Unix seconds; positions are pixels with the origin top left. */
export interface GroundTruth {
  version: 1;
  /** The scenario as rendered (after --seed/--seconds overrides). */
  scenario: Scenario;
  width: number;
  height: number;
  fps: number;
  frameCount: number;
  /** Unix seconds of frame 0; frame i is at startTime + i / fps. */
  startTime: number;
  startTimeIso: string;
  /** Typical bee length in pixels. */
  beeLengthPx: number;
  /** The counting zone around the hive opening, clockwise from top left. */
  entranceZone: Array<[number, number]>;
  /** Counting settings the intervals were computed with (pass the same to an agent to compare). */
  counting: { hysteresisPx: number; intervalSeconds: number };
  /** Per frame, the visible bees: centre-based boxes. */
  frames: TruthFrame[];
  /** Each continuous stretch of visibility of one bee, with its role in the scene. */
  tracks: TruthTrack[];
  /** Entrance crossings as the scene made them, and any the clip cut off as its frames show them (`cutOff`). */
  crossings: TruthCrossing[];
  /** Expected movement records, one per interval, exactly as the agent would post them. */
  intervals: EntranceMovementInput[];
  /** The same intervals with the counter's local extras (unknown directions, frame counts). */
  intervalDetails: IntervalSummary[];
}

export interface TruthIds {
  hiveId: string;
  boxId: string;
}

/**
 * Builds the ground truth frame by frame: the recorder labels boxes and the scene's crossings, and the
 * shared counting rules, fed with the true centres, give the intervals an agent with perfect detection and
 * tracking would send.
 */
export class GroundTruthBuilder {
  private readonly recorder: TruthRecorder;
  private readonly aggregator: MovementAggregator;
  /** Crossings as the counting rules decided them (kept for comparison with the scene's own record). */
  readonly counterCrossings: Crossing[] = [];

  constructor(
    private readonly population: Population,
    private readonly ids: TruthIds,
  ) {
    const { layout, scenario } = population;
    this.recorder = new TruthRecorder(layout, scenarioStartUnix(scenario));
    this.aggregator = new MovementAggregator({
      zone: layout.zone,
      fps: scenario.camera.fps,
      intervalSeconds: INTERVAL_SECONDS,
      hysteresisPx: layout.hysteresisPx,
    });
  }

  observe(sceneSeconds: number, states: readonly BeeState[]): TruthFrame {
    const { frame, ended } = this.recorder.observe(sceneSeconds, states);
    for (const trackId of ended) this.endTrack(trackId);
    this.aggregator.observeFrame(frame.t, frame.boxes.map((box) => ({ trackId: box.trackId, x: box.x, y: box.y })));
    return frame;
  }

  finish(): GroundTruth {
    for (const trackId of this.recorder.finish()) this.endTrack(trackId);
    const summaries = this.aggregator.flush();
    const { scenario, layout, frameCount } = this.population;
    const startTime = scenarioStartUnix(scenario);
    return {
      version: 1,
      scenario,
      width: layout.width,
      height: layout.height,
      fps: scenario.camera.fps,
      frameCount,
      startTime,
      startTimeIso: new Date(startTime * 1000).toISOString(),
      beeLengthPx: layout.beeLength,
      entranceZone: layout.zone.map((p): [number, number] => [p[0], p[1]]),
      counting: { hysteresisPx: layout.hysteresisPx, intervalSeconds: INTERVAL_SECONDS },
      frames: this.recorder.frames,
      tracks: this.recorder.tracks,
      crossings: this.recorder.crossings,
      intervals: summaries.map((summary) => toMovementInput(summary, this.ids.hiveId, this.ids.boxId)),
      intervalDetails: summaries,
    };
  }

  private endTrack(trackId: number): void {
    const crossing = this.aggregator.endTrack(trackId);
    if (crossing) this.counterCrossings.push(crossing);
  }
}

/** Ground truth of a whole clip without drawing it (fast: for tests and tools). */
export function simulateGroundTruth(population: Population, ids: TruthIds): { truth: GroundTruth; counterCrossings: Crossing[] } {
  const builder = new GroundTruthBuilder(population, ids);
  const timeline = new Timeline(population);
  for (let frame = 0; frame < population.frameCount; frame++) builder.observe(timeline.timeOf(frame), timeline.statesAt(frame));
  return { truth: builder.finish(), counterCrossings: builder.counterCrossings };
}

export type { Point };
