import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { missingMediaToolsWarning } from './ffmpeg.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'hivegate-ffmpeg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the start-up check of ffmpeg and ffprobe on PATH', () => {
  // Without ffmpeg on PATH the service started silently, and the first upload's transcode failed over and over.
  it('says which tool is missing, how to get it and what fails meanwhile', () => {
    expect(missingMediaToolsWarning({}, '')).toBe(
      'ffmpeg was not found on PATH: install it (Debian: apt-get install ffmpeg) or set FFMPEG_PATH; ' +
        'ffprobe was not found on PATH: install it (Debian: apt-get install ffmpeg) or set FFPROBE_PATH; until then video uploads, transcodes and heatmap images fail',
    );
  });

  it('says nothing when both are found, on PATH or where their settings point', () => {
    for (const name of ['ffmpeg', 'ffprobe']) {
      writeFileSync(path.join(dir, name), '#!/bin/sh\n');
      chmodSync(path.join(dir, name), 0o755);
    }
    expect(missingMediaToolsWarning({}, dir)).toBeUndefined();
    expect(missingMediaToolsWarning({ ffmpegPath: path.join(dir, 'ffmpeg'), ffprobePath: path.join(dir, 'ffprobe') }, '')).toBeUndefined();
  });
});
