/**
 * Decides from upload results whether a live stream is accepted, refused or lost. Pure: results and the clock
 * come in as arguments.
 *
 * ffmpeg never reads the answers to its PUTs (a 401 leaves it running and exiting 0), so the agent relays the
 * uploads itself and judges the gateway's answers here: an HLS stream is ACTIVE once a playlist listing at least
 * one stored segment was accepted; a JPEG stream once a frame was. 401/403 (refused) and other 4xx on media fail the
 * stream; network errors and 5xx are tolerated for a while. 410 (session over), and 404 once the stream was accepted
 * (the session is gone), end it normally: the gateway ended the session, often before its STOP_STREAM reached us.
 */
export type UploadKind = 'playlist' | 'segment' | 'frame' | 'other';

export interface UploadResult {
  kind: UploadKind;
  method: string;
  name: string;
  /** HTTP status, undefined when the request never got an answer. */
  status?: number;
  error?: string;
  atMs: number;
}

export type HealthVerdict =
  | { type: 'active' }
  | { type: 'failed'; errorCode: string; errorMessage: string }
  /** The gateway ended the session (expired, stopped, failed on its side): a normal end, not the device's error. */
  | { type: 'ended'; reason: string };

export interface PublishHealthOptions {
  mode: 'hls' | 'jpeg';
  startedAtMs: number;
  /** Nothing accepted this long after the start: the stream failed (camera silent, gateway unreachable…). */
  startTimeoutMs: number;
  /** Once active, only failures for this long: the gateway is lost. */
  unreachableAfterMs: number;
}

export class PublishHealth {
  private active = false;
  private ended = false;
  private segmentsAccepted = 0;
  private lastSuccessMs: number | undefined;
  private lastFailure: { atMs: number; reason: string } | undefined;
  uploadsAccepted = 0;
  uploadsFailed = 0;

  constructor(private readonly options: PublishHealthOptions) {}

  get isActive(): boolean {
    return this.active;
  }

  /** A verdict the first time the stream becomes active or fails; undefined otherwise. */
  record(result: UploadResult): HealthVerdict | undefined {
    if (this.ended) return undefined;
    // Removing old segments is housekeeping: the gateway may prune them itself and answer 404.
    if (result.method === 'DELETE') return undefined;
    const status = result.status;
    if (status !== undefined && status >= 200 && status < 300) {
      this.uploadsAccepted++;
      this.lastSuccessMs = result.atMs;
      if (result.kind === 'segment') this.segmentsAccepted++;
      const playable = this.options.mode === 'jpeg' ? result.kind === 'frame' : result.kind === 'playlist' && this.segmentsAccepted > 0;
      if (playable && !this.active) {
        this.active = true;
        return { type: 'active' };
      }
      return undefined;
    }
    this.uploadsFailed++;
    const reason = status === undefined ? `${result.method} ${result.name}: ${result.error ?? 'no answer'}` : `${result.method} ${result.name} answered ${status}${result.error ? `: ${result.error}` : ''}`;
    this.lastFailure = { atMs: result.atMs, reason };
    if (status === undefined || status >= 500 || status === 408 || status === 429) return undefined;
    if (status === 401 || status === 403) return this.fail('PUBLISH_REFUSED', `the live gateway refused the publish token (${reason})`);
    if (status === 410 || (status === 404 && this.uploadsAccepted > 0)) {
      this.ended = true;
      return { type: 'ended', reason: `the live gateway ended the session (${reason})` };
    }
    // Never accepted at all: a publisher URL that names no session is a fault worth showing.
    if (status === 404) return this.fail('PUBLISH_GONE', `the live gateway does not know this session (${reason})`);
    if (status === 413) return this.fail('PUBLISH_TOO_LARGE', `the live gateway refused an upload as too large (${reason}); try a lower qualityProfile`);
    if (status >= 400) return this.fail('PUBLISH_REJECTED', `the live gateway rejected an upload (${reason})`);
    return undefined;
  }

  /** Time-outs: call every second or so. */
  check(nowMs: number): HealthVerdict | undefined {
    if (this.ended) return undefined;
    if (!this.active) {
      if (nowMs - this.options.startedAtMs < this.options.startTimeoutMs) return undefined;
      const why = this.lastFailure ? `last upload error: ${this.lastFailure.reason}` : this.uploadsAccepted > 0 ? 'uploads went through but no playable stream formed' : 'no upload was made (is the camera delivering frames?)';
      return this.fail('STREAM_START_TIMEOUT', `no ${this.options.mode === 'jpeg' ? 'frame' : 'playable playlist'} was accepted within ${Math.round(this.options.startTimeoutMs / 1000)} s; ${why}`);
    }
    const lastSuccess = this.lastSuccessMs ?? this.options.startedAtMs;
    if (this.lastFailure && this.lastFailure.atMs > lastSuccess && nowMs - lastSuccess >= this.options.unreachableAfterMs) {
      return this.fail('PUBLISH_UNREACHABLE', `no upload accepted for ${Math.round((nowMs - lastSuccess) / 1000)} s; last error: ${this.lastFailure.reason}`);
    }
    return undefined;
  }

  private fail(errorCode: string, errorMessage: string): HealthVerdict {
    this.ended = true;
    return { type: 'failed', errorCode, errorMessage };
  }
}

/** What a relayed file is, from its name. */
export function uploadKind(name: string): UploadKind {
  if (name.endsWith('.m3u8')) return 'playlist';
  if (name.endsWith('.ts') || name.endsWith('.m4s') || name.endsWith('.mp4')) return 'segment';
  if (name === 'frame') return 'frame';
  return 'other';
}
