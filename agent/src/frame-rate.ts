/**
 * Frames a second as frames over elapsed time in the last `windowMs`. A smoothed mean of instantaneous rates
 * (1 / gap) read high wherever frames come in bursts: three frames a few milliseconds apart and then a pause make
 * three huge rates and one small one, and `status` showed 76 fps for a camera delivering 30.
 */
export class FrameRate {
  private readonly times: number[] = [];
  private first = 0;

  constructor(private readonly windowMs = 5000) {}

  add(atMs: number): void {
    this.times.push(atMs);
    while (this.times.length - this.first > 2 && atMs - this.times[this.first]! > this.windowMs) this.first++;
    // Compacted now and then rather than shifted per frame.
    if (this.first > 1024) {
      this.times.splice(0, this.first);
      this.first = 0;
    }
  }

  /** The rate over the window, as of `nowMs`: 0 once no frame has come for a whole window, or before two have. */
  rate(nowMs: number): number {
    const count = this.times.length - this.first;
    if (count < 2) return 0;
    const newest = this.times.at(-1)!;
    if (nowMs - newest > this.windowMs) return 0;
    // Frames after the oldest, over the time from it to now: a source that has just gone quiet reads lower at once.
    const span = Math.max(nowMs, newest) - this.times[this.first]!;
    return span > 0 ? (count - 1) / (span / 1000) : 0;
  }
}
