/** What ffprobe says about an upload, judged: a playable video, or the reason it is not one. Pure. */
export interface VideoInfo {
  formatName: string;
  durationSeconds: number;
  width: number;
  height: number;
  videoCodec: string;
  hasAudio: boolean;
}

export type ProbeVerdict = { ok: true; info: VideoInfo } | { ok: false; reason: string };

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  duration?: string;
  disposition?: { attached_pic?: number };
}

export interface ProbeOutput {
  format?: { format_name?: string; duration?: string };
  streams?: ProbeStream[];
}

// Demuxers that read still images or text: ffprobe "finds a video stream" in a PNG or a text file too.
const NOT_VIDEO_FORMATS = /^(image2|tty|.*_pipe|apng|gif|lavfi)$/;

export function assessProbe(output: ProbeOutput | null): ProbeVerdict {
  const formatName = output?.format?.format_name;
  // Said in a beekeeper's words, not the prober's ("ffprobe cannot read it", "it is tty data" before).
  if (!output || !formatName) return { ok: false, reason: 'file is not a video: no video format was recognised in it' };
  if (formatName === 'tty') return { ok: false, reason: 'file is not a video: it is text' };
  if (formatName.split(',').some((name) => NOT_VIDEO_FORMATS.test(name))) {
    return { ok: false, reason: `file is not a video: it is a still image (${formatName.replace(/_pipe$/, '')})` };
  }
  const video = (output.streams ?? []).find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  if (!video) return { ok: false, reason: 'file is not a video: it has no video stream' };
  if (!(Number(video.width) > 0) || !(Number(video.height) > 0)) return { ok: false, reason: 'file is not a video: its video stream has no picture size' };
  const duration = Number(output.format?.duration ?? video.duration);
  if (!(duration > 0) || !Number.isFinite(duration)) return { ok: false, reason: 'file is not a video: it has no duration' };
  return {
    ok: true,
    info: {
      formatName,
      durationSeconds: duration,
      width: Number(video.width),
      height: Number(video.height),
      videoCodec: video.codec_name ?? 'unknown',
      hasAudio: (output.streams ?? []).some((s) => s.codec_type === 'audio'),
    },
  };
}
