import { describe, expect, it } from 'vitest';
import type { EndedTrack } from '../track/tracker.ts';
import { compileValidator, MAX_POINTS_PER_TRACK, TrajectoryUpload } from '@hivegate/shared';
import { TrajectoryBatcher } from './trajectory.ts';

const checkUpload = compileValidator(TrajectoryUpload);

const options = { boxId: 'box-9', frameWidth: 640, frameHeight: 480, maxTracks: 3, maxAgeSeconds: 60 };

function track(id: number, startIso: string, n = 4): EndedTrack {
  const start = Date.parse(startIso);
  return { id, points: Array.from({ length: n }, (_, k) => ({ x: 10 + k * 3.333, y: 20 + k, t: start + k * 100 })) };
}

describe('TrajectoryBatcher', () => {
  it('emits a batch when it holds maxTracks tracks, in the upload shape', () => {
    const batcher = new TrajectoryBatcher(options);
    expect(batcher.add([track(1, '2026-05-01T10:00:00Z'), track(2, '2026-05-01T10:00:01Z')], Date.parse('2026-05-01T10:00:02Z'))).toEqual([]);
    const [batch] = batcher.add([track(3, '2026-05-01T10:00:02Z')], Date.parse('2026-05-01T10:00:03Z'));
    expect(batch).toMatchObject({ boxId: 'box-9', timestamp: '2026-05-01T10:00:00.000Z', frameDimensions: { width: 640, height: 480 } });
    expect(Object.keys(batch!.trackHistory)).toEqual(['1', '2', '3']);
    expect(batch!.trackHistory['1']![1]).toEqual([13.3, 21]);
    expect(batch!.batchId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('emits a batch once its oldest track is older than maxAgeSeconds', () => {
    const batcher = new TrajectoryBatcher(options);
    batcher.add([track(1, '2026-05-01T10:00:00Z')], Date.parse('2026-05-01T10:00:01Z'));
    expect(batcher.add([], Date.parse('2026-05-01T10:00:30Z'))).toEqual([]);
    expect(batcher.add([], Date.parse('2026-05-01T10:01:01Z'))).toHaveLength(1);
  });

  it('never lets a batch span two UTC dates', () => {
    const batcher = new TrajectoryBatcher(options);
    batcher.add([track(1, '2026-05-01T23:59:58Z')], Date.parse('2026-05-01T23:59:59Z'));
    const out = batcher.add([track(2, '2026-05-02T00:00:01Z')], Date.parse('2026-05-02T00:00:02Z'));
    expect(out.map((b) => b.timestamp)).toEqual(['2026-05-01T23:59:58.000Z']);
    expect(batcher.flush().map((b) => b.timestamp)).toEqual(['2026-05-02T00:00:01.000Z']);
  });

  it('derives batchId from the content: equal input, equal id; different input, different id', () => {
    const make = (id: number) => {
      const batcher = new TrajectoryBatcher(options);
      batcher.add([track(id, '2026-05-01T10:00:00Z')], 0);
      return batcher.flush()[0]!.batchId;
    };
    expect(make(1)).toBe(make(1));
    expect(make(1)).not.toBe(make(2));
  });

  it('skips tracks too short to draw', () => {
    const batcher = new TrajectoryBatcher({ ...options, minPoints: 3 });
    batcher.add([track(1, '2026-05-01T10:00:00Z', 2)], 0);
    expect(batcher.flush()).toEqual([]);
  });

  it('splits a track longer than the cloud accepts into several entries, keeping every point', () => {
    const batcher = new TrajectoryBatcher(options);
    batcher.add([track(5, '2026-05-01T10:00:00Z', MAX_POINTS_PER_TRACK + 10)], Date.parse('2026-05-01T10:00:01Z'));
    const [batch] = batcher.flush();
    expect(Object.keys(batch!.trackHistory)).toEqual(['5', '5.1']);
    expect(batch!.trackHistory['5']).toHaveLength(MAX_POINTS_PER_TRACK);
    expect(batch!.trackHistory['5.1']).toHaveLength(10);
    expect(checkUpload(batch).ok).toBe(true);
  });
});
