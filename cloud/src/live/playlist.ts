/**
 * What the gateway needs to know about a publisher's HLS media playlist: is it one, which segment files does it
 * list (they must be plain names next to it, so the playlist resolves under the viewer's signed URL), and which
 * stored segments may go now that the window has moved on.
 */

/** Names a publisher may PUT: playlists, MPEG-TS or fMP4 segments and an fMP4 init segment. */
const PLAYLIST_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.m3u8$/;
const SEGMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.(ts|m4s)$/;
const INIT_NAME = /^init[A-Za-z0-9_-]{0,32}\.mp4$/;

export const MAX_PLAYLIST_BYTES = 64 * 1024;

export type PublishedFileKind = 'playlist' | 'segment';

/** The kind of a file a publisher PUTs, or undefined when the name is not one the relay serves. */
export function publishedFileKind(name: string): PublishedFileKind | undefined {
  if (PLAYLIST_NAME.test(name)) return 'playlist';
  if (SEGMENT_NAME.test(name) || INIT_NAME.test(name)) return 'segment';
  return undefined;
}

export interface MediaPlaylist {
  /** Segment file names in playlist order, plus an fMP4 init segment (`#EXT-X-MAP`) first when there is one. */
  segments: string[];
  /** `#EXT-X-PROGRAM-DATE-TIME` of each media segment when present (ms since epoch), in the same order as media segments. */
  programDateTimes: (number | undefined)[];
  /** Durations from `#EXTINF`, seconds. */
  durations: number[];
  targetDuration?: number;
  mediaSequence: number;
  ended: boolean;
}

export class PlaylistError extends Error {}

/** Parses a media playlist; throws PlaylistError saying what is wrong. Master playlists are refused (one rendition per session). */
export function parseMediaPlaylist(text: string): MediaPlaylist {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (lines[0] !== '#EXTM3U') throw new PlaylistError('playlist must start with #EXTM3U');
  const segments: string[] = [];
  const programDateTimes: (number | undefined)[] = [];
  const durations: number[] = [];
  let init: string | undefined;
  let targetDuration: number | undefined;
  let mediaSequence = 0;
  let ended = false;
  let pendingDuration: number | undefined;
  let pendingDate: number | undefined;
  for (const [index, line] of lines.entries()) {
    if (line === '' || index === 0) continue;
    if (line.startsWith('#')) {
      const [tag, value = ''] = splitTag(line);
      switch (tag) {
        case '#EXTINF': {
          const duration = Number(value.split(',')[0]);
          if (!Number.isFinite(duration) || duration < 0) throw new PlaylistError(`line ${index + 1}: #EXTINF duration is not a number`);
          pendingDuration = duration;
          break;
        }
        case '#EXT-X-PROGRAM-DATE-TIME': {
          const at = Date.parse(normaliseZone(value));
          if (Number.isNaN(at)) throw new PlaylistError(`line ${index + 1}: #EXT-X-PROGRAM-DATE-TIME is not a date`);
          pendingDate = at;
          break;
        }
        case '#EXT-X-TARGETDURATION':
          targetDuration = Number(value);
          break;
        case '#EXT-X-MEDIA-SEQUENCE':
          mediaSequence = Number(value) || 0;
          break;
        case '#EXT-X-ENDLIST':
          ended = true;
          break;
        case '#EXT-X-STREAM-INF':
          throw new PlaylistError('master playlists are not accepted: publish one media playlist');
        case '#EXT-X-MAP': {
          const uri = /URI="([^"]*)"/.exec(value)?.[1];
          if (!uri || !INIT_NAME.test(uri)) throw new PlaylistError(`line ${index + 1}: #EXT-X-MAP URI must be a plain init*.mp4 name next to the playlist`);
          init = uri;
          break;
        }
        default:
          break;
      }
      continue;
    }
    if (!SEGMENT_NAME.test(line)) throw new PlaylistError(`line ${index + 1}: segment "${line.slice(0, 80)}" must be a plain .ts or .m4s name next to the playlist`);
    if (pendingDuration === undefined) throw new PlaylistError(`line ${index + 1}: segment "${line}" has no #EXTINF`);
    segments.push(line);
    durations.push(pendingDuration);
    programDateTimes.push(pendingDate);
    pendingDuration = undefined;
    pendingDate = undefined;
  }
  return { segments: init ? [init, ...segments] : segments, programDateTimes, durations, targetDuration, mediaSequence, ended };
}

function splitTag(line: string): [string, string | undefined] {
  const colon = line.indexOf(':');
  return colon < 0 ? [line, undefined] : [line.slice(0, colon), line.slice(colon + 1)];
}

/** ffmpeg writes `+0000`; Date.parse wants `+00:00`. */
function normaliseZone(value: string): string {
  return value.trim().replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
}

/**
 * Stored segments to delete after a new playlist: those it no longer lists that came before the first one it does
 * list (in arrival order), except the newest `keepBehind` of them, for players a little behind the live edge.
 * Segments newer than the window (uploaded but not yet listed) always stay.
 */
export function segmentsToPrune(stored: readonly string[], listed: readonly string[], keepBehind = 1): string[] {
  const listedSet = new Set(listed);
  const isInit = (name: string) => name.endsWith('.mp4');
  const firstListed = stored.findIndex((name) => listedSet.has(name) && !isInit(name));
  if (firstListed < 0) return [];
  const behind = stored.slice(0, firstListed).filter((name) => !listedSet.has(name) && !isInit(name));
  return behind.slice(0, Math.max(0, behind.length - keepBehind));
}

/**
 * The playlist cut just before the first segment the store does not hold yet (publishers upload segments and
 * playlists over separate connections, so a playlist can overtake its newest segment). Players never see a
 * segment they would get a 404 for; the next playlist lists it. `segments` counts the media segments kept.
 */
export function trimToStored(text: string, isStored: (name: string) => boolean): { text: string; segments: number; trimmed: boolean } {
  const lines = text.split(/\r?\n/);
  let keptUntil = lines.length;
  let segments = 0;
  let blockStart = -1;
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-MAP')) {
      const uri = /URI="([^"]*)"/.exec(line)?.[1];
      if (uri && !isStored(uri)) return { text: '', segments: 0, trimmed: true };
    }
    if (line === '' || line.startsWith('#')) {
      if (line.startsWith('#EXTINF') && blockStart < 0) blockStart = index;
      continue;
    }
    if (!isStored(line)) {
      keptUntil = blockStart < 0 ? index : blockStart;
      break;
    }
    segments += 1;
    blockStart = -1;
  }
  if (keptUntil === lines.length) return { text, segments, trimmed: false };
  // The stream goes on after the cut, so no end marker.
  const kept = lines.slice(0, keptUntil).filter((l) => l.trim() !== '#EXT-X-ENDLIST');
  return { text: `${kept.join('\n')}\n`, segments, trimmed: true };
}
