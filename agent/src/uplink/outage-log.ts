/**
 * What the log says while the cloud or the camera cannot be reached. Every retry was a line, and each of the device
 * loop's three endpoints (status, poll, event) logged the same refused connection in turn: hundreds of lines an hour
 * into the journal of an SD card while a hive's link (or its network camera) was down, and not one when it came back.
 * This says a failure when it is new or changes, retries on a doubling scale (attempts 1, 2, 4, 8 …), and once when
 * delivery works again.
 */
export class OutageLog {
  private lastReason = new Map<string, string>();
  private failing = new Map<string, number>();

  constructor(private readonly log: (line: string) => void) {}

  /** A failed attempt of `what` (a record kind, or the live link); `reason` without the endpoint it came from. */
  failed(what: string, attempt: number, reason: string, line: string): void {
    this.failing.set(what, attempt);
    const changed = this.lastReason.get(what) !== reason;
    this.lastReason.set(what, reason);
    if (changed || isPowerOfTwo(attempt)) this.log(line);
  }

  /** A success of `what`: said once after failures, with how many there were. */
  succeeded(what: string, line: (failures: number) => string): void {
    const failures = this.failing.get(what);
    if (failures === undefined) return;
    this.failing.delete(what);
    this.lastReason.delete(what);
    this.log(line(failures));
  }
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}
