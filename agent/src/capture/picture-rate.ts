/**
 * How many new pictures a second a live source delivers, measured over windows of its own time. A camera can send
 * fewer than it did when the agent connected (a USB camera lengthens its exposure at dusk, from 30 to 15 fps): the
 * repeats ffmpeg then fills in are skipped, and the settings counted in frames should follow the rate of what is
 * left. A rate is reported at the first full window and then whenever it has moved by more than `tolerance` from
 * the one last reported, so the settings do not flap with every window. A new connection (`following`) or a gap in
 * the stream's time starts a new window; a window that measures more than the connection can deliver (its clock
 * was reset while it ran) is dropped.
 */
export class PictureRateMeter {
  private windowStart: number | undefined;
  private last: number | undefined;
  private pictures = 0;
  private reported: number | undefined;
  private ceiling = Infinity;

  constructor(private readonly options: { windowMs?: number; tolerance?: number; maxGapMs?: number } = {}) {}

  /** A picture kept at `timestampMs` (ms). Returns the rate to follow now, when it has changed. */
  add(timestampMs: number): number | undefined {
    const { windowMs = 10_000, tolerance = 0.15, maxGapMs = 2000 } = this.options;
    const gap = this.last === undefined ? Infinity : timestampMs - this.last;
    this.last = timestampMs;
    if (this.windowStart === undefined || gap > maxGapMs || gap < 0) {
      this.windowStart = timestampMs;
      this.pictures = 0;
      return undefined;
    }
    this.pictures++;
    const elapsed = timestampMs - this.windowStart;
    if (elapsed < windowMs) return undefined;
    const rate = (this.pictures * 1000) / elapsed;
    this.windowStart = timestampMs;
    this.pictures = 0;
    if (rate > this.ceiling * 1.05) return undefined;
    if (this.reported !== undefined && Math.abs(rate - this.reported) <= tolerance * this.reported) return undefined;
    this.reported = rate;
    return rate;
  }

  /**
   * A connection starts at `rate`, the most it can deliver and the rate the settings follow already: what comes is
   * measured against it, from its first picture.
   */
  following(rate: number): void {
    this.reported = rate;
    this.ceiling = rate;
    this.windowStart = undefined;
    this.last = undefined;
  }
}
