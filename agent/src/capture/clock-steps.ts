/**
 * Notices when this machine's wall clock is set rather than running: a Pi without a real-time clock boots at the time
 * it last saved and is corrected by NTP once it is online; an operator may set the time by hand. Live frames are
 * stamped by the wall clock (stream-clock.ts), so a step changes what minute the counts land in, and the log is where
 * an operator can see why. Pure: the caller passes both clocks' readings.
 */
export class ClockStepWatch {
  /** Wall clock minus monotonic clock at the last reading, ms. */
  private offsetMs: number | undefined;

  /** @param thresholdMs smaller differences are drift or slewing, not a step. */
  constructor(private readonly thresholdMs = 2000) {}

  /** How far the wall clock jumped since the last reading (positive: forward), or 0 when it only ran. */
  observe(wallMs: number, monotonicMs: number): number {
    const offset = wallMs - monotonicMs;
    const previous = this.offsetMs;
    this.offsetMs = offset;
    if (previous === undefined) return 0;
    const step = offset - previous;
    return Math.abs(step) >= this.thresholdMs ? step : 0;
  }
}

/** What a wall-clock step of `stepMs` means for a live agent's counts, for its log. */
export function clockStepNote(stepMs: number, nowMs: number): string {
  const size = describeDuration(Math.abs(stepMs));
  if (stepMs > 0) {
    return `clock: this machine's clock jumped forward by ${size} (set by time sync, or by hand); counts made before carry the old time`;
  }
  return (
    `clock: this machine's clock went back by ${size}; frame times hold until it is past ${new Date(nowMs - stepMs).toISOString()} again ` +
    '(times never go back), so the counts of that time go to one minute'
  );
}

function describeDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${minutes % 60} min`;
}

export interface ClockStepLogOptions {
  log: (line: string) => void;
  /** How often the clocks are compared. */
  intervalMs?: number;
  wallMs?: () => number;
  monotonicMs?: () => number;
}

/** Compares the wall clock with the monotonic one every second while started, and logs each step (`clockStepNote`). */
export class ClockStepLog {
  private readonly watch = new ClockStepWatch();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ClockStepLogOptions) {}

  start(): void {
    const { log, intervalMs = 1000, wallMs = Date.now, monotonicMs = () => performance.now() } = this.options;
    this.watch.observe(wallMs(), monotonicMs());
    this.timer = setInterval(() => {
      const now = wallMs();
      const step = this.watch.observe(now, monotonicMs());
      if (step !== 0) log(clockStepNote(step, now));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
