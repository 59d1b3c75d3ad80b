import { describe, expect, it } from 'vitest';
import { isPlaybackFile } from './rendition.ts';

describe('isPlaybackFile', () => {
  // A clip's playlist link also fetched videos/{id}/original.* (the raw upload) and its detections.
  it('takes the playlist, its segments and the poster, and nothing else of the clip', () => {
    for (const file of ['index.m3u8', 'segment_00000.ts', 'segment_123456.ts', 'poster.jpg']) expect(isPlaybackFile(file)).toBe(true);
    for (const file of ['original.mp4', 'original.ts', 'detections.json', 'poster.png', 'segment_1.ts', 'hls/segment_00000.ts', 'segment_00000.ts.bak']) {
      expect(isPlaybackFile(file)).toBe(false);
    }
  });
});
