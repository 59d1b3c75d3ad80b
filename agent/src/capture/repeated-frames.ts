import type { Frame } from './frame.ts';

/**
 * A source slower than the rate it is read at reaches the agent with frames repeated: ffmpeg's `fps` filter fills each
 * empty slot with a byte-identical copy of the frame before (a 25 fps file read at 30 repeats one frame in six; a
 * live source is read no faster than it says it sends, so there it happens when it sends fewer). Tracked,
 * such a copy shows every bee standing still for a frame and then jumping two; on the 25 fps held-out clips read at
 * 30 that more than doubled the identity switches. A real sensor's noise never gives two identical pictures, so a
 * copy is recognised by its bytes and skipped: the tracker, which works in time, then sees the next new frame one
 * gap later. (A file's frames also keep the times of the clip frames they show, so a slow file is then tracked as at
 * its own rate; such a camera's are stamped at the slots of the rate it is read at, up to half a slot off.)
 *
 * A scene that truly does not change (a drawn test clip, a frozen feed, an encoder's skipped frames in the dark)
 * also repeats, for as long as it stays still. Skipping all of it would stop the clock that ages lost tracks and
 * closes intervals, so at most `maxGapMs` pass between two frames that are kept: long enough for any camera of
 * 5 fps and up, short enough that a lost track still ends within seconds.
 */
export class RepeatedFrameFilter {
  private last: Frame | undefined;
  /** Frames skipped as repeats. */
  repeated = 0;
  /** Frames looked at. */
  seen = 0;

  constructor(private readonly maxGapMs = 250) {}

  /** Whether `frame` only repeats the last frame kept (then it is skipped; otherwise it is kept). */
  isRepeat(frame: Frame): boolean {
    this.seen++;
    const last = this.last;
    if (
      last !== undefined &&
      frame.timestampMs - last.timestampMs < this.maxGapMs &&
      frame.timestampMs >= last.timestampMs &&
      frame.data.length === last.data.length &&
      // memcmp: a new frame differs within its first bytes, a repeat costs one pass (tens of µs at 640×480 RGB).
      Buffer.compare(frame.data, last.data) === 0
    ) {
      this.repeated++;
      return true;
    }
    this.last = frame;
    return false;
  }
}
