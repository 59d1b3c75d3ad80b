/** Stored entrance clips: the list with HLS playlists, uploads (multipart, with progress) and deletion. */
import { defineOperation } from './graphql.ts';
import { uploadWithProgress, type UploadProgress } from './upload.ts';

export type GateVideoState = 'UPLOADED' | 'PROCESSING' | 'READY' | 'FAILED';

export interface GateVideo {
  id: string;
  boxId: string;
  state: GateVideoState;
  /** Transcode progress in percent, 0–100. */
  progress: number;
  failureReason: string | null;
  startTime: string;
  endTime: string | null;
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  sizeBytes: number;
  /** Signed, short-lived URLs (re-signed on every read); null until READY. */
  posterURL: string | null;
  playlistURL: string | null;
  createdAt: string;
}

export const VIDEO_LIST_LIMIT = 50;

/** A page of a box's clips, newest first; `after` is the last clip of the page before. */
export const GateVideosQuery = defineOperation<{ gateVideos: GateVideo[] }, { boxId: string; from: string | null; to: string | null; limit: number; after: string | null }>(
  `query GateVideos($boxId: ID!, $from: DateTime, $to: DateTime, $limit: Int, $after: ID) {
    gateVideos(boxId: $boxId, from: $from, to: $to, limit: $limit, after: $after) {
      id boxId state progress failureReason startTime endTime durationSeconds width height sizeBytes posterURL playlistURL createdAt
    }
  }`,
);

export const UploadGateVideoMutation = defineOperation<{ uploadGateVideo: boolean | null }, { file: null; boxId: string; startTime: string | null }>(
  `mutation UploadGateVideo($file: Upload!, $boxId: ID!, $startTime: DateTime) {
    uploadGateVideo(file: $file, boxId: $boxId, startTime: $startTime)
  }`,
);

export const DeleteGateVideoMutation = defineOperation<{ deleteGateVideo: boolean }, { id: string }>(
  `mutation DeleteGateVideo($id: ID!) { deleteGateVideo(id: $id) }`,
);

/** Clips still being worked on: the list re-reads itself while there are any. */
export function isInProgress(video: Pick<GateVideo, 'state'>): boolean {
  return video.state === 'UPLOADED' || video.state === 'PROCESSING';
}

/** The progress bar's value: the server's percentage, rounded and kept within 0–100. */
export function progressPercent(progress: number | null | undefined): number | undefined {
  if (progress === null || progress === undefined || !Number.isFinite(progress)) return undefined;
  return Math.min(100, Math.max(0, Math.round(progress)));
}

export function uploadGateVideo(
  input: { file: File; boxId: string; startTime: Date | null },
  onProgress: (progress: UploadProgress) => void,
  signal?: AbortSignal,
): Promise<{ uploadGateVideo: boolean | null }> {
  return uploadWithProgress(UploadGateVideoMutation, { file: null, boxId: input.boxId, startTime: input.startTime?.toISOString() ?? null }, { 'variables.file': input.file }, onProgress, signal);
}
