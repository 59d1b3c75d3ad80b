import { describe, expect, it } from 'vitest';
import {
  checkTrajectoryUpload,
  compileValidator,
  MAX_POINTS_PER_TRACK,
  MAX_TRAJECTORY_POINTS,
  MAX_TRAJECTORY_TRACKS,
  trajectoryInstant,
  TrajectoryUpload,
} from './index.ts';

const check = compileValidator(TrajectoryUpload);
const body = (overrides: Record<string, unknown> = {}) => ({
  boxId: 7,
  timestamp: '2026-05-01T10:15:00',
  frameDimensions: { width: 640, height: 480 },
  trackHistory: { '1': [[10, 20], [12, 24]], '17': [[0, 0], [640, 480]] },
  ...overrides,
});

describe('TrajectoryUpload schema', () => {
  it('accepts the body existing devices send, with and without batchId, ISO or Unix timestamp', () => {
    expect(check(body()).ok).toBe(true);
    expect(check(body({ batchId: 'abc' })).ok).toBe(true);
    expect(check(body({ timestamp: 1_777_630_500 })).ok).toBe(true);
    expect(check(body({ timestamp: '2026-05-01T10:15:00.123456+02:00' })).ok).toBe(true);
    expect(check(body({ trackHistory: {} })).ok).toBe(true);
  });

  it.each([
    [{ boxId: undefined }, 'boxId is required'],
    [{ timestamp: 'yesterday' }, 'timestamp'],
    [{ timestamp: -5 }, 'timestamp'],
    [{ frameDimensions: { width: 0, height: 480 } }, 'frameDimensions.width must be >= 1'],
    [{ frameDimensions: { width: 640, height: 8193 } }, 'frameDimensions.height must be <= 8192'],
    [{ frameDimensions: { width: 640 } }, 'frameDimensions.height is required'],
    [{ trackHistory: { '3': [[1, 2, 3]] } }, 'trackHistory[3][0]'],
    [{ trackHistory: { '3': [[1]] } }, 'trackHistory[3][0]'],
    [{ trackHistory: { '3': [['1', 2]] } }, 'trackHistory[3][0][0] must be a number'],
    [{ trackHistory: [[1, 2]] }, 'trackHistory must be an object'],
    [{ batchId: '' }, 'batchId must not be empty'],
    [{ extra: 1 }, 'extra is not an allowed property'],
  ])('refuses %j naming the field', (overrides, error) => {
    const data: Record<string, unknown> = body(overrides);
    for (const [key, value] of Object.entries(overrides)) if (value === undefined) delete data[key];
    const result = check(data);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(error);
  });

  it('bounds the number of tracks and the points per track', () => {
    const tooManyTracks = Object.fromEntries(Array.from({ length: MAX_TRAJECTORY_TRACKS + 1 }, (_, i) => [String(i), [[1, 1]]]));
    expect(check(body({ trackHistory: tooManyTracks }))).toEqual({ ok: false, error: `trackHistory must have at most ${MAX_TRAJECTORY_TRACKS} properties` });
    const longTrack = Array.from({ length: MAX_POINTS_PER_TRACK + 1 }, () => [1, 1]);
    expect(check(body({ trackHistory: { a: longTrack } }))).toEqual({ ok: false, error: `trackHistory.a must contain at most ${MAX_POINTS_PER_TRACK} items` });
  });
});

