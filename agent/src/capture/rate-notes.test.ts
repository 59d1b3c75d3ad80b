import { describe, expect, it } from 'vitest';
import { pictureRateNote, repeatedFramesNote, repeatsNote, slowSourceNote } from './rate-notes.ts';

describe('repeatedFramesNote', () => {
  it('tells a user whose file is slower than source.fps which rate to set', () => {
    expect(repeatedFramesNote(25, 30, { 'tracker.maxMissedFrames': 17 })).toBe(
      'the source is 25 fps and is read at 30 (source.fps), so 17 % of the frames repeat the one before; they are skipped, and the settings counted in frames follow its rate (tracker.maxMissedFrames 17), but set source.fps (--fps) to 25 to spare the work',
    );
    expect(repeatedFramesNote(15, 30, {})).toContain('so 50 % of the frames');
  });

  it('says nothing when the rates agree within 1 % or the source is faster', () => {
    expect(repeatedFramesNote(30, 30, {})).toBeUndefined();
    expect(repeatedFramesNote(30000 / 1001, 30, {})).toBeUndefined();
    expect(repeatedFramesNote(60, 30, {})).toBeUndefined();
    expect(repeatedFramesNote(30, 15, {})).toBeUndefined();
  });
});

describe('slowSourceNote', () => {
  it('tells a user whose camera sends fewer frames than source.fps the rate it is read at and the frame counts set for it', () => {
    expect(slowSourceNote(12.5, 30, { 'tracker.minHits': 1, 'tracker.maxMissedFrames': 8 })).toBe(
      'the camera sends 12.5 fps, fewer than the 30 of source.fps, so its frames are taken as they come, 12.5 a second, and the settings counted in frames follow that rate: tracker.minHits 1, tracker.maxMissedFrames 8',
    );
  });

  it('says nothing when the camera keeps up', () => {
    expect(slowSourceNote(30, 30, {})).toBeUndefined();
    expect(slowSourceNote(30000 / 1001, 30, {})).toBeUndefined();
  });
});

describe('pictureRateNote', () => {
  it('names the rate and the settings, and how many changes a spaced note stands for', () => {
    const counts = { 'tracker.minHits': 2, 'tracker.maxMissedFrames': 12 };
    expect(pictureRateNote(18.04, counts)).toBe('new pictures now come at about 18 a second (over the last 10 s), and the settings counted in frames follow: tracker.minHits 2, tracker.maxMissedFrames 12');
    expect(pictureRateNote(18, counts, { changes: 1, minutes: 10 })).toBe(pictureRateNote(18, counts));
    expect(pictureRateNote(18, counts, { changes: 7, minutes: 10 })).toMatch(/maxMissedFrames 12 \(the rate moved 7 times since this was last said, which is at most every 10 min: /);
  });
});

describe('repeatsNote', () => {
  it('names the rate a camera really delivers when many of its frames were repeats', () => {
    const note = repeatsNote(50, 300, 30);
    expect(note).toContain('17 % of the first 300 frames repeated the one before and were skipped');
    expect(note).toContain('the camera delivers about 25 fps, not the 30 it is read at');
  });

  it('says nothing below 5 % or before any frame', () => {
    expect(repeatsNote(14, 300, 30)).toBeUndefined();
    expect(repeatsNote(0, 0, 30)).toBeUndefined();
    expect(repeatsNote(15, 300, 30)).toBeDefined();
  });
});
