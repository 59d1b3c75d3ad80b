import { Type, type Static } from 'typebox';
import { deviceTimeProblem, Identifier, MAX_UNIX_SECONDS, UnixSeconds } from './common.ts';

/** Bounds of one trajectory upload: enough for minutes of a busy entrance, small enough to bin in milliseconds. */
export const MAX_TRAJECTORY_TRACKS = 2000;
export const MAX_POINTS_PER_TRACK = 2000;
export const MAX_TRAJECTORY_POINTS = 200_000;
export const MAX_FRAME_SIDE = 8192;

/** ISO-8601 date and time; the existing device sends it without a zone, which means UTC. */
const IsoDateTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}(:?\\d{2})?)?$',
  maxLength: 40,
  description: 'ISO-8601 date and time; without a zone it is read as UTC.',
});

export const FrameDimensions = Type.Object(
  {
    width: Type.Integer({ minimum: 1, maximum: MAX_FRAME_SIDE }),
    height: Type.Integer({ minimum: 1, maximum: MAX_FRAME_SIDE }),
  },
  { title: 'FrameDimensions', additionalProperties: false },
);
export type FrameDimensions = Static<typeof FrameDimensions>;

/**
 * `[x, y]` in pixels of the frame, origin top left. Written as an array of two numbers rather than a tuple: OpenAPI
 * 3.0 has no tuples, and the tuple's `items: [...]` made /openapi.json invalid for strict tools.
 */
export const TrajectoryPoint = Type.Unsafe<[number, number]>(
  Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: '[x, y] in pixels of the frame, origin top left' }),
);

/** Body of `POST /api/entrance-heatmaps/trajectories`, in the shape existing entrance observers send. */
export const TrajectoryUpload = Type.Object(
  {
    boxId: Identifier,
    timestamp: Type.Union([IsoDateTime, UnixSeconds], {
      description: 'When the batch was recorded: an ISO-8601 string or Unix seconds. Its UTC date picks the daily heatmap.',
    }),
    frameDimensions: FrameDimensions,
    trackHistory: Type.Record(Type.String(), Type.Array(TrajectoryPoint, { maxItems: MAX_POINTS_PER_TRACK }), {
      maxProperties: MAX_TRAJECTORY_TRACKS,
      description: `Track id → its points in time order; at most ${MAX_TRAJECTORY_TRACKS} tracks and ${MAX_TRAJECTORY_POINTS} points in all.`,
    }),
    batchId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'Idempotency key: a retried batch with the same id is counted once.' }),
    ),
  },
  { title: 'TrajectoryUpload', additionalProperties: false },
);
export type TrajectoryUpload = Static<typeof TrajectoryUpload>;

export const TrajectoryUploadResponse = Type.Object(
  {
    message: Type.String(),
    trajectories: Type.Integer({ description: 'Tracks counted from this batch (0 when it was a retry already counted).' }),
    points: Type.Integer(),
    duplicate: Type.Boolean({ description: 'True when a batch with this batchId was already counted.' }),
  },
  { title: 'TrajectoryUploadResponse' },
);

/** The instant of `timestamp`; zone-less ISO strings are UTC. Null when it names no real date (2026-02-30). */
export function trajectoryInstant(timestamp: string | number): Date | null {
  if (typeof timestamp === 'number') {
    return Number.isFinite(timestamp) && timestamp >= 0 && timestamp <= MAX_UNIX_SECONDS ? new Date(timestamp * 1000) : null;
  }
  let text = timestamp.replace(' ', 'T');
  if (!/(Z|[+-]\d{2}(:?\d{2})?)$/i.test(text.slice(16))) text += 'Z';
  // Date accepts "+0200" and "+02" poorly across engines; normalise the offset to "+02:00".
  text = text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/([+-]\d{2})$/, '$1:00');
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // Date rolls 2026-02-30 over to March; a device sending that has a bug worth reporting.
  const [year, month, day] = timestamp.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return null;
  return date;
}

export type TrajectoryCheck = { ok: true; instant: Date; points: number } | { ok: false; error: string };

/**
 * How far past the frame's edges a point may lie, as a share of its width and height: a tracker predicts a bee
 * leaving the picture a little beyond it, and one such point refused a whole batch of tracks. Heatmap binning puts
 * it on the edge.
 */
export const TRAJECTORY_EDGE_SLACK = 0.05;
/**
 * What the schema cannot say: the total point count, a believable timestamp (not before 2000, not more than a day
 * ahead of `now`: a camera with an unset clock made a heatmap day in 1970 or 2036), and every point a finite number
 * inside the frame, give or take `TRAJECTORY_EDGE_SLACK`. Errors name the point, e.g. `trackHistory.17[4] is outside
 * the 640×480 frame`.
 */
export function checkTrajectoryUpload(body: TrajectoryUpload, now = new Date()): TrajectoryCheck {
  const instant = trajectoryInstant(body.timestamp);
  if (!instant) return { ok: false, error: `timestamp ${JSON.stringify(body.timestamp)} is not a valid date and time` };
  const clockProblem = deviceTimeProblem(instant.getTime(), now, `timestamp ${JSON.stringify(body.timestamp)}`);
  if (clockProblem) return { ok: false, error: clockProblem };
  const { width, height } = body.frameDimensions;
  const slackX = width * TRAJECTORY_EDGE_SLACK;
  const slackY = height * TRAJECTORY_EDGE_SLACK;
  let points = 0;
  for (const [trackId, track] of Object.entries(body.trackHistory)) {
    points += track.length;
    if (points > MAX_TRAJECTORY_POINTS) {
      return { ok: false, error: `trackHistory holds more than ${MAX_TRAJECTORY_POINTS} points; split it into several uploads` };
    }
    for (let i = 0; i < track.length; i += 1) {
      const [x, y] = track[i]!;
      if (!Number.isFinite(x) || !Number.isFinite(y)) return { ok: false, error: `trackHistory.${trackId}[${i}] must hold finite numbers` };
      if (x < -slackX || y < -slackY || x > width + slackX || y > height + slackY) {
        return { ok: false, error: `trackHistory.${trackId}[${i}] is outside the ${width}×${height} frame` };
      }
    }
  }
  return { ok: true, instant, points };
}
