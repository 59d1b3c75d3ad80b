import { describe, expect, it } from 'vitest';
import { parseMediaPlaylist, PlaylistError, publishedFileKind, segmentsToPrune, trimToStored } from './playlist.ts';

// As ffmpeg 5.1's HLS muxer writes it with -hls_flags delete_segments+program_date_time.
const FFMPEG_PLAYLIST = `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-TARGETDURATION:1
#EXT-X-MEDIA-SEQUENCE:5
#EXTINF:1.000000,
#EXT-X-PROGRAM-DATE-TIME:2026-11-22T00:49:28.568+0000
index5.ts
#EXTINF:1.000000,
#EXT-X-PROGRAM-DATE-TIME:2026-11-22T00:49:29.568+0000
index6.ts
#EXTINF:0.966667,
#EXT-X-PROGRAM-DATE-TIME:2026-11-22T00:49:30.568+0000
index7.ts
#EXT-X-ENDLIST
`;

describe('publishedFileKind', () => {
  it.each([
    ['index.m3u8', 'playlist'],
    ['low_1.m3u8', 'playlist'],
    ['index12.ts', 'segment'],
    ['seg-3.m4s', 'segment'],
    ['init.mp4', 'segment'],
  ])('accepts %s as a %s', (name, kind) => expect(publishedFileKind(name)).toBe(kind));

  it.each(['index.mp4', '.hidden.ts', '../x.ts', 'a/b.ts', 'clip.mov', 'index.m3u8.bak', '', `${'a'.repeat(70)}.ts`])('refuses %j', (name) => {
    expect(publishedFileKind(name)).toBeUndefined();
  });
});

describe('parseMediaPlaylist', () => {
  it('reads segments, durations, program date-times and the end marker', () => {
    const playlist = parseMediaPlaylist(FFMPEG_PLAYLIST);
    expect(playlist).toMatchObject({ segments: ['index5.ts', 'index6.ts', 'index7.ts'], durations: [1, 1, 0.966667], targetDuration: 1, mediaSequence: 5, ended: true });
    expect(playlist.programDateTimes).toEqual([Date.parse('2026-11-22T00:49:28.568Z'), Date.parse('2026-11-22T00:49:29.568Z'), Date.parse('2026-11-22T00:49:30.568Z')]);
  });

  it('lists an fMP4 init segment first', () => {
    const playlist = parseMediaPlaylist('#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:1,\nindex0.m4s\n');
    expect(playlist.segments).toEqual(['init.mp4', 'index0.m4s']);
    expect(playlist.ended).toBe(false);
  });

  it.each([
    ['not a playlist', 'playlist must start with #EXTM3U'],
    ['#EXTM3U\n#EXTINF:1,\nhttp://elsewhere.example/a.ts\n', 'segment "http://elsewhere.example/a.ts" must be a plain .ts or .m4s name'],
    ['#EXTM3U\n#EXTINF:1,\n../other/a.ts\n', 'must be a plain .ts or .m4s name'],
    ['#EXTM3U\nindex0.ts\n', 'segment "index0.ts" has no #EXTINF'],
    ['#EXTM3U\n#EXTINF:abc,\nindex0.ts\n', '#EXTINF duration is not a number'],
    ['#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow.m3u8\n', 'master playlists are not accepted'],
    ['#EXTM3U\n#EXT-X-MAP:URI="/abs/init.mp4"\n', '#EXT-X-MAP URI must be a plain init*.mp4 name'],
    ['#EXTM3U\n#EXT-X-PROGRAM-DATE-TIME:yesterday\n', '#EXT-X-PROGRAM-DATE-TIME is not a date'],
  ])('refuses %j', (text, message) => {
    expect(() => parseMediaPlaylist(text)).toThrow(PlaylistError);
    expect(() => parseMediaPlaylist(text)).toThrow(message);
  });
});

describe('segmentsToPrune', () => {
  it('drops what fell out of the window, keeping one behind it', () => {
    expect(segmentsToPrune(['i0.ts', 'i1.ts', 'i2.ts', 'i3.ts', 'i4.ts'], ['i3.ts', 'i4.ts'])).toEqual(['i0.ts', 'i1.ts']);
    expect(segmentsToPrune(['i0.ts', 'i1.ts', 'i2.ts', 'i3.ts', 'i4.ts'], ['i3.ts', 'i4.ts'], 0)).toEqual(['i0.ts', 'i1.ts', 'i2.ts']);
  });

  it('keeps segments uploaded ahead of the playlist, the init segment, and everything when nothing stored is listed', () => {
    expect(segmentsToPrune(['init.mp4', 'i0.m4s', 'i1.m4s', 'i2.m4s', 'i3.m4s'], ['init.mp4', 'i2.m4s'], 0)).toEqual(['i0.m4s', 'i1.m4s']);
    expect(segmentsToPrune(['i0.ts', 'i1.ts', 'i2.ts'], ['i0.ts'])).toEqual([]);
    expect(segmentsToPrune(['i0.ts', 'i1.ts'], ['i9.ts'])).toEqual([]);
  });
});

describe('trimToStored', () => {
  const stored = (names: string[]) => (name: string) => names.includes(name);

  it('keeps a playlist whose segments are all stored as it is', () => {
    expect(trimToStored(FFMPEG_PLAYLIST, stored(['index5.ts', 'index6.ts', 'index7.ts']))).toEqual({ text: FFMPEG_PLAYLIST, segments: 3, trimmed: false });
  });

  it('cuts before the first missing segment, with its tags, and drops the end marker', () => {
    const result = trimToStored(FFMPEG_PLAYLIST, stored(['index5.ts', 'index6.ts']));
    expect(result).toMatchObject({ segments: 2, trimmed: true });
    expect(result.text).not.toContain('index7.ts');
    expect(result.text).not.toContain('#EXT-X-ENDLIST');
    expect(result.text).not.toContain('00:49:30.568');
    expect(parseMediaPlaylist(result.text)).toMatchObject({ segments: ['index5.ts', 'index6.ts'], mediaSequence: 5 });
  });

  it('keeps nothing when the first segment or the init segment is missing', () => {
    expect(trimToStored(FFMPEG_PLAYLIST, stored([]))).toMatchObject({ segments: 0, trimmed: true });
    expect(trimToStored('#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:1,\na.m4s\n', stored(['a.m4s']))).toMatchObject({ segments: 0, trimmed: true });
  });
});
