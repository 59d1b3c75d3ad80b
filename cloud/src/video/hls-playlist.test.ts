import { describe, expect, it } from 'vitest';
import { buildVodPlaylist, parseMediaPlaylist, segmentDurations, targetDuration, timingsFromConcatenatedPackets } from './hls-playlist.ts';

describe('buildVodPlaylist', () => {
  it('writes a VOD playlist with real EXTINF durations and TARGETDURATION = ceil of the longest', () => {
    const text = buildVodPlaylist([
      { uri: 'segment_00000.ts', durationSeconds: 2 },
      { uri: 'segment_00001.ts', durationSeconds: 2.08 },
      { uri: 'segment_00002.ts', durationSeconds: 0.52 },
    ]);
    expect(text).toBe(
      [
        '#EXTM3U',
        '#EXT-X-VERSION:3',
        '#EXT-X-TARGETDURATION:3',
        '#EXT-X-MEDIA-SEQUENCE:0',
        '#EXT-X-PLAYLIST-TYPE:VOD',
        '#EXT-X-INDEPENDENT-SEGMENTS',
        '#EXTINF:2.000000,',
        'segment_00000.ts',
        '#EXTINF:2.080000,',
        'segment_00001.ts',
        '#EXTINF:0.520000,',
        'segment_00002.ts',
        '#EXT-X-ENDLIST',
        '',
      ].join('\n'),
    );
  });

  it('does not let float noise push the target up (2.0000000001 is written and counted as 2)', () => {
    expect(targetDuration([2.0000000001, 1.9999999])).toBe(2);
    expect(targetDuration([2.0000011])).toBe(3);
    expect(targetDuration([0.2])).toBe(1);
  });

  it('round-trips through the parser', () => {
    const segments = [
      { uri: 'a.ts', durationSeconds: 3.96 },
      { uri: 'b.ts', durationSeconds: 1.5 },
    ];
    const parsed = parseMediaPlaylist(buildVodPlaylist(segments));
    expect(parsed).toEqual({ version: 3, targetDuration: 4, mediaSequence: 0, playlistType: 'VOD', endList: true, segments });
  });

  it.each([
    [[], 'at least one segment'],
    [[{ uri: 'a.ts', durationSeconds: 0 }], 'segments[0].durationSeconds'],
    [[{ uri: 'a.ts', durationSeconds: Number.NaN }], 'segments[0].durationSeconds'],
    [[{ uri: '#a.ts', durationSeconds: 1 }], 'segments[0].uri'],
    [[{ uri: 'a\nb.ts', durationSeconds: 1 }], 'segments[0].uri'],
  ])('refuses %j', (segments, error) => {
    expect(() => buildVodPlaylist(segments)).toThrow(error);
  });
});

describe('parseMediaPlaylist', () => {
  it("reads ffmpeg's own output", () => {
    const text = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2.000000,\nsegment_00000.ts\n#EXTINF:1.000000,\nsegment_00001.ts\n#EXT-X-ENDLIST\n';
    expect(parseMediaPlaylist(text).segments).toEqual([
      { uri: 'segment_00000.ts', durationSeconds: 2 },
      { uri: 'segment_00001.ts', durationSeconds: 1 },
    ]);
  });

  it.each([
    ['not a playlist', '#EXTM3U'],
    ['#EXTM3U\nsegment.ts\n', 'no #EXTINF'],
    ['#EXTM3U\n#EXTINF:abc,\nsegment.ts\n', 'not a number'],
    ['#EXTM3U\n#EXT-X-TARGETDURATION:2.5\n', 'not an integer'],
  ])('refuses %j', (text, error) => {
    expect(() => parseMediaPlaylist(text)).toThrow(error);
  });
});

describe('segment durations', () => {
  it('run from each start to the next, the last to its last frame, so they add up to the whole video', () => {
    const durations = segmentDurations([
      { startSeconds: 1.4, endSeconds: 3.4 },
      { startSeconds: 3.4, endSeconds: 5.48 },
      { startSeconds: 5.48, endSeconds: 7.4 },
    ]);
    expect(durations.map((d) => Number(d.toFixed(6)))).toEqual([2, 2.08, 1.92]);
    expect(durations.reduce((a, b) => a + b, 0)).toBeCloseTo(6, 9);
  });

  it('refuses segments out of order', () => {
    expect(() => segmentDurations([{ startSeconds: 3, endSeconds: 4 }, { startSeconds: 2, endSeconds: 5 }])).toThrow('segment 0');
  });
});

describe('timingsFromConcatenatedPackets', () => {
  it('assigns packets to files by byte position and times each file', () => {
    // Three files of 1000, 500 and 800 bytes; packets in decode order (pts not monotonic inside a file).
    const csv = ['1.480,0.040,0', '1.400,0.040,376', '1.440,0.040,752', '3.400,0.040,1000', '3.440,0.040,1400', '3.480,0.040,1500', '5.360,0.040,2299', ''].join('\n');
    expect(timingsFromConcatenatedPackets(csv, [1000, 500, 800])).toEqual([
      { startSeconds: 1.4, endSeconds: 1.52 },
      { startSeconds: 3.4, endSeconds: 3.48 },
      { startSeconds: 3.48, endSeconds: 5.4 },
    ]);
  });

  it('reports a file without video packets as null and skips N/A lines', () => {
    expect(timingsFromConcatenatedPackets('N/A,N/A,N/A\n1.0,0.04,50\n', [10, 100])).toEqual([null, { startSeconds: 1, endSeconds: 1.04 }]);
  });
});
