import { describe, expect, it } from 'vitest';
import { assertValidKey } from '../storage/index.ts';
import { heatmapFolder, heatmapImageKey, imageSizeFor } from './keys.ts';

describe('heatmap keys', () => {
  it('keeps plain box ids readable and separates owners', () => {
    expect(heatmapImageKey(7, '1', '2026-05-01')).toBe('heatmaps/7-1/2026-05-01.png');
    expect(heatmapFolder(8, '1')).not.toBe(heatmapFolder(7, '1'));
  });

  it('turns any other id into one valid segment, distinct per id', () => {
    const odd = ['../x', 'a/b', '.hidden', 'box 1', 'ü', 'x'.repeat(200), '%2F'];
    const folders = odd.map((id) => heatmapFolder(3, id));
    for (const folder of folders) {
      expect(folder).toMatch(/^3-h[0-9a-f]{32}$/);
      expect(() => assertValidKey(`heatmaps/${folder}/2026-05-01.png`)).not.toThrow();
    }
    expect(new Set(folders).size).toBe(odd.length);
  });
});

describe('imageSizeFor', () => {
  it('keeps frames up to 1280 px and scales larger ones down with their aspect', () => {
    expect(imageSizeFor(640, 480)).toEqual({ width: 640, height: 480 });
    expect(imageSizeFor(1920, 1080)).toEqual({ width: 1280, height: 720 });
    expect(imageSizeFor(8192, 10)).toEqual({ width: 1280, height: 2 });
  });
});
