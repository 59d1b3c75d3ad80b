import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { VideoConfig } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { JobHandler, JobQueue, RunningJob } from '../jobs/job-queue.ts';
import { PermanentJobError } from '../jobs/job-queue.ts';
import type { LiveClip } from '../live/clip.ts';
import type { BlobStore } from '../storage/index.ts';
import { UPLOAD_INPUT_OPTIONS, type MediaTools } from './ffmpeg.ts';
import { buildVodPlaylist, parseMediaPlaylist, segmentDurations, timingsFromConcatenatedPackets, type SegmentTiming } from './hls-playlist.ts';
import { assessProbe, needsPacketCount } from './probe.ts';
import { FfmpegProgress, progressPercent, Throttle } from './progress.ts';
import { receiveToFile, type FileUpload } from './receive-upload.ts';
import { isVideoId, type GateVideo, type GateVideosRepository } from './videos-repository.ts';
import { PLAYLIST_FILE, POSTER_JPEG, SEGMENT_FILE_PATTERN } from './rendition.ts';

export const TRANSCODE_JOB = 'video.transcode';
/** The poster again as PNG: the heatmap renderer draws over it and can only decode PNG. */
export const POSTER_PNG = 'poster.png';

const SEGMENT_SECONDS = 2;
const POSTER_PNG_MAX_WIDTH = 640;
const DETECTIONS_PARSE_LIMIT = 16 * 1024 * 1024;
/** An upload's files are stored before its row is inserted; a folder this old without a row is left over. */
const ORPHAN_GRACE_MS = 6 * 3600_000;
const ORPHAN_CHECK_CHUNK = 500;
/** Segments measured per ffprobe run: 500 names of ~17 bytes stay far below the 128 KB limit of one argument. */
const PROBE_CHUNK = 500;

/** A client mistake in an upload, reported as a GraphQL error with the message as is. */
export class VideoRejectedError extends Error {
  override readonly name = 'VideoRejectedError';
}

export interface UploadRequest {
  ownerId: number;
  boxId: string;
  startTime?: Date;
  file: Promise<FileUpload> | FileUpload;
  detectionsFile?: Promise<FileUpload> | FileUpload | null;
}

interface TranscodePayload {
  videoId: string;
}

/**
 * Stored entrance video: takes uploads (streamed to a temporary file, probed, then stored as the original), and
 * turns each into HLS (H.264/AAC, 2 s segments, playlist written from the segments' real durations) plus a poster,
 * all under `videos/{id}/` in the blob store, through the durable job queue.
 */
export class VideoService {
  /** Called when a video becomes READY (the heatmap renderer uses its poster as the entrance still). */
  onReady?: (video: GateVideo) => Promise<void>;
  /** Called when a READY video is deleted (its poster may have been that still). */
  onRemoved?: (video: GateVideo) => Promise<void>;

  constructor(
    private readonly deps: {
      db: Database;
      videos: GateVideosRepository;
      blobs: BlobStore;
      jobs: JobQueue;
      tools: MediaTools;
      config: VideoConfig;
      tempRoot: string;
      log: FastifyBaseLogger;
    },
  ) {}

  /** Registers the transcode job kind on the queue. */
  defineJobs(): void {
    this.deps.jobs.define<TranscodePayload>(TRANSCODE_JOB, this.transcodeHandler());
  }

  private async tempDir(prefix: string): Promise<string> {
    await mkdir(this.deps.tempRoot, { recursive: true });
    return mkdtemp(path.join(this.deps.tempRoot, prefix));
  }

