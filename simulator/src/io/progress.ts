/**
 * Rendering progress on stderr: a redrawn bar when stderr is a terminal, otherwise an occasional plain line
 * (each further tenth of the way, at most one a second) so logs and CI output stay readable.
 */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export class Progress {
  private readonly startedAt: number;
  private lastDraw = -Infinity;
  private lastReportedTenth = 0;
  private lastLine: number;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly stream: ProgressStream = process.stderr,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.startedAt = clock();
    this.lastLine = this.startedAt;
  }

  update(done: number): void {
    const now = this.clock();
    if (this.stream.isTTY) {
      if (now - this.lastDraw < 100 && done < this.total) return;
      this.lastDraw = now;
      this.stream.write(`\r${this.bar(done, now)}\u001b[K`);
      return;
    }
    const tenth = Math.floor((done / this.total) * 10);
    if (tenth > this.lastReportedTenth && done < this.total && now - this.lastLine >= 1000) {
      this.lastReportedTenth = tenth;
      this.lastLine = now;
      this.stream.write(`${this.label}: ${Math.floor((done / this.total) * 100)}% (${done}/${this.total} frames)\n`);
    }
  }

  finish(summary: string): void {
    if (this.stream.isTTY) this.stream.write(`\r${this.bar(this.total, this.clock())}\u001b[K\n`);
    this.stream.write(`${this.label}: ${summary}\n`);
  }

  private bar(done: number, now: number): string {
    const share = this.total > 0 ? done / this.total : 1;
    const seconds = Math.max(1e-3, (now - this.startedAt) / 1000);
    const rate = done / seconds;
    const eta = rate > 0 ? (this.total - done) / rate : 0;
    const width = Math.max(10, Math.min(40, (this.stream.columns ?? 80) - 60));
    const filled = Math.round(share * width);
    return `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(share * 100)}% ${done}/${this.total} frames, ${rate.toFixed(0)} fps, ETA ${eta.toFixed(0)} s`;
  }
}
