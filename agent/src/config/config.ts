import { readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from 'typebox';
import { parse as parseYaml } from 'yaml';
import { compileConfigCheck, HTTP_URL, Identifier, invalidConfigMessage } from '@hivegate/shared';
import { TRACKER_DEFAULTS } from '../track/tracker.ts';

const PositiveInt = (options: { maximum?: number } = {}) => Type.Integer({ minimum: 1, ...options });
const NonNegative = () => Type.Number({ minimum: 0 });
const Point = Type.Array(Type.Number(), { minItems: 2, maxItems: 2 });

export const AgentConfigSchema = Type.Object(
  {
    hiveId: Identifier,
    boxId: Identifier,
    deviceId: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^:]+$', description: 'Names this device to the cloud (and in sensor dedupe keys); defaults to the host name.' }),
    source: Type.Object(
      {
        url: Type.String({ minLength: 1, description: 'File path, rtsp/http URL, /dev/videoN, or rpicam[:extra args].' }),
        width: PositiveInt({ maximum: 7680 }),
        height: PositiveInt({ maximum: 4320 }),
        fps: Type.Number({ exclusiveMinimum: 0, maximum: 240 }),
        pixelFormat: Type.Union([Type.Literal('gray'), Type.Literal('rgb24')], { description: 'Default: rgb24 for the ONNX detector, gray for the motion detector.' }),
        realtime: Type.Boolean({ description: 'Files only: pace at the clip speed instead of as fast as possible.' }),
        startTime: Type.Optional(Type.String({ format: 'date-time', description: 'Files only: wall clock of the start when the file has no creation_time.' })),
      },
      { additionalProperties: false },
    ),
    cloud: Type.Object(
      {
        url: Type.String({ format: HTTP_URL }),
        token: Type.String({ minLength: 1 }),
        requestTimeoutMs: PositiveInt(),
        batchSize: PositiveInt({ maximum: 1000 }),
      },
      { additionalProperties: false },
    ),
    detector: Type.Object(
      {
        kind: Type.Union([Type.Literal('motion'), Type.Literal('onnx')]),
        model: Type.Optional(Type.String({ minLength: 1, description: 'ONNX file; default: the 8-bit bee model shipped in agent/models (its float original when detector.slot is false).' })),
        scoreThreshold: Type.Number({ minimum: 0, maximum: 1 }),
        iouThreshold: Type.Number({ minimum: 0, maximum: 1 }),
        classes: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
        threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, description: 'ONNX only: CPU threads for inference (default: inferenceThreads(), one fewer than the cores, at least 1, leaving one to ffmpeg).' })),
        slot: Type.Optional(
          Type.Object(
            {
              model: Type.String({ minLength: 1, description: 'ONNX CenterNet model that looks at the band around the entrance zone at a larger scale.' }),
              zoom: Type.Number({ minimum: 1, maximum: 4, description: 'Its scale against the whole-frame model: 2 sees bees twice as large.' }),
              marginLengths: NonNegative(),
              wholeEvery: Type.Integer({
                minimum: 1,
                maximum: 8,
                description: 'Run the whole-frame model on every nth frame only (1: every frame); the slot model runs on every frame, and tracks away from the band go on as predicted in between.',
              }),
            },
            {
              additionalProperties: false,
              description: 'ONNX only: a second pass over the entrance slot, whose detections replace the whole-frame ones there. On by default with the shipped models; false turns it off.',
            },
          ),
        ),
        motionGate: Type.Boolean({ description: 'ONNX only: skip inference on frames where nothing moves.' }),
        minMotionFraction: Type.Number({ minimum: 0, maximum: 1 }),
        motion: Type.Object(
          {
            workWidth: PositiveInt(),
            threshold: Type.Number({ minimum: 1, maximum: 255, description: 'Gray-level change that counts as motion in a picture of mean level referenceLuma.' }),
            referenceLuma: Type.Number({ minimum: 0, maximum: 255, description: 'Darker pictures get a proportionally lower threshold; 0 keeps it fixed.' }),
            minThreshold: Type.Number({ minimum: 1, maximum: 255, description: 'The lowest threshold a dark picture gets.' }),
            learningRate: Type.Number({ minimum: 0, maximum: 1 }),
            beeLengthPx: Type.Number({ exclusiveMinimum: 0 }),
            lightChangeFraction: Type.Number({ minimum: 0, maximum: 1 }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
    tracker: Type.Object(
      {
        highScore: Type.Number({ minimum: 0, maximum: 1 }),
        lowScore: Type.Number({ minimum: 0, maximum: 1 }),
        birthScore: Type.Number({ minimum: 0, maximum: 1 }),
        minHits: PositiveInt(),
        maxMissedFrames: Type.Integer({ minimum: 0 }),
        gateLengths: NonNegative(),
        maxGateLengths: NonNegative(),
        lostGateLengths: NonNegative(),
        movementWeight: NonNegative(),
        splitAfterMissedFrames: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    counting: Type.Object(
      {
        zone: Type.Array(Point, { minItems: 3, description: 'Entrance zone polygon in frame pixels.' }),
        intervalSeconds: PositiveInt({ maximum: 3600 }),
        hysteresisPx: NonNegative(),
        stationaryPx: NonNegative(),
        interactionPx: NonNegative(),
        interactionMinFrames: PositiveInt(),
        maxLatenessSeconds: NonNegative(),
        edgeBandPx: NonNegative(),
        reversalDepthPx: NonNegative(),
        reversalMaxTurnSeconds: NonNegative(),
        reversalMaxLengthsPerSecond: NonNegative(),
        reversalHiddenShare: NonNegative(),
      },
      { additionalProperties: false },
    ),
    trajectories: Type.Object(
      { maxTracks: PositiveInt(), maxAgeSeconds: NonNegative(), minPoints: PositiveInt() },
      { additionalProperties: false },
    ),
    outbox: Type.Object(
      { path: Type.String({ minLength: 1 }), maxRecords: PositiveInt(), maxBytes: PositiveInt(), maxAgeDays: Type.Number({ exclusiveMinimum: 0 }) },
      { additionalProperties: false },
    ),
    live: Type.Object(
      {
        enabled: Type.Boolean({ description: 'Poll the cloud for live-stream commands and send status heartbeats.' }),
        statusIntervalSeconds: Type.Number({ minimum: 1, maximum: 3600 }),
        pollWaitSeconds: Type.Number({ minimum: 0, maximum: 25, description: 'Long-poll: how long the cloud may hold a poll open.' }),
        jpegFps: Type.Number({ exclusiveMinimum: 0, maximum: 30, description: 'Frame rate of the http-jpeg-push relay.' }),
        startTimeoutSeconds: Type.Number({ minimum: 1, maximum: 600, description: 'A stream with nothing accepted by then has failed.' }),
      },
      { additionalProperties: false },
    ),
    sensors: Type.Optional(
      Type.Object(
        {
          command: Type.Optional(
            Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], {
              description: 'Prints JSON {"temperatureCelsius":…} or key=value lines; a string runs through /bin/sh.',
            }),
          ),
          file: Type.Optional(Type.String({ minLength: 1, description: 'A file holding the same formats, written by another program.' })),
          intervalSeconds: Type.Integer({ minimum: 5, maximum: 86_400 }),
          timeoutSeconds: Type.Number({ exclusiveMinimum: 0, maximum: 300 }),
        },
        { additionalProperties: false },
      ),
    ),
    stateDir: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);
export type AgentConfig = Static<typeof AgentConfigSchema>;

export class ConfigError extends Error {}

type DeepPartial<T> = { [K in keyof T]?: NonNullable<T[K]> extends (infer _U)[] ? T[K] : NonNullable<T[K]> extends object ? DeepPartial<NonNullable<T[K]>> : T[K] };
export type PartialAgentConfig = DeepPartial<AgentConfig>;

/** The whole-frame detector model that ships with the agent, trained on the simulator's training scenes (simulator/train). */
export const FLOAT_MODEL_PATH = fileURLToPath(new URL('../../models/bee-centernet.onnx', import.meta.url));
/** Its 8-bit copy (`agent/tools`): the same bees, faster (`docs/benchmarks.md`). */
export const INT8_MODEL_PATH = fileURLToPath(new URL('../../models/bee-centernet-int8.onnx', import.meta.url));
/** The model for the slot pass (`detector.slot`): the same network trained at twice the scale. */
export const SLOT_MODEL_PATH = fileURLToPath(new URL('../../models/bee-centernet-slot.onnx', import.meta.url));
/** Its 8-bit copy: with `INT8_MODEL_PATH`, the pair the agent runs by default. */
export const SLOT_INT8_MODEL_PATH = fileURLToPath(new URL('../../models/bee-centernet-slot-int8.onnx', import.meta.url));
/** The slot pass's settings when `detector.slot` names only its model. */
export const SLOT_DEFAULTS = { zoom: 2, marginLengths: 1.5, wholeEvery: 1 } as const;

/**
 * Everything that has a sensible default; identity, source, cloud and zone have none (or a derived one), and the
 * pixel format and model follow the detector kind.
 */
/** The rate the detector and tracker were tuned and scored at: the default `source.fps`, and the one frame counts are set for. */
const TUNED_FPS = 30;

/** `counting.interactionMinFrames` at 30 fps (the tracker's frame counts are in TRACKER_DEFAULTS). */
const INTERACTION_MIN_FRAMES = 3;

function defaults(fps: number): PartialAgentConfig {
  return {
    // 30 fps, the rate the detector and tracker were tuned and scored at. Read at 15 (with the frame counts below kept
    // in time), the 15 held-out clips counted as well (3.0 against 3.1 % wrong) but followed bees a little worse
    // (IDF1 0.894 against 0.901; docs/benchmarks.md).
    source: { width: 640, height: 480, fps: TUNED_FPS, realtime: false },
    cloud: { requestTimeoutMs: 15_000, batchSize: 1000 },
    detector: {
      kind: 'onnx',
      scoreThreshold: 0.35,
      iouThreshold: 0.45,
      motionGate: true,
      minMotionFraction: 0.0005,
      motion: { workWidth: 320, threshold: 25, referenceLuma: 128, minThreshold: 8, learningRate: 0.05, beeLengthPx: 40, lightChangeFraction: 0.35 },
    },
    tracker: trackerDefaults(fps),
    counting: { intervalSeconds: 60, hysteresisPx: 6, stationaryPx: 10, interactionPx: 40, interactionMinFrames: framesAt(fps, INTERACTION_MIN_FRAMES), maxLatenessSeconds: 120, edgeBandPx: 20, reversalDepthPx: 25, reversalMaxTurnSeconds: 0.5, reversalMaxLengthsPerSecond: 5 },
    trajectories: { maxTracks: 100, maxAgeSeconds: 300, minPoints: 3 },
    outbox: { maxRecords: 200_000, maxBytes: 100 * 1024 * 1024, maxAgeDays: 30 },
    live: { enabled: true, statusIntervalSeconds: 30, pollWaitSeconds: 20, jpegFps: 4, startTimeoutSeconds: 30 },
    stateDir: '.data/agent',
  };
}

/**
 * Tracker settings that depend on the detector. The model's detections are sharp and scored: a tight match radius
 * and a high birth score suit them (chosen for the shipped pair on the training scenes). The motion detector's
 * blobs wander and score by their area: with those settings its count error on the training scenes went from 28 to
 * 35 %, so it keeps the wider ones (docs/benchmarks.md).
 */
const TRACKER_BY_DETECTOR = {
  onnx: { gateLengths: TRACKER_DEFAULTS.gateLengths, birthScore: TRACKER_DEFAULTS.birthScore },
  motion: { gateLengths: 0.3, birthScore: 0.6 },
} as const;

/**
 * Counting settings that depend on the detector. A model's box shrinks with the part of the bee in view, which is
 * what `reversalHiddenShare` reads (chosen on the training scenes for the shipped pair); a motion blob's size moves
 * with blobs merging and splitting, and with the rule on the motion detector counted a little worse there (25.4 →
 * 25.6 %), so it is off for it.
 */
const COUNTING_BY_DETECTOR = {
  onnx: { reversalHiddenShare: 0.65 },
  motion: { reversalHiddenShare: 0 },
} as const;

/** The tracker's own defaults, less the two that depend on the detector and the bee length the detector gives. */
function trackerDefaults(fps: number): PartialAgentConfig['tracker'] {
  const { gateLengths: _gate, birthScore: _birth, beeLengthPx: _length, ...common } = TRACKER_DEFAULTS;
  return { ...common, minHits: framesAt(fps, common.minHits), maxMissedFrames: framesAt(fps, common.maxMissedFrames) };
}

/**
 * A default counted in frames, chosen at 30 fps, for a source read at `fps`: the same time, in whole frames, at least
 * one. At 15 fps a track born from 3 hits or lost for 20 frames would otherwise wait twice as long.
 */
function framesAt(fps: number, framesAt30: number): number {
  return fps > 0 && Number.isFinite(fps) ? Math.max(1, Math.round((framesAt30 * fps) / TUNED_FPS)) : framesAt30;
}

/** The settings counted in frames. */
export interface FrameCounts {
  minHits: number;
  maxMissedFrames: number;
  interactionMinFrames: number;
}

/**
 * The settings counted in frames for new pictures that come at `fps` instead of `source.fps` (a camera or file that
 * sends fewer, a camera that slowed down, an agent that fell behind its camera):
 * a default follows the rate, as it follows `source.fps`; a value other than the default at `source.fps` was set by
 * the user and is kept.
 */
export function frameCountsAt(config: AgentConfig, fps: number): FrameCounts {
  const follow = (value: number, framesAt30: number) => (value === framesAt(config.source.fps, framesAt30) ? framesAt(fps, framesAt30) : value);
  return {
    minHits: follow(config.tracker.minHits, TRACKER_DEFAULTS.minHits),
    maxMissedFrames: follow(config.tracker.maxMissedFrames, TRACKER_DEFAULTS.maxMissedFrames),
    interactionMinFrames: follow(config.counting.interactionMinFrames, INTERACTION_MIN_FRAMES),
  };
}

const checkConfig = compileConfigCheck(AgentConfigSchema);

/** The token agent.example.yaml carries, which no cloud accepts. */
export const PLACEHOLDER_TOKEN = 'change-me';
/** Where the token goes: "cloud.token is required" alone sent people to the config file, not the env file the service reads. */
const TOKEN_HINT = "set the device's token in HIVEGATE_TOKEN, in the environment or the secrets file (the service's /etc/hivegate/agent.env, HIVEGATE_TOKEN=…), or as cloud.token";

/**
 * Builds the effective config: defaults, then the file, then secrets from the environment (`HIVEGATE_TOKEN`,
 * `HIVEGATE_CLOUD_URL`), then command-line values: what is typed on the command line wins, as the usage says, over
 * a variable left in the shell. Validation errors name the field's path.
 */
export function resolveConfig(layers: { file?: PartialAgentConfig; flags?: PartialAgentConfig; env?: NodeJS.ProcessEnv }): AgentConfig {
  const env = layers.env ?? process.env;
  const secrets: PartialAgentConfig = { cloud: {} };
  if (env.HIVEGATE_TOKEN) secrets.cloud!.token = env.HIVEGATE_TOKEN;
  if (env.HIVEGATE_CLOUD_URL) secrets.cloud!.url = env.HIVEGATE_CLOUD_URL;
  const fps = layers.flags?.source?.fps ?? layers.file?.source?.fps;
  const merged = [layers.file ?? {}, secrets, layers.flags ?? {}].reduce<Record<string, unknown>>((acc, layer) => merge(acc, layer as Record<string, unknown>), merge({}, defaults(typeof fps === 'number' ? fps : TUNED_FPS) as Record<string, unknown>));
  const source = merged.source as Record<string, unknown> | undefined;
  const counting = merged.counting as Record<string, unknown> | undefined;
  if (counting && counting.zone === undefined && source && typeof source.width === 'number' && typeof source.height === 'number') {
    counting.zone = defaultZone(source.width, source.height);
  }
  const detector = merged.detector as Record<string, unknown> | undefined;
  const slotOff = detector?.slot === false;
  if (slotOff) delete detector!.slot;
  if (detector?.kind === 'onnx' && detector.threads === undefined) detector.threads = inferenceThreads();
  if (detector?.kind === 'onnx' && detector.model === undefined) {
    // The shipped models: the 8-bit pair with the slot pass, which counts best of what keeps up with a camera on one
    // core; without the slot pass, the float whole-frame model, which tracks better alone than its 8-bit copy
    // (docs/benchmarks.md). A model the user names runs alone unless a slot model is named too; settings of the
    // slot pass without a model are for the shipped one.
    detector.model = slotOff ? FLOAT_MODEL_PATH : INT8_MODEL_PATH;
    const slot = detector.slot;
    if (!slotOff && (slot === undefined || (isPlainObject(slot) && slot.model === undefined))) detector.slot = { model: SLOT_INT8_MODEL_PATH, ...(slot as object | undefined) };
  }
  // The shipped model was trained on colour; the motion detector only needs luma and reads a third of the bytes.
  if (source && source.pixelFormat === undefined) source.pixelFormat = detector?.kind === 'motion' ? 'gray' : 'rgb24';
  if (merged.deviceId === undefined) merged.deviceId = hostname().replace(/:/g, '-') || 'hivegate-agent';
  if (detector?.slot) detector.slot = { ...SLOT_DEFAULTS, ...(detector.slot as Record<string, unknown>) };
  const tracker = merged.tracker as Record<string, unknown> | undefined;
  // Settings that depend on the detector. An unknown kind is left for the schema to refuse; it gets the model's, so
  // that the refusal is not joined by settings said to be missing.
  const kind = detector?.kind === 'motion' ? 'motion' : 'onnx';
  if (tracker) merged.tracker = { ...TRACKER_BY_DETECTOR[kind], ...tracker };
  if (counting) merged.counting = { ...COUNTING_BY_DETECTOR[kind], ...counting };
  const sensors = merged.sensors as Record<string, unknown> | undefined;
  if (sensors) merged.sensors = { intervalSeconds: 60, timeoutSeconds: 10, ...sensors };
  const outbox = merged.outbox as Record<string, unknown> | undefined;
  if (outbox && outbox.path === undefined && typeof merged.stateDir === 'string') outbox.path = resolve(merged.stateDir, 'outbox.db');
  const checked = checkConfig(merged);
  if (!checked.ok) throw new ConfigError(invalidConfigMessage(checked.problems.map((problem) => (problem.startsWith('cloud.token ') ? `${problem}: ${TOKEN_HINT}` : problem))));
  const config = checked.value;
  const problems: string[] = [];
  // The example's placeholder passed as a token, and the agent met a 401 from the cloud at its first upload.
  if (config.cloud.token === PLACEHOLDER_TOKEN) problems.push(`cloud.token is the example's placeholder "${PLACEHOLDER_TOKEN}": ${TOKEN_HINT}`);
  if (config.detector.kind === 'onnx' && !config.detector.model) problems.push('detector.model is required when detector.kind is onnx');
  if (config.detector.slot && config.detector.kind !== 'onnx') problems.push('detector.slot needs detector.kind onnx');
  if (config.tracker.lowScore > config.tracker.highScore) problems.push('tracker.lowScore must not exceed tracker.highScore');
  if (config.sensors && !config.sensors.command === !config.sensors.file) problems.push('sensors needs exactly one of sensors.command or sensors.file');
  const zoneError = zoneProblem(config.counting.zone, config.source.width, config.source.height);
  if (zoneError) problems.push(`counting.zone ${zoneError}`);
  else {
    const outside = zonePointsOutside(config.counting.zone, config.source.width, config.source.height);
    if (outside) problems.push(outside);
  }
  if (problems.length > 0) throw new ConfigError(invalidConfigMessage(problems));
  return config;
}

/**
 * What makes a zone count nothing, or undefined when it is usable. Each of these passed the checks before and the
 * agent then counted 0 for good without a word: a polygon without area (repeated or collinear points), one whose
 * edges cross (a bow-tie: inside and outside are not what was meant), or one wholly outside the frame (a zone drawn for
 * a larger picture, kept after source.width and height were lowered). A zone may reach past the frame's edges.
 */
export function zoneProblem(zone: readonly (readonly number[])[], width: number, height: number): string | undefined {
  const points = zone.map(([x, y]) => [x!, y!] as const);
  const n = points.length;
  const cross = (o: readonly [number, number], a: readonly [number, number], b: readonly [number, number]) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  for (let i = 0; i < n; i++) {
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue; // the two edges that meet at the first point
      const a = points[i]!, b = points[(i + 1) % n]!, c = points[j]!, d = points[(j + 1) % n]!;
      if (cross(a, b, c) * cross(a, b, d) < 0 && cross(c, d, a) * cross(c, d, b) < 0) {
        return `has edges that cross (point ${i + 1} to ${((i + 1) % n) + 1} and point ${j + 1} to ${((j + 1) % n) + 1}): list the points in order around the zone`;
      }
    }
  }
  let twiceArea = 0;
  for (let i = 0; i < n; i++) {
    const [x1, y1] = points[i]!;
    const [x2, y2] = points[(i + 1) % n]!;
    twiceArea += x1 * y2 - x2 * y1;
  }
  if (Math.abs(twiceArea) / 2 < 1) return 'encloses no area: its points lie on one line or repeat';
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  if (Math.max(...xs) <= 0 || Math.min(...xs) >= width || Math.max(...ys) <= 0 || Math.min(...ys) >= height) {
    return `lies wholly outside the ${width}x${height} frame (source.width and source.height)`;
  }
  return undefined;
}

/** How far past the frame's edges a zone's point may lie: a zone drawn to the edge by hand often overshoots it a little. */
export const ZONE_EDGE_ALLOWANCE = 0.05;

/**
 * The zone's points that lie outside the frame the agent counts on, by their paths, or undefined when none do. The
 * capture scales every picture to source.width x source.height, so that is the frame, whatever the camera's own
 * size: a zone drawn on a full-resolution screenshot (1920x1080, say) passed the checks above, being partly in a
 * 640x480 frame, and then counted at the wrong place or not at all. A point up to `ZONE_EDGE_ALLOWANCE` of the
 * frame's width or height past its edge is taken; the part of a zone past the edge can hold no bee anyway.
 */
export function zonePointsOutside(zone: readonly (readonly number[])[], width: number, height: number, path = 'counting.zone'): string | undefined {
  const marginX = width * ZONE_EDGE_ALLOWANCE;
  const marginY = height * ZONE_EDGE_ALLOWANCE;
  const outside = zone.flatMap(([x, y], index) => (x! < -marginX || x! > width + marginX || y! < -marginY || y! > height + marginY ? [{ index, x: x!, y: y! }] : []));
  if (outside.length === 0) return undefined;
  const named = outside.map(({ index, x, y }) => `${path}[${index}] (${x}, ${y})`);
  const list = named.length === 1 ? named[0]! : `${named.slice(0, -1).join(', ')} and ${named.at(-1)!}`;
  return (
    `${list} ${named.length === 1 ? 'lies' : 'lie'} outside the ${width}x${height} frame (source.width and source.height), more than ` +
    `${Math.round(ZONE_EDGE_ALLOWANCE * 100)} % past its edge: zone points are pixels of the frame the picture is scaled to, so a zone drawn on ` +
    `a picture of another size must be scaled to ${width}x${height}`
  );
}

/**
 * Inference threads when `detector.threads` is not set: one fewer than the cores, at least one. The agent's ffmpeg
 * decodes the camera beside inference, and onnxruntime's own default, a thread per core, had the two compete: on two
 * cores the work per frame rose from about 31 to 42 ms and a 30 fps camera lost frames (docs/benchmarks.md).
 */
export function inferenceThreads(cores = availableParallelism()): number {
  return Math.max(1, cores - 1);
}

/** The lower half of the frame: the usual framing has the hive entrance along the bottom edge. */
export function defaultZone(width: number, height: number): [number, number][] {
  return [[0, height / 2], [width, height / 2], [width, height], [0, height]];
}

/** Reads a YAML or JSON file; relative paths inside it (model, outbox, stateDir) are taken from its folder. */
export function readConfigFile(path: string): PartialAgentConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`config file ${path} must hold an object`);
  const config = parsed as PartialAgentConfig;
  const base = dirname(resolve(path));
  const local = (p: unknown) => (typeof p === 'string' && !isAbsolute(p) ? resolve(base, p) : p) as string;
  if (config.detector?.model) config.detector.model = local(config.detector.model);
  if (config.detector?.slot?.model) config.detector.slot.model = local(config.detector.slot.model);
  if (config.outbox?.path) config.outbox.path = local(config.outbox.path);
  if (config.stateDir) config.stateDir = local(config.stateDir);
  if (config.sensors?.file) config.sensors.file = local(config.sensors.file);
  return config;
}

/** `"x,y x,y x,y"` → points; errors say which pair is wrong. */
export function parseZone(text: string): [number, number][] {
  return text.trim().split(/\s+/).map((pair, i) => {
    const parts = pair.split(',');
    const [x, y] = parts.map(Number);
    if (parts.length !== 2 || !Number.isFinite(x) || !Number.isFinite(y)) throw new ConfigError(`--zone point ${i + 1} ("${pair}") must be x,y`);
    return [x!, y!];
  });
}

function merge(target: Record<string, unknown>, source: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const existing = target[key];
    if (isPlainObject(value) && isPlainObject(existing)) target[key] = merge({ ...existing }, value);
    else if (isPlainObject(value)) target[key] = merge({}, value);
    else target[key] = value;
  }
  return target;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
