/**
 * When each frame of a live source was taken. The time a frame reaches the agent is a poor answer: it waits in the
 * pipe while the agent works on the one before: at 30 fps on a loaded 2-core machine the steps between arrivals
 * were 8.8 ms off the period on average and up to 29 (`pnpm bench:live-stamps`), and the tracker, which works in
 * time, reads that as bees speeding up and slowing down (4 more of 741 held-out crossings counted wrong).
 *
 * ffmpeg's `fps` filter gives a constant rate in the source's own time, so frame k of a run was taken k periods after
 * its first frame. A frame can arrive late but never early, so the run's start is the earliest `arrival − k·period`
 * seen: each frame is stamped `start + k·period`, which is never later than its arrival. The start may creep
 * forward by `creep` of a period per frame (0.05 %), so a camera whose clock runs a little slow against this
 * machine's is followed; one that falls more than `maxLagMs` behind (its stream time does not pass as the wall
 * clock does) is taken at its arrival time again. Stamps never go back.
 *
 * A run begins with a burst: ffmpeg hands over the frames it decoded while probing the stream (half a second of
 * them at once, over HTTP here). Stamped as they came, those frames got nearly one time, and the tracker saw bees
 * cover half a second of ground in a millisecond. So the capture holds a run's first frames until the burst is over
 * (`startBurstOver`), shows the clock all their arrivals (`anchor`), and only then stamps them.
 */
export class StreamClock {
  /** Wall-clock ms of the run's frame 0, as far as the arrivals tell. */
  private start: number | undefined;
  private last = -Infinity;

  constructor(
    private periodMs: number,
    private readonly options: { maxLagMs?: number; creep?: number } = {},
  ) {
    checkPeriod(periodMs);
  }

  /** A new run of the source (a reconnect): its frame numbers start at 0 again, perhaps at another rate. */
  restart(periodMs = this.periodMs): void {
    checkPeriod(periodMs);
    this.periodMs = periodMs;
    this.start = undefined;
  }

  /** Takes the arrival of frame `index` of this run into the run's start without stamping it (yet). */
  anchor(index: number, arrivalMs: number): void {
    const earliest = arrivalMs - index * this.periodMs;
    this.start = this.start === undefined ? earliest : Math.min(this.start, earliest);
  }

  /** The time frame `index` of this run (from 0) was taken, given the wall-clock ms it arrived at. */
  stamp(index: number, arrivalMs: number): number {
    const { maxLagMs = 2000, creep = 0.0005 } = this.options;
    const earliest = arrivalMs - index * this.periodMs;
    if (this.start === undefined || earliest - this.start > maxLagMs) this.start = earliest;
    else this.start = Math.min(this.start + creep * this.periodMs, earliest);
    const stamp = Math.max(this.start + index * this.periodMs, this.last);
    this.last = stamp;
    return stamp;
  }
}

function checkPeriod(periodMs: number): void {
  if (!(periodMs > 0) || !Number.isFinite(periodMs)) throw new Error(`the frame period must be positive, got ${periodMs}`);
}

/**
 * Whether the first frames of a run, arriving at `arrivalsMs`, are past ffmpeg's start-up burst: the last came at
 * least half a period after the one before it. A source that only ever comes in bursts (segments of a few seconds)
 * is taken as it is after `maxHeld` frames.
 */
export function startBurstOver(arrivalsMs: readonly number[], periodMs: number, maxHeld: number): boolean {
  const n = arrivalsMs.length;
  if (n >= maxHeld) return true;
  return n >= 2 && arrivalsMs[n - 1]! - arrivalsMs[n - 2]! >= periodMs / 2;
}
