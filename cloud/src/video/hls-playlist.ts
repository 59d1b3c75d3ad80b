/**
 * HLS VOD media playlists (RFC 8216), written from the segments' real durations. TARGETDURATION must be at least
 * every EXTINF rounded to the nearest integer; taking the ceiling of the longest one (as written, to the
 * microsecond) always satisfies it, where a configured segment length does not (segments cut at keyframes run
 * longer than `-hls_time`). Pure.
 */
export interface HlsSegment {
  uri: string;
  durationSeconds: number;
}

/** Durations as written in EXTINF: microseconds, so the target computed from them matches what players read. */
export function roundDuration(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}

export function targetDuration(durations: readonly number[]): number {
  let longest = 0;
  for (const d of durations) longest = Math.max(longest, roundDuration(d));
  return Math.max(1, Math.ceil(longest));
}

export function buildVodPlaylist(segments: readonly HlsSegment[]): string {
  if (segments.length === 0) throw new RangeError('a playlist needs at least one segment');
  segments.forEach((segment, i) => {
    if (!(segment.durationSeconds > 0) || !Number.isFinite(segment.durationSeconds)) {
      throw new RangeError(`segments[${i}].durationSeconds must be a positive number, got ${String(segment.durationSeconds)}`);
    }
    if (!/^[^\s#][^\r\n]*$/.test(segment.uri)) throw new RangeError(`segments[${i}].uri ${JSON.stringify(segment.uri)} is not a valid URI line`);
  });
  const lines = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${targetDuration(segments.map((s) => s.durationSeconds))}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    '#EXT-X-INDEPENDENT-SEGMENTS',
  ];
  for (const segment of segments) lines.push(`#EXTINF:${roundDuration(segment.durationSeconds).toFixed(6)},`, segment.uri);
  lines.push('#EXT-X-ENDLIST', '');
  return lines.join('\n');
}

export interface MediaPlaylist {
  version?: number;
  targetDuration?: number;
  mediaSequence: number;
  playlistType?: string;
  endList: boolean;
  segments: HlsSegment[];
}

/** Reads a media playlist (ffmpeg's, or one of ours in tests); throws on lines it cannot make sense of. */
export function parseMediaPlaylist(text: string): MediaPlaylist {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (lines[0] !== '#EXTM3U') throw new SyntaxError('playlist must start with #EXTM3U');
  const playlist: MediaPlaylist = { mediaSequence: 0, endList: false, segments: [] };
  let pending: number | undefined;
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line === '') continue;
    const [tag, value = ''] = splitTag(line);
    switch (tag) {
      case '#EXT-X-VERSION':
        playlist.version = integer(value, i);
        break;
      case '#EXT-X-TARGETDURATION':
        playlist.targetDuration = integer(value, i);
        break;
      case '#EXT-X-MEDIA-SEQUENCE':
        playlist.mediaSequence = integer(value, i);
        break;
      case '#EXT-X-PLAYLIST-TYPE':
        playlist.playlistType = value;
        break;
      case '#EXT-X-ENDLIST':
        playlist.endList = true;
        break;
      case '#EXTINF': {
        const duration = Number(value.split(',')[0]);
        if (!Number.isFinite(duration) || duration < 0) throw new SyntaxError(`line ${i + 1}: EXTINF duration "${value}" is not a number`);
        pending = duration;
        break;
      }
      default:
        if (line.startsWith('#')) break; // other tags and comments
        if (pending === undefined) throw new SyntaxError(`line ${i + 1}: segment "${line}" has no #EXTINF before it`);
        playlist.segments.push({ uri: line, durationSeconds: pending });
        pending = undefined;
    }
  }
  return playlist;
}

function splitTag(line: string): [string, string?] {
  const colon = line.indexOf(':');
  return colon < 0 ? [line] : [line.slice(0, colon), line.slice(colon + 1)];
}

function integer(value: string, index: number): number {
  if (!/^\d+$/.test(value)) throw new SyntaxError(`line ${index + 1}: "${value}" is not an integer`);
  return Number(value);
}

/** Timing of one segment's video, from its packets: the earliest presentation time and where its last frame ends. */
export interface SegmentTiming {
  startSeconds: number;
  endSeconds: number;
}

/**
 * Real durations of consecutive segments: each lasts until the next one starts, the last one until its last frame
 * ends. So the durations add up exactly to the video's length, whatever the keyframe placement.
 */
export function segmentDurations(timings: readonly SegmentTiming[]): number[] {
  return timings.map((timing, i) => {
    const next = timings[i + 1];
    const end = next ? next.startSeconds : timing.endSeconds;
    const duration = end - timing.startSeconds;
    if (!(duration > 0)) throw new RangeError(`segment ${i} has no positive duration (start ${timing.startSeconds}, end ${end})`);
    return duration;
  });
}

/**
 * Timings of consecutive segment files from one ffprobe pass over their concatenation (`concat:a.ts|b.ts|…`,
 * `-show_entries packet=pts_time,duration_time,pos -of csv=p=0`): a packet belongs to the file its byte position
 * falls in, given the files' sizes in order. Null for a file without video packets.
 */
export function timingsFromConcatenatedPackets(csv: string, fileSizes: readonly number[]): (SegmentTiming | null)[] {
  const starts: number[] = [];
  let offset = 0;
  for (const size of fileSizes) {
    starts.push(offset);
    offset += size;
  }
  const timings: { start: number; end: number }[] = fileSizes.map(() => ({ start: Number.POSITIVE_INFINITY, end: Number.NEGATIVE_INFINITY }));
  for (const line of csv.split('\n')) {
    const [ptsText, durationText, posText] = line.trim().split(',');
    const pts = Number(ptsText);
    const pos = Number(posText);
    if (!ptsText || !posText || !Number.isFinite(pts) || !Number.isFinite(pos)) continue;
    // The last file whose start is at or before the packet's position.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    const timing = timings[lo]!;
    const duration = Number(durationText);
    timing.start = Math.min(timing.start, pts);
    timing.end = Math.max(timing.end, pts + (Number.isFinite(duration) ? duration : 0));
  }
  return timings.map((t) => (Number.isFinite(t.start) && t.end > t.start ? { startSeconds: t.start, endSeconds: t.end } : null));
}
