import { EARLIEST_DEVICE_TIME_MS } from '@hivegate/shared';

/** What ffprobe says about an upload, judged: a playable video, or the reason it is not one. Pure. */
export interface VideoInfo {
  formatName: string;
  durationSeconds: number;
  width: number;
  height: number;
  videoCodec: string;
  hasAudio: boolean;
  /** When the camera says it began recording (the file's `creation_time`), if it says so believably. */
  recordedAt?: Date;
}

export type ProbeVerdict = { ok: true; info: VideoInfo } | { ok: false; reason: string };

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  /** "30/1": the rate the stream's headers give (ffmpeg assumes 25 where they give none). */
  r_frame_rate?: string;
  /** Packets in the stream, when probed with `-count_packets`. */
  nb_read_packets?: string;
  disposition?: { attached_pic?: number };
  tags?: { rotate?: string; creation_time?: string };
  side_data_list?: { rotation?: number }[];
}

export interface ProbeOutput {
  format?: { format_name?: string; duration?: string; tags?: { creation_time?: string } };
  streams?: ProbeStream[];
}

// Demuxers that read still images or text: ffprobe "finds a video stream" in a PNG or a text file too.
const NOT_VIDEO_FORMATS = /^(image2|tty|.*_pipe|apng|gif|lavfi)$/;
// Motion JPEG as cameras write it: JPEGs back to back, or a multipart stream. One picture is a still image.
const MOTION_JPEG_FORMATS = /^(jpeg_pipe|mpjpeg)$/;

/**
 * Whether the upload must be probed again with its packets counted: a raw stream (a Pi camera's `.h264`, Motion
 * JPEG) has no duration in any header, only frames at a rate; and one JPEG is told from many by their count.
 */
export function needsPacketCount(output: ProbeOutput | null): boolean {
  const formatName = output?.format?.format_name ?? '';
  if (MOTION_JPEG_FORMATS.test(formatName)) return true;
  const video = output?.streams?.find((s) => s.codec_type === 'video');
  return video !== undefined && !(Number(output?.format?.duration ?? video.duration) > 0);
}

function framesPerSecond(rate: string | undefined): number {
  const [num, den] = (rate ?? '').split('/').map(Number);
  return num !== undefined && den !== undefined && num > 0 && den > 0 ? num / den : 0;
}

export function assessProbe(output: ProbeOutput | null): ProbeVerdict {
  const formatName = output?.format?.format_name;
  // Said in a beekeeper's words, not the prober's ("ffprobe cannot read it", "it is tty data" before).
  if (!output || !formatName) return { ok: false, reason: 'file is not a video: no video format was recognised in it' };
  if (formatName === 'tty') return { ok: false, reason: 'file is not a video: it is text' };
  const video = (output.streams ?? []).find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  const packets = Number(video?.nb_read_packets ?? 0);
  const motionJpeg = MOTION_JPEG_FORMATS.test(formatName) && packets > 1;
  if (!motionJpeg && formatName.split(',').some((name) => NOT_VIDEO_FORMATS.test(name))) {
    return { ok: false, reason: `file is not a video: it is a still image (${formatName.replace(/_pipe$/, '')})` };
  }
  if (!video) return { ok: false, reason: 'file is not a video: it has no video stream' };
  if (!(Number(video.width) > 0) || !(Number(video.height) > 0)) return { ok: false, reason: 'file is not a video: its video stream has no picture size' };
  // A raw stream's length is its frames at its rate, which is also how ffmpeg times it when transcoding.
  const rate = framesPerSecond(video.r_frame_rate);
  const duration = Number(output.format?.duration ?? video.duration ?? (packets > 0 && rate > 0 ? packets / rate : undefined));
  if (!(duration > 0) || !Number.isFinite(duration)) return { ok: false, reason: 'file is not a video: it has no duration' };
  // A phone held upright stores a landscape picture and a rotation, which players (and the transcode) apply.
  const upright = Math.abs(rotationOf(video)) % 180 === 90;
  const recordedAt = recordingStart(output.format?.tags?.creation_time ?? video.tags?.creation_time);
  return {
    ok: true,
    info: {
      formatName,
      // Rounded to the millisecond: "11.999999999999998" came from the frames' rate.
      durationSeconds: Math.round(duration * 1000) / 1000,
      width: Number(upright ? video.height : video.width),
      height: Number(upright ? video.width : video.height),
      videoCodec: video.codec_name ?? 'unknown',
      hasAudio: (output.streams ?? []).some((s) => s.codec_type === 'audio'),
      ...(recordedAt ? { recordedAt } : {}),
    },
  };
}

function rotationOf(stream: ProbeStream): number {
  const fromMatrix = stream.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation;
  return Math.round(fromMatrix ?? Number(stream.tags?.rotate ?? 0)) || 0;
}

/** A file's `creation_time`, unless it is missing, unreadable, or a writer's zero date (1904, 1970). */
function recordingStart(text: string | undefined): Date | undefined {
  const time = text ? Date.parse(text) : Number.NaN;
  return Number.isFinite(time) && time >= EARLIEST_DEVICE_TIME_MS ? new Date(time) : undefined;
}