describe('checkTrajectoryUpload', () => {
  it('counts points and reads the instant (zone-less = UTC)', () => {
    const result = checkTrajectoryUpload(body() as unknown as TrajectoryUpload);
    expect(result).toEqual({ ok: true, instant: new Date('2026-05-01T10:15:00Z'), points: 4 });
  });

  it('names a point outside the frame', () => {
    const result = checkTrajectoryUpload(body({ trackHistory: { '17': [[1, 1], [2, 2], [3, 3], [4, 4], [673, 10]] } }) as unknown as TrajectoryUpload);
    expect(result).toEqual({ ok: false, error: 'trackHistory.17[4] is outside the 640×480 frame' });
    expect(checkTrajectoryUpload(body({ trackHistory: { a: [[-33, 3]] } }) as unknown as TrajectoryUpload)).toMatchObject({ error: 'trackHistory.a[0] is outside the 640×480 frame' });
  });

  // One point a tracker predicted a fraction of a pixel past the edge refused a batch of 2000 tracks.
  it('takes points a little past the edges (5 % of the frame)', () => {
    const result = checkTrajectoryUpload(body({ trackHistory: { a: [[640.4, 200], [-0.5, 3], [672, 504], [-32, -24]] } }) as unknown as TrajectoryUpload);
    expect(result).toMatchObject({ ok: true, points: 4 });
  });

  // A camera with an unset clock made a heatmap day in 1970 or 2036, which then led the box's gallery.
  it("refuses a timestamp before 2000 or more than a day ahead of the server's clock", () => {
    const now = new Date('2026-05-01T12:00:00Z');
    expect(checkTrajectoryUpload(body({ timestamp: 0 }) as unknown as TrajectoryUpload, now)).toEqual({ ok: false, error: "timestamp 0 is before 2000: is the device's clock set?" });
    expect(checkTrajectoryUpload(body({ timestamp: '2036-11-28T00:00:00Z' }) as unknown as TrajectoryUpload, now)).toEqual({
      ok: false,
      error: 'timestamp "2036-11-28T00:00:00Z" is more than a day ahead of the server\'s clock: is the device\'s clock set?',
    });
    expect(checkTrajectoryUpload(body({ timestamp: '2026-05-02T11:00:00Z' }) as unknown as TrajectoryUpload, now)).toMatchObject({ ok: true });
  });

  it('refuses numbers JSON turned into Infinity (1e999)', () => {
    const parsed = JSON.parse('{"a": [[1e999, 3]]}') as Record<string, [number, number][]>;
    expect(checkTrajectoryUpload(body({ trackHistory: parsed }) as unknown as TrajectoryUpload)).toEqual({ ok: false, error: 'trackHistory.a[0] must hold finite numbers' });
  });

  it('refuses more points in all than the bound, even when each track is within its own', () => {
    const track = Array.from({ length: MAX_POINTS_PER_TRACK }, () => [1, 1]);
    const tracks = Object.fromEntries(Array.from({ length: MAX_TRAJECTORY_POINTS / MAX_POINTS_PER_TRACK + 1 }, (_, i) => [String(i), track]));
    const result = checkTrajectoryUpload(body({ trackHistory: tracks }) as unknown as TrajectoryUpload);
    expect(result).toMatchObject({ ok: false, error: expect.stringContaining(`more than ${MAX_TRAJECTORY_POINTS} points`) });
  });

  it('refuses a calendar date that does not exist', () => {
    expect(checkTrajectoryUpload(body({ timestamp: '2026-02-30T10:00:00' }) as unknown as TrajectoryUpload)).toMatchObject({ ok: false, error: expect.stringContaining('timestamp') });
  });
});

describe('trajectoryInstant', () => {
  it.each([
    ['2026-05-01T23:30:00', '2026-05-01T23:30:00.000Z'],
    ['2026-05-01 23:30:00', '2026-05-01T23:30:00.000Z'],
    ['2026-05-01T23:30', '2026-05-01T23:30:00.000Z'],
    ['2026-05-01T23:30:00Z', '2026-05-01T23:30:00.000Z'],
    ['2026-05-01T23:30:00+0200', '2026-05-01T21:30:00.000Z'],
    ['2026-05-01T23:30:00-02', '2026-05-02T01:30:00.000Z'],
    ['2026-05-01T23:30:00.250+02:00', '2026-05-01T21:30:00.250Z'],
  ])('%s is %s', (text, iso) => {
    expect(trajectoryInstant(text)?.toISOString()).toBe(iso);
  });
  it('reads Unix seconds', () => {
    expect(trajectoryInstant(1_777_680_000)?.toISOString()).toBe('2026-05-02T00:00:00.000Z');
  });
});
