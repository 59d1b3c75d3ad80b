import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assertValidKey } from '../storage/index.ts';
import { folderOfImageKey, heatmapFolder, heatmapImageKey, imageSizeFor } from './keys.ts';

describe('heatmap keys', () => {
  it('keeps plain box ids readable and separates owners', () => {
    expect(heatmapImageKey(7, '1', '2026-05-01')).toBe('heatmaps/7-1/2026-05-01.png');
    expect(heatmapFolder(8, '1')).not.toBe(heatmapFolder(7, '1'));
  });

  it('turns any other id into one valid segment, distinct per id', () => {
    const odd = ['../x', 'a/b', '.hidden', 'box 1', 'ü', 'x'.repeat(200), '%2F'];
    const folders = odd.map((id) => heatmapFolder(3, id));
    for (const folder of folders) {
      expect(folder).toMatch(/^3~[0-9a-f]{32}$/);
      expect(() => assertValidKey(`heatmaps/${folder}/2026-05-01.png`)).not.toThrow();
    }
    expect(new Set(folders).size).toBe(odd.length);
  });

  it('never gives a plain id the folder of a hashed one', () => {
    // Broke: the plain id "h" + 32 hex digits named the folder of "../../../x", so both boxes showed one image.
    const lookalike = `h${createHash('sha256').update('../../../x').digest('hex').slice(0, 32)}`;
    expect(heatmapFolder(3, lookalike)).not.toBe(heatmapFolder(3, '../../../x'));
  });

  it('reads the folder back from a stored key, older keys included', () => {
    expect(folderOfImageKey(heatmapImageKey(7, 'a/b', '2026-05-01'))).toBe(heatmapFolder(7, 'a/b'));
    expect(folderOfImageKey('heatmaps/7-h0274b71897ca7407bbf8a2f504dee4dc/2026-05-01.png')).toBe('7-h0274b71897ca7407bbf8a2f504dee4dc');
    expect(() => folderOfImageKey('videos/1/poster.png')).toThrow(/not a heatmap image key/);
  });
});

describe('imageSizeFor', () => {
  it('keeps frames up to 1280 px and scales larger ones down with their aspect', () => {
    expect(imageSizeFor(640, 480)).toEqual({ width: 640, height: 480 });
    expect(imageSizeFor(1920, 1080)).toEqual({ width: 1280, height: 720 });
    expect(imageSizeFor(8192, 10)).toEqual({ width: 1280, height: 2 });
  });
});
