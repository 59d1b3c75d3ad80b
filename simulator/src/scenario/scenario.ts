/**
 * A scenario is plain data describing one entrance clip: camera, traffic, crowding, speed, light, noise.
 * The renderer and the ground truth are pure functions of a scenario, so a scenario name plus a seed
 * reproduces a clip exactly.
 */

export type Split = 'train' | 'heldout';

export interface CameraSettings {
  width: number;
  height: number;
  fps: number;
  /** Typical worker bee length in pixels; individuals vary ±15 % and flying bees look up to 35 % larger. */
  beeLengthPx: number;
}

export interface TrafficSettings {
  /** Bees passing through the entrance per minute, both directions together. */
  crossingsPerMinute: number;
  /** Share of those crossings that go in (0..1). */
  inShare: number;
  /** Share of foragers that fly to or from the board rather than walk across its edge (0..1). */
  flyShare: number;
}

export interface DensitySettings {
  /** Mean number of bees wandering on the landing board at any moment. */
  wanderers: number;
  /** Mean number of bees fanning near the slot (standing, wings buzzing). */
  fanners: number;
  /** Mean number of guard bees standing still near the slot. */
  guards: number;
  /** Pairs of bees that meet face to face on the board, per minute. */
  meetingsPerMinute: number;
  /**
   * Bees that walk up to the slot, hesitate with their head at it or in it, and turn away without going in, per
   * minute (default 0). A counter that takes a track turning back deep in the entrance zone for two swapped bees
   * miscounts these.
   */
  turnBacksPerMinute?: number;
}

export interface LightSettings {
  /** Overall brightness multiplier; 1 is a bright day. */
  level: number;
  /** Colour temperature shift: -1 cold blue, 0 neutral, 1 warm orange (dusk). */
  warmth: number;
  /** Amplitude of slow brightness drift (0..0.5), e.g. thin clouds. */
  drift: number;
  /** Sudden dimming events (a cloud passing the sun) per minute. */
  cloudsPerMinute: number;
  /** How dark bee shadows are (0..1); low in diffuse light. */
  shadowStrength: number;
  /** Direction the shadows fall, degrees in image coordinates (0 = to the right, 90 = down). */
  sunAngleDeg: number;
}

export interface Scenario {
  name: string;
  description: string;
  split: Split;
  seed: number;
  camera: CameraSettings;
  durationSeconds: number;
  /** Wall-clock time of frame 0 (ISO 8601 with zone), written into the mp4 and the ground truth. */
  startTime: string;
  traffic: TrafficSettings;
  density: DensitySettings;
  /** Multiplier on walking and flying speeds. */
  speed: number;
  light: LightSettings;
  /** Standard deviation of sensor noise in 8-bit levels. */
  noiseSigma: number;
  /** x264 constant rate factor: higher means stronger compression artefacts. */
  crf: number;
}

type NumberRule = { path: string; min: number; max: number; integer?: boolean; optional?: boolean };

const RULES: NumberRule[] = [
  { path: 'seed', min: 0, max: 0xffffffff, integer: true },
  { path: 'camera.width', min: 64, max: 3840, integer: true },
  { path: 'camera.height', min: 48, max: 2160, integer: true },
  { path: 'camera.fps', min: 1, max: 120 },
  { path: 'camera.beeLengthPx', min: 6, max: 400 },
  // The ground truth is held in memory and written as one JSON document: an hour is plenty for one clip.
  { path: 'durationSeconds', min: 0.1, max: 3600 },
  { path: 'traffic.crossingsPerMinute', min: 0, max: 600 },
  { path: 'traffic.inShare', min: 0, max: 1 },
  { path: 'traffic.flyShare', min: 0, max: 1 },
  { path: 'density.wanderers', min: 0, max: 60 },
  { path: 'density.fanners', min: 0, max: 30 },
  { path: 'density.guards', min: 0, max: 30 },
  { path: 'density.meetingsPerMinute', min: 0, max: 120 },
  { path: 'density.turnBacksPerMinute', min: 0, max: 120, optional: true },
  { path: 'speed', min: 0.1, max: 5 },
  { path: 'light.level', min: 0.05, max: 2 },
  { path: 'light.warmth', min: -1, max: 1 },
  { path: 'light.drift', min: 0, max: 0.5 },
  { path: 'light.cloudsPerMinute', min: 0, max: 30 },
  { path: 'light.shadowStrength', min: 0, max: 1 },
  { path: 'light.sunAngleDeg', min: -360, max: 360 },
  { path: 'noiseSigma', min: 0, max: 40 },
  { path: 'crf', min: 0, max: 51, integer: true },
];

function valueAt(root: unknown, path: string): unknown {
  let node: unknown = root;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Throws an Error naming the first bad field, e.g. `scenario "dusk": light.level must be between 0.05 and 2`. */
export function validateScenario(scenario: Scenario): Scenario {
  const label = `scenario "${String((scenario as { name?: unknown }).name)}"`;
  if (typeof scenario.name !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(scenario.name)) {
    throw new Error(`${label}: name must be lower-case words joined by hyphens`);
  }
  if (typeof scenario.description !== 'string' || scenario.description.length === 0) {
    throw new Error(`${label}: description must be a non-empty string`);
  }
  if (scenario.split !== 'train' && scenario.split !== 'heldout') {
    throw new Error(`${label}: split must be 'train' or 'heldout'`);
  }
  for (const rule of RULES) {
    const value = valueAt(scenario, rule.path);
    if (value === undefined && rule.optional) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`${label}: ${rule.path} must be a number`);
    if (value < rule.min || value > rule.max) throw new Error(`${label}: ${rule.path} must be between ${rule.min} and ${rule.max}`);
    if (rule.integer && !Number.isInteger(value)) throw new Error(`${label}: ${rule.path} must be an integer`);
  }
  if (scenario.camera.width % 2 !== 0 || scenario.camera.height % 2 !== 0) {
    throw new Error(`${label}: camera.width and camera.height must be even (H.264 4:2:0)`);
  }
  if (!isZonedDateTime(scenario.startTime)) {
    throw new Error(`${label}: startTime must be an ISO 8601 date-time with a time zone`);
  }
  return scenario;
}

/** An ISO 8601 date-time that says its time zone (a clip's start must not depend on where it is rendered). */
export function isZonedDateTime(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value)) && /(Z|[+-]\d\d:\d\d)$/.test(value);
}

/** Unix seconds of frame 0. */
export function scenarioStartUnix(scenario: Scenario): number {
  return Date.parse(scenario.startTime) / 1000;
}

/** Planned crossings for the whole clip: the traffic the ground truth must show. */
export function plannedCrossings(scenario: Scenario): { in: number; out: number } {
  const total = (scenario.traffic.crossingsPerMinute * scenario.durationSeconds) / 60;
  const inCount = Math.round(total * scenario.traffic.inShare);
  const outCount = Math.round(total * (1 - scenario.traffic.inShare));
  return { in: inCount, out: outCount };
}
