import { describe, expect, it } from 'vitest';
import { PathBuilder, poseOnSegment, segmentAt, shiftSegments, type Segment } from './motion.ts';

function poseAt(segments: Segment[], t: number) {
  const segment = segmentAt(segments, t);
  if (!segment) throw new Error(`no segment at ${t}`);
  return poseOnSegment(segment, t, 30, 1234, t);
}

describe('PathBuilder', () => {
  it('times walks by distance and speed and chains segments without gaps', () => {
    const path = new PathBuilder([0, 0], 0, 0).walkTo([100, 0], 50).hold(2).walkTo([100, 60], 30);
    const [walk, hold, turn] = path.segments as [Segment, Segment, Segment];
    expect(walk.t1 - walk.t0).toBeCloseTo(2);
    expect(hold.t0).toBe(walk.t1);
    expect(hold.mode).toBe('stand');
    expect(turn.t1 - turn.t0).toBeCloseTo(2);
    expect(path.now).toBeCloseTo(6);
    expect(path.at).toEqual([100, 60]);
  });

  it('moves continuously, also across segment boundaries', () => {
    const path = new PathBuilder([0, 0], 0.9, 0)
      .flyTo([200, 100], 300, 0, 'out', [150, -40])
      .walkTo([260, 140], 60)
      .hold(1, 'fan', -Math.PI / 2);
    const step = 1 / 240;
    let previous = poseAt(path.segments, 0);
    for (let t = step; t < path.now; t += step) {
      const pose = poseAt(path.segments, t);
      expect(Math.hypot(pose.x - previous.x, pose.y - previous.y)).toBeLessThan(6);
      expect(Math.abs(pose.altitude - previous.altitude)).toBeLessThan(0.05);
      previous = pose;
    }
    expect(previous.mode).toBe('fan');
    expect(previous.altitude).toBe(0);
  });

  it('points the head along the walk and turns to face where asked when standing', () => {
    const path = new PathBuilder([0, 0], 0, 0).walkTo([0, 100], 50).hold(1, 'stand', Math.PI);
    expect(Math.abs(poseAt(path.segments, 1).heading - Math.PI / 2)).toBeLessThan(0.2);
    expect(Math.abs(poseAt(path.segments, 2.9).heading - Math.PI)).toBeLessThan(1e-9);
  });

  it('finds no segment outside the plan and shifts plans in time', () => {
    const path = new PathBuilder([0, 0], 0, 0).walkTo([10, 0], 10);
    expect(segmentAt(path.segments, -0.1)).toBeUndefined();
    expect(segmentAt(path.segments, 1.1)).toBeUndefined();
    const shifted = shiftSegments(path.segments, 5);
    expect(shifted[0]?.t0).toBe(5);
    expect(segmentAt(shifted, 5.5)).toBeDefined();
  });
});
