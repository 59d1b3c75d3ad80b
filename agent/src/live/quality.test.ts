import { describe, expect, it } from 'vitest';
import { FramePacer } from './frame-pacer.ts';
import { chooseProfile, jpegFormat, streamFormat } from './quality.ts';

const vga = { width: 640, height: 480, fps: 15 };

describe('streamFormat', () => {
  it('maps the profiles on a 640×480 @ 15 camera', () => {
    expect(streamFormat('low', vga)).toEqual({ profile: 'low', width: 320, height: 240, fps: 10, bitrateKbps: 300, maxrateKbps: 300, bufsizeKbits: 600, keyframeInterval: 10 });
    expect(streamFormat('medium', vga)).toMatchObject({ width: 640, height: 480, fps: 15, bitrateKbps: 800, keyframeInterval: 15 });
    expect(streamFormat('high', vga)).toMatchObject({ width: 640, height: 480, fps: 15, bitrateKbps: 2000 });
  });

  it('keeps the native size and rate on high, fits other profiles in their box keeping the aspect', () => {
    const hd = { width: 1280, height: 720, fps: 30 };
    expect(streamFormat('high', hd)).toMatchObject({ width: 1280, height: 720, fps: 30, keyframeInterval: 30 });
    expect(streamFormat('medium', hd)).toMatchObject({ width: 640, height: 360, fps: 15 });
    expect(streamFormat('low', hd)).toMatchObject({ width: 320, height: 180, fps: 10 });
  });

  it('never enlarges the picture or raises the frame rate, and keeps sizes even', () => {
    expect(streamFormat('medium', { width: 320, height: 240, fps: 8 })).toMatchObject({ width: 320, height: 240, fps: 8, keyframeInterval: 8 });
    expect(streamFormat('low', { width: 1001, height: 563, fps: 25 })).toMatchObject({ width: 320, height: 178 });
    expect(() => streamFormat('low', { width: 0, height: 480, fps: 15 })).toThrow('camera format must be positive');
  });

  it('sizes JPEG relay pictures like the stream, at the relay rate', () => {
    expect(jpegFormat('low', vga, 4)).toMatchObject({ width: 320, height: 240, fps: 4 });
    expect(jpegFormat('high', { ...vga, fps: 2 }, 4)).toMatchObject({ width: 640, height: 480, fps: 2 });
  });
});

describe('chooseProfile', () => {
  it('reads known profiles in any case and defaults to medium', () => {
    expect(chooseProfile('LOW')).toEqual({ profile: 'low' });
    expect(chooseProfile(' high ')).toEqual({ profile: 'high' });
    expect(chooseProfile(undefined)).toEqual({ profile: 'medium' });
    expect(chooseProfile(null)).toEqual({ profile: 'medium' });
  });
  it('falls back to medium with a note for an unknown profile', () => {
    expect(chooseProfile('ultra')).toEqual({ profile: 'medium', note: 'qualityProfile "ultra" is not one of low, medium, high: using medium' });
    expect(chooseProfile(3).note).toContain('qualityProfile 3');
  });
});

describe('FramePacer', () => {
  function kept(fps: number, cameraFps: number, seconds: number, jitterMs = 0): number {
    const pacer = new FramePacer(fps);
    let count = 0;
    for (let i = 0; i < cameraFps * seconds; i++) {
      const jitter = jitterMs * Math.sin(i * 1.7);
      if (pacer.take((i * 1000) / cameraFps + jitter)) count++;
    }
    return count;
  }
  it('thins 15 fps to 10 and 30 fps to 4', () => {
    expect(kept(10, 15, 10)).toBe(100);
    // The window's last frame may take the next slot early (within the jitter tolerance).
    expect(kept(4, 30, 10)).toBeGreaterThanOrEqual(40);
    expect(kept(4, 30, 10)).toBeLessThanOrEqual(41);
  });
  it('keeps every frame when the target equals the camera rate, despite jitter', () => {
    expect(kept(15, 15, 10, 6)).toBe(150);
  });
  it('restarts after a gap instead of bursting', () => {
    const pacer = new FramePacer(10);
    expect(pacer.take(0)).toBe(true);
    expect(pacer.take(5000)).toBe(true);
    expect(pacer.take(5010)).toBe(false);
    expect(pacer.take(5100)).toBe(true);
  });
});
