import { describe, expect, it } from 'vitest';
import { HEATMAP_PENDING_POLL_MS, HEATMAP_REFRESH_MS, heatmapPollMs } from './heatmaps.ts';

describe('heatmap list re-reads', () => {
  it('come soon while a listed day has no picture yet, every minute otherwise', () => {
    expect(heatmapPollMs([{ imageURL: '/media/a.png' }, { imageURL: null }])).toBe(HEATMAP_PENDING_POLL_MS);
    expect(heatmapPollMs([{ imageURL: '/media/a.png' }, null])).toBe(HEATMAP_REFRESH_MS);
    expect(heatmapPollMs([])).toBe(HEATMAP_REFRESH_MS);
    expect(heatmapPollMs(null)).toBe(HEATMAP_REFRESH_MS);
    // With links that expire within the minute (a short MEDIA_URL_TTL_SECONDS), the pictures turned into broken images.
    const now = 1_800_000_000_000;
    expect(heatmapPollMs([{ imageURL: 'https://h.example/media/1800000030.sig/heatmaps/1-b/2026-11-28.png' }], now)).toBe(24_000);
    expect(HEATMAP_PENDING_POLL_MS).toBeLessThan(HEATMAP_REFRESH_MS);
  });
});
