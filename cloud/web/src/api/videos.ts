/** Stored entrance clips: the list with HLS playlists, and uploads (multipart, with progress). */
import { defineOperation } from './graphql.ts';
import { uploadWithProgress, type UploadProgress } from './upload.ts';

export type GateVideoState = 'UPLOADED' | 'PROCESSING' | 'READY' | 'FAILED';

export interface GateVideo {
  id: string;
  boxId: string;
  state: GateVideoState | string;
  /** Processing progress, 0–1 or 0–100 depending on the server; see progressPercent. */
  progress: number | null;
  failureReason: string | null;
  startTime: string | null;
  endTime: string | null;
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  sizeBytes: number | null;
  posterURL: string | null;
  playlistURL: string | null;
  createdAt: string;
}

export const VIDEO_LIST_LIMIT = 50;

export const GateVideosQuery = defineOperation<{ gateVideos: GateVideo[] }, { boxId: string; from: string | null; to: string | null; limit: number }>(
  `query GateVideos($boxId: ID!, $from: DateTime, $to: DateTime, $limit: Int) {
    gateVideos(boxId: $boxId, from: $from, to: $to, limit: $limit) {
      id boxId state progress failureReason startTime endTime durationSeconds width height sizeBytes posterURL playlistURL createdAt
    }
  }`,
);

export const UploadGateVideoMutation = defineOperation<{ uploadGateVideo: boolean | null }, { file: null; boxId: string; startTime: string | null }>(
  `mutation UploadGateVideo($file: Upload!, $boxId: ID!, $startTime: DateTime) {
    uploadGateVideo(file: $file, boxId: $boxId, startTime: $startTime)
  }`,
);

/** Clips still being worked on: the list re-reads itself while there are any. */
export function isInProgress(video: Pick<GateVideo, 'state'>): boolean {
  return video.state === 'UPLOADED' || video.state === 'PROCESSING';
}

export function progressPercent(progress: number | null): number | undefined {
  if (progress === null || !Number.isFinite(progress) || progress < 0) return undefined;
  return Math.min(100, Math.round(progress <= 1 ? progress * 100 : progress));
}

export function uploadGateVideo(
  input: { file: File; boxId: string; startTime: Date | null },
  onProgress: (progress: UploadProgress) => void,
  signal?: AbortSignal,
): Promise<{ uploadGateVideo: boolean | null }> {
  return uploadWithProgress(UploadGateVideoMutation, { file: null, boxId: input.boxId, startTime: input.startTime?.toISOString() ?? null }, { 'variables.file': input.file }, onProgress, signal);
}
