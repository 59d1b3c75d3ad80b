export { RENDER_REVISION, renderClip, type RenderClipOptions, type RenderedClip } from './clip.ts';
export { FileCamera, type FileCameraOptions } from './io/camera.ts';
export { findPython } from './io/python.ts';
export { SCENARIOS, findScenario, withOverrides } from './scenario/suite.ts';
export { plannedCrossings, scenarioStartUnix, validateScenario, type Scenario, type Split } from './scenario/scenario.ts';
export { planPopulation, type Population } from './scene/population.ts';
export { hashString, hashUnit } from './random/prng.ts';
export { simulateGroundTruth, GroundTruthBuilder, type GroundTruth, type TruthIds } from './truth/ground-truth.ts';
export type { TruthBox, TruthCrossing, TruthFrame, TruthTrack } from './truth/recorder.ts';
