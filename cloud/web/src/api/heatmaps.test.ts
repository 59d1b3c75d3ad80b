import { describe, expect, it } from 'vitest';
import { HEATMAP_PENDING_POLL_MS, HEATMAP_REFRESH_MS, heatmapPollMs } from './heatmaps.ts';

describe('heatmap list re-reads', () => {
  it('come soon while a listed day has no picture yet, every minute otherwise', () => {
    expect(heatmapPollMs([{ imageURL: '/media/a.png' }, { imageURL: null }])).toBe(HEATMAP_PENDING_POLL_MS);
    expect(heatmapPollMs([{ imageURL: '/media/a.png' }, null])).toBe(HEATMAP_REFRESH_MS);
    expect(heatmapPollMs([])).toBe(HEATMAP_REFRESH_MS);
    expect(heatmapPollMs(null)).toBe(HEATMAP_REFRESH_MS);
    expect(HEATMAP_PENDING_POLL_MS).toBeLessThan(HEATMAP_REFRESH_MS);
  });
});
