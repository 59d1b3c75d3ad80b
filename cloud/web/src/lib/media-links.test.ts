import { describe, expect, it } from 'vitest';
import { linkExpiresAt, linkFolder, refreshBeforeExpiry, underNewestLink } from './media-links.ts';

const link = (expires: number, file = 'index.m3u8') => `https://hive.example/media/${expires}.AbC-_9/videos/12/${file}`;

describe('signed media links', () => {
  it('reads the expiry of a signed link and nothing else', () => {
    expect(linkExpiresAt(link(1_800_000_000))).toBe(1_800_000_000_000);
    expect(linkExpiresAt('https://hive.example/elsewhere/1800000000.x/a.png')).toBeUndefined();
    expect(linkExpiresAt(null)).toBeUndefined();
  });

  it('re-reads a minute before the first link expires, sooner for short-lived links, never in a tight loop', () => {
    const now = 1_800_000_000_000;
    expect(refreshBeforeExpiry([link(1_800_003_600), link(1_800_000_900), null], now)).toBe(900_000 - 60_000);
    expect(refreshBeforeExpiry([link(1_800_000_100)], now)).toBe(80_000);
    expect(refreshBeforeExpiry([link(1_800_000_002)], now)).toBe(5_000);
    expect(refreshBeforeExpiry([link(1_799_999_000)], now)).toBe(5_000);
    expect(refreshBeforeExpiry([null, 'blob:x'], now)).toBeUndefined();
  });

  it("gives the folder a link's segments resolve under", () => {
    expect(linkFolder(link(1_800_000_000))).toBe('https://hive.example/media/1800000000.AbC-_9/videos/12/');
  });

  // A stored clip's segments resolved under its first link for good: a long or paused playback stalled on 403s.
  it("sends a renewed stream's playlist and segment requests under its newest link", () => {
    const first = link(1_800_000_000);
    const newest = 'https://hive.example/media/1800003600.Xyz/videos/12/index.m3u8';
    expect(underNewestLink(first, newest, [first, newest])).toBe(newest);
    expect(underNewestLink(link(1_800_000_000, 'segment_00101.ts'), newest, [first, newest])).toBe('https://hive.example/media/1800003600.Xyz/videos/12/segment_00101.ts');
    expect(underNewestLink('https://hive.example/media/1800003600.Xyz/videos/12/segment_00101.ts', newest, [first, newest])).toBeUndefined();
    expect(underNewestLink('https://cdn.example/hls.js', newest, [first, newest])).toBeUndefined();
  });
});
