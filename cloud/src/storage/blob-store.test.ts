import { describe, expect, it } from 'vitest';
import {
  assertValidKey,
  assertValidPrefix,
  contentTypeForKey,
  InvalidBlobKeyError,
  RangeNotSatisfiableError,
  resolveContentType,
  resolveRange,
} from './blob-store.ts';

describe('assertValidKey', () => {
  it('accepts the project key shapes', () => {
    for (const key of ['videos/12/index.m3u8', 'heatmaps/3/2025-06-01.png', 'live/abc/seg_00001.ts', 'a', 'a b/ç.txt']) {
      expect(() => assertValidKey(key)).not.toThrow();
    }
  });

  it.each([
    ['', /must not be empty/],
    ['/abs/path', /leading "\/"/],
    ['a//b', /empty path segments/],
    ['a/', /empty path segments/],
    ['../up', /"\.\." segments/],
    ['a/../b', /"\.\." segments/],
    ['a/./b', /"\." segments/],
    ['.hidden', /reserved/],
    ['a/.meta', /reserved/],
    ['a\\b', /backslashes/],
    ['a\0b', /control characters/],
    ['a\nb', /control characters/],
    ['x'.repeat(201), /at most 200 bytes/],
    [`${'abc/'.repeat(300)}z`, /at most 1024 bytes/],
  ])('rejects %j', (key, reason) => {
    expect(() => assertValidKey(key)).toThrow(InvalidBlobKeyError);
    expect(() => assertValidKey(key)).toThrow(reason);
    expect(() => assertValidKey(key)).toThrow(/^key /);
  });

  it('rejects non-strings and names the given field', () => {
    expect(() => assertValidKey(42)).toThrow('key 42 is invalid: must be a string');
    expect(() => assertValidKey('../x', 'videoKey')).toThrow(/^videoKey /);
  });
});

describe('assertValidPrefix', () => {
  it('allows empty, trailing slash and partial segments', () => {
    for (const prefix of ['', 'videos/', 'videos/1', 'vid']) expect(() => assertValidPrefix(prefix)).not.toThrow();
  });
  it('refuses traversal and empty segments', () => {
    for (const prefix of ['../', 'a//', '/a', 'a/../']) expect(() => assertValidPrefix(prefix)).toThrow(/^prefix /);
  });
});

describe('resolveRange', () => {
  it('keeps ends inside the object and refuses starts past it', () => {
    expect(resolveRange('k', { start: 0 }, 10)).toEqual({ start: 0, end: 9 });
    expect(resolveRange('k', { start: 3, end: 5 }, 10)).toEqual({ start: 3, end: 5 });
    expect(resolveRange('k', { start: 3, end: 50 }, 10)).toEqual({ start: 3, end: 9 });
    expect(() => resolveRange('k', { start: 10 }, 10)).toThrow(RangeNotSatisfiableError);
    expect(() => resolveRange('k', { start: 0 }, 0)).toThrow(RangeNotSatisfiableError);
  });
});

describe('content types', () => {
  it('derives from the extension, case-insensitively, with a binary default', () => {
    expect(contentTypeForKey('videos/1/index.m3u8')).toBe('application/vnd.apple.mpegurl');
    expect(contentTypeForKey('live/s/seg1.TS')).toBe('video/mp2t');
    expect(contentTypeForKey('heatmaps/1/d.png')).toBe('image/png');
    expect(contentTypeForKey('videos/1/source')).toBe('application/octet-stream');
    expect(contentTypeForKey('videos/1.d/source')).toBe('application/octet-stream');
  });
  it('validates caller types, which end up in HTTP headers', () => {
    expect(resolveContentType('a.bin', 'video/mp4; codecs="avc1.64001f"')).toBe('video/mp4; codecs="avc1.64001f"');
    expect(resolveContentType('a.png', undefined)).toBe('image/png');
    expect(() => resolveContentType('a', 'mp4')).toThrow(/opts\.contentType/);
    expect(() => resolveContentType('a', 'text/plain\r\nSet-Cookie: x')).toThrow(/opts\.contentType/);
  });
});