  /**
   * Receives the files, refuses anything that is not a video, stores the original (and the detections file) and
   * queues the transcode. On any failure nothing is left: no row, no blob, no temporary file.
   */
  async upload(request: UploadRequest): Promise<GateVideo> {
    const { config, blobs, videos, jobs, tools } = this.deps;
    const dir = await this.tempDir('upload-');
    try {
      const originalFile = path.join(dir, 'original');
      const detectionsPath = path.join(dir, 'detections.json');
      // Both files are read at once: the multipart body may carry them in either order, and the parser only
      // reaches the second once the first has been read.
      const [original, detections] = await Promise.allSettled([
        receiveToFile(request.file, originalFile, 'file', config.maxBytes),
        request.detectionsFile ? receiveToFile(request.detectionsFile, detectionsPath, 'detectionsFile', config.maxBytes) : Promise.resolve(null),
      ]);
      if (original.status === 'rejected') throw original.reason;
      if (detections.status === 'rejected') throw detections.reason;
      if (original.value.size === 0) throw new VideoRejectedError('file is empty');
      if (detections.value) await checkDetections(detectionsPath, detections.value.size);

      let probed = await tools.probe(originalFile);
      if (needsPacketCount(probed)) probed = await tools.probe(originalFile, { countPackets: true });
      const verdict = assessProbe(probed);
      if (!verdict.ok) throw new VideoRejectedError(verdict.reason);
      const info = verdict.info;

      // The same bytes again for the same box: a camera retrying an upload whose answer it never got. Its clip stands.
      const contentSha256 = original.value.sha256;
      const stored = await videos.findSameContent(request.ownerId, request.boxId, contentSha256);
      if (stored) return this.sameAgain(stored);

      // Files first, under a reserved id; then the row and its transcode job together: a crash in between leaves
      // at most unreferenced files, never a video that waits for a job that does not exist.
      const id = await videos.reserveId();
      const originalKey = `videos/${id}/original.${extensionOf(original.value.filename, info.formatName)}`;
      const detectionsKey = detections.value ? `videos/${id}/detections.json` : null;
      let video: GateVideo | { sameAs: GateVideo };
      try {
        await blobs.put(originalKey, createReadStream(originalFile));
        if (detectionsKey) await blobs.put(detectionsKey, createReadStream(detectionsPath), { contentType: 'application/json' });
        video = await this.deps.db.transaction(async (tx) => {
          // Checked again under a lock on these bytes: two identical uploads at once make one clip.
          const sameAs = await videos.findSameContent(request.ownerId, request.boxId, contentSha256, tx);
          if (sameAs) return { sameAs };
          const created = await videos.create(
            id,
            {
              ownerId: request.ownerId,
              boxId: request.boxId,
              // The camera's own record of when it began, before the time of the upload (which may come hours later).
              startTime: request.startTime ?? info.recordedAt ?? new Date(),
              durationSeconds: info.durationSeconds,
              width: info.width,
              height: info.height,
              hasAudio: info.hasAudio,
              sizeBytes: original.value.size,
              originalKey,
              detectionsKey,
              contentSha256,
            },
            tx,
          );
          await jobs.enqueue(TRANSCODE_JOB, { videoId: id } satisfies TranscodePayload, { tx });
          return created;
        });
      } catch (err) {
        await blobs.deletePrefix(`videos/${id}/`).catch(() => undefined);
        throw err;
      }
      if ('sameAs' in video) {
        await blobs.deletePrefix(`videos/${id}/`).catch(() => undefined);
        return this.sameAgain(video.sameAs);
      }
      this.deps.log.info({ videoId: video.id, boxId: video.boxId, bytes: video.sizeBytes, seconds: info.durationSeconds }, 'video uploaded');
      return video;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private sameAgain(stored: GateVideo): GateVideo {
    this.deps.log.info({ videoId: stored.id, boxId: stored.boxId }, 'video uploaded again (the same bytes); the stored clip stands');
    return stored;
  }

  /**
   * Deletes an owner's video: the row first (from then on nobody can find it, and a transcode still running
   * notices at its end and removes what it wrote), then every file under `videos/{id}/`. False when the owner
   * has no such video.
   */
  async delete(ownerId: number, id: string): Promise<boolean> {
    const { videos, blobs, log } = this.deps;
    const video = await videos.delete(ownerId, id);
    if (!video) return false;
    const files = await blobs.deletePrefix(`videos/${video.id}/`);
    log.info({ videoId: video.id, boxId: video.boxId, files }, 'video deleted');
    if (video.state === 'READY' && this.onRemoved) {
      await this.onRemoved(video).catch((err: unknown) => log.warn({ err, videoId: video.id }, 'after-delete hook failed'));
    }
    return true;
  }

  /**
   * Removes the files of videos that have no row: left by a crash between storing an upload's files and inserting
   * its row (or by a delete that could not finish). Only folders whose newest file is older than `graceMs` are
   * touched, so an upload still being stored is never mistaken for one. Safe on several instances at once.
   */
  async sweepOrphanedFiles(graceMs = ORPHAN_GRACE_MS): Promise<{ videos: number; files: number }> {
    const { videos, blobs, log } = this.deps;
    const newest = new Map<string, number>();
    for await (const entry of blobs.list('videos/')) {
      const id = entry.key.split('/')[1];
      if (!id || !isVideoId(id)) continue;
      newest.set(id, Math.max(newest.get(id) ?? 0, entry.modifiedAt.getTime()));
    }
    const cutoff = Date.now() - graceMs;
    const old = [...newest].filter(([, modified]) => modified < cutoff).map(([id]) => id);
    let removedVideos = 0;
    let removedFiles = 0;
    for (let first = 0; first < old.length; first += ORPHAN_CHECK_CHUNK) {
      const ids = old.slice(first, first + ORPHAN_CHECK_CHUNK);
      const known = await videos.existingIds(ids);
      for (const id of ids) {
        if (known.has(id)) continue;
        removedFiles += await blobs.deletePrefix(`videos/${id}/`);
        removedVideos++;
      }
    }
    if (removedVideos > 0) log.warn({ videos: removedVideos, files: removedFiles }, 'removed the files of videos that have no row');
    return { videos: removedVideos, files: removedFiles };
  }

  /** A live session recorded as a clip, stored like an upload; its id becomes the session's handoffStreamId. */
  async acceptLiveClip(clip: LiveClip): Promise<{ streamId: string }> {
    const stream = await clip.open();
    try {
      const video = await this.upload({
        ownerId: clip.ownerId,
        boxId: clip.boxId,
        startTime: clip.startedAt,
        file: { filename: `live-${clip.sessionId}.mp4`, mimetype: 'video/mp4', encoding: '7bit', createReadStream: () => stream },
      });
      return { streamId: video.id };
    } finally {
      stream.destroy();
    }
  }

  private transcodeHandler(): JobHandler<TranscodePayload> {
    return {
      maxAttempts: 3,
      backoff: { baseSeconds: 10, maxSeconds: 300 },
      run: (job) => this.transcode(job),
      onFailed: async (job, reason) => {
        await this.deps.videos.markFailed(job.payload.videoId, reason);
      },
    };
  }

  private async transcode(job: RunningJob<TranscodePayload>): Promise<void> {
    const { videos, blobs, tools, log } = this.deps;
    const video = await videos.getAnyOwner(job.payload.videoId);
    if (!video || video.state === 'READY') return; // deleted meanwhile, or a repeat of finished work
    await videos.markProcessing(video.id);
    const dir = await this.tempDir('transcode-');
    try {
      const input = path.join(dir, `input.${video.originalKey.split('.').pop()}`);
      const original = await blobs.get(video.originalKey);
      if (!original) throw new PermanentJobError('the uploaded original is missing from storage');
      await pipeline(original.body, createWriteStream(input), { signal: job.signal });

      const out = path.join(dir, 'hls');
      await mkdir(out);
      const progress = new FfmpegProgress();
      const throttle = new Throttle(1000, 5);
      let pendingWrite = Promise.resolve();
      await tools.runFfmpeg(
        ['-progress', 'pipe:1', '-nostats', ...hlsTranscodeArgs(input, out)],
        {
          signal: job.signal,
          onStdout: (chunk) => {
            const seconds = progress.push(chunk);
            if (seconds === null) return;
            const percent = progressPercent(seconds, video.durationSeconds);
            if (!throttle.shouldEmit(percent, Date.now())) return;
            pendingWrite = pendingWrite.then(() => videos.setProgress(video.id, percent)).catch((err: unknown) => log.warn({ err }, 'progress update failed'));
          },
        },
      );
      await pendingWrite;

      // ffmpeg's playlist gives the segment files in order; their durations are measured from the segments.
      const listed = parseMediaPlaylist(await readFile(path.join(out, 'ffmpeg.m3u8'), 'utf8')).segments;
      if (listed.length === 0) throw new Error('ffmpeg produced no segments');
      // One ffprobe per chunk of segments (concatenated), which keeps the command line short for long videos.
      const timings: SegmentTiming[] = [];
      for (let first = 0; first < listed.length; first += PROBE_CHUNK) {
        const names = listed.slice(first, first + PROBE_CHUNK).map((s) => s.uri);
        const sizes = await Promise.all(names.map(async (name) => (await stat(path.join(out, name))).size));
        const chunk = timingsFromConcatenatedPackets(await tools.concatenatedVideoPackets(out, names, job.signal), sizes);
        chunk.forEach((timing, i) => {
          if (!timing) throw new Error(`segment ${names[i]} holds no video frames`);
          timings.push(timing);
        });
      }
      const durations = segmentDurations(timings);
      const playlist = buildVodPlaylist(listed.map((segment, i) => ({ uri: segment.uri, durationSeconds: durations[i]! })));

      // Sought on the output side (decoding at most a second): a raw stream (.h264, Motion JPEG) has no index to
      // seek its input by, and its poster came out as no file at all.
      const posterAt = Math.min(1, (video.durationSeconds ?? 0) / 3).toFixed(3);
      await tools.runFfmpeg(
        [
          ...UPLOAD_INPUT_OPTIONS, '-i', input,
          '-map', '0:v:0', '-ss', posterAt, '-frames:v', '1', '-q:v', '3', path.join(out, POSTER_JPEG),
          '-map', '0:v:0', '-ss', posterAt, '-frames:v', '1', '-vf', `scale='min(${POSTER_PNG_MAX_WIDTH},iw)':-2`, path.join(out, POSTER_PNG),
        ],
        { signal: job.signal },
      );

      // Playlist last: a reader who finds it finds every segment it names.
      for (const segment of listed) await blobs.put(`videos/${video.id}/${segment.uri}`, createReadStream(path.join(out, segment.uri)));
      await blobs.put(`videos/${video.id}/${POSTER_JPEG}`, createReadStream(path.join(out, POSTER_JPEG)));
      await blobs.put(`videos/${video.id}/${POSTER_PNG}`, createReadStream(path.join(out, POSTER_PNG)));
      await blobs.put(`videos/${video.id}/${PLAYLIST_FILE}`, Buffer.from(playlist));
      // The working copy goes before the clip is READY, so a READY clip never has one left on disk.
      await rm(dir, { recursive: true, force: true });
      // Whole milliseconds, as at upload: a sum of segment lengths came out as 2.9999999999999996.
      const total = Math.round(durations.reduce((a, b) => a + b, 0) * 1000) / 1000;
      if (!(await videos.markReady(video.id, { segmentCount: listed.length, durationSeconds: total }))) {
        // Deleted while transcoding: the delete removed the files it found, these came after it.
        await blobs.deletePrefix(`videos/${video.id}/`);
        log.info({ videoId: video.id }, 'video deleted during its transcode; its output removed');
        return;
      }
      log.info({ videoId: video.id, segments: listed.length, seconds: total, attempt: job.attempt }, 'video transcoded');
      const ready = await videos.getAnyOwner(video.id);
      if (ready && this.onReady) await this.onReady(ready).catch((err: unknown) => log.warn({ err, videoId: video.id }, 'after-ready hook failed'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/**
 * ffmpeg arguments of the HLS rendition: H.264 (veryfast, yuv420p, even picture size), AAC stereo when there is
 * audio, a keyframe forced every SEGMENT_SECONDS so segments are cut at 2 s, VOD playlist (ffmpeg's, read only for
 * the segment list). Exported for the transcode benchmark, which times exactly this command.
 */
const MAX_PLAYBACK_LONG_SIDE = 1920;
const MAX_PLAYBACK_SHORT_SIDE = 1080;

export function hlsTranscodeArgs(input: string, outDir: string): string[] {
  return [
    ...UPLOAD_INPUT_OPTIONS, '-i', input,
    '-map', '0:v:0', '-map', '0:a:0?',
    // At most 1920×1080 (1080×1920 upright), even sides: a 4K clip took minutes of both cores per 10 s and held up every
    // job queued behind it, for a picture no entrance view needs.
    '-vf', `scale=w='if(gte(iw,ih),min(iw,${MAX_PLAYBACK_LONG_SIDE}),min(iw,${MAX_PLAYBACK_SHORT_SIDE}))':h='if(gte(iw,ih),min(ih,${MAX_PLAYBACK_SHORT_SIDE}),min(ih,${MAX_PLAYBACK_LONG_SIDE}))':force_original_aspect_ratio=decrease:force_divisible_by=2`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p',
    '-force_key_frames', `expr:gte(t,n_forced*${SEGMENT_SECONDS})`,
    '-c:a', 'aac', '-b:a', '128k', '-ac', '2',
    '-f', 'hls', '-hls_time', String(SEGMENT_SECONDS), '-hls_playlist_type', 'vod', '-hls_list_size', '0',
    '-hls_segment_filename', path.join(outDir, SEGMENT_FILE_PATTERN),
    path.join(outDir, 'ffmpeg.m3u8'),
  ];
}

/** The original keeps its extension when it has a plain one; it only matters to whoever downloads it. */
function extensionOf(filename: string, formatName: string): string {
  const ext = path.extname(filename ?? '').slice(1).toLowerCase();
  if (/^[a-z0-9]{1,8}$/.test(ext)) return ext;
  if (formatName.includes('mp4')) return 'mp4';
  if (formatName.includes('matroska')) return 'mkv';
  if (formatName.includes('mpegts')) return 'ts';
  return 'bin';
}

/** A detections file is JSON; small ones are parsed to say so early, huge ones only checked at their start. */
async function checkDetections(file: string, size: number): Promise<void> {
  if (size === 0) throw new VideoRejectedError('detectionsFile is empty');
  if (size <= DETECTIONS_PARSE_LIMIT) {
    try {
      JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      throw new VideoRejectedError(`detectionsFile is not valid JSON: ${(err as Error).message}`);
    }
    return;
  }
  const handle = await open(file, 'r');
  const { buffer, bytesRead } = await handle.read(Buffer.alloc(64), 0, 64, 0).finally(() => handle.close());
  const head = buffer.subarray(0, bytesRead).toString('utf8').trimStart();
  if (!head.startsWith('{') && !head.startsWith('[')) throw new VideoRejectedError('detectionsFile is not JSON');
}
