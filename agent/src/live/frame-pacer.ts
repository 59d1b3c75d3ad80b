/**
 * Thins a frame stream to a target rate on the wall clock. Pure: the caller passes the time.
 *
 * Frames are kept on a schedule (one slot per 1/fps), so a camera at 15 fps feeding a 10 fps stream keeps two of
 * every three frames and the average never exceeds the target. A quarter-slot tolerance keeps camera jitter from
 * dropping frames when the target equals the camera's rate; after a gap the schedule restarts instead of bursting.
 */
export class FramePacer {
  private next: number | undefined;
  private readonly intervalMs: number;

  constructor(fps: number) {
    if (!(fps > 0)) throw new Error(`pacer fps must be > 0, got ${fps}`);
    this.intervalMs = 1000 / fps;
  }

  /** True when the frame arriving at `nowMs` should be passed on. */
  take(nowMs: number): boolean {
    const tolerance = this.intervalMs / 4;
    if (this.next !== undefined && nowMs < this.next - tolerance) return false;
    this.next = this.next === undefined || nowMs - this.next > this.intervalMs ? nowMs + this.intervalMs : this.next + this.intervalMs;
    return true;
  }
}
