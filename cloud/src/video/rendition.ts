/**
 * The files of a stored clip that players fetch: its HLS rendition (playlist and segments) and poster. Beside them in
 * `videos/{id}/` lie the original upload and the detections file, which a playback link must not open.
 */
export const PLAYLIST_FILE = 'index.m3u8';
export const POSTER_JPEG = 'poster.jpg';
/** ffmpeg's `-hls_segment_filename` pattern of the rendition's segments. */
export const SEGMENT_FILE_PATTERN = 'segment_%05d.ts';

const SEGMENT_FILE = /^segment_\d{5,}\.ts$/;

/** Whether `file` (the path under `videos/{id}/`) belongs to what a player of the clip needs. */
export function isPlaybackFile(file: string): boolean {
  return file === PLAYLIST_FILE || file === POSTER_JPEG || SEGMENT_FILE.test(file);
}
