/**
 * Reads ffmpeg's `-progress` output (blocks of `key=value` lines, each closed by `progress=continue|end`) into
 * the media time reached so far. Pure: feed it stdout chunks as they come.
 */
export class FfmpegProgress {
  private buffer = '';
  private outTimeSeconds = 0;
  private ended = false;

  /** Feeds a chunk; returns the media time reached (seconds) when the chunk completed a block, else null. */
  push(chunk: string): number | null {
    this.buffer += chunk;
    let reported: number | null = null;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).trim();
      this.buffer = this.buffer.slice(newline + 1);
      const eq = line.indexOf('=');
      if (eq < 0) continue;
      const key = line.slice(0, eq);
      const value = line.slice(eq + 1);
      // out_time_ms is microseconds too (a long-standing ffmpeg misnomer); out_time_us is the honest name.
      if (key === 'out_time_us' || key === 'out_time_ms') {
        const micros = Number(value);
        if (Number.isFinite(micros) && micros >= 0) this.outTimeSeconds = Math.max(this.outTimeSeconds, micros / 1e6);
      } else if (key === 'progress') {
        if (value === 'end') this.ended = true;
        reported = this.outTimeSeconds;
      }
    }
    return reported;
  }

  get seconds(): number {
    return this.outTimeSeconds;
  }

  get done(): boolean {
    return this.ended;
  }
}

/** Percent of a transcode for a media time; stays below 100 until the job is really done. */
export function progressPercent(outTimeSeconds: number, durationSeconds: number | null | undefined): number {
  if (!durationSeconds || !(durationSeconds > 0) || !(outTimeSeconds > 0)) return 0;
  return Math.min(99, Math.floor((outTimeSeconds / durationSeconds) * 1000) / 10);
}

/** Lets a value through at most once per interval, and whenever it moved by at least `step` (row updates). */
export class Throttle {
  private lastAt = Number.NEGATIVE_INFINITY;
  private lastValue = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs: number,
    private readonly step: number,
  ) {}

  shouldEmit(value: number, nowMs: number): boolean {
    if (value === this.lastValue) return false;
    if (nowMs - this.lastAt < this.intervalMs && Math.abs(value - this.lastValue) < this.step) return false;
    this.lastAt = nowMs;
    this.lastValue = value;
    return true;
  }
}
