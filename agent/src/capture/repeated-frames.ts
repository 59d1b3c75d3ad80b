import type { Frame } from './frame.ts';

/**
 * A source slower than `source.fps` reaches the agent with frames repeated: ffmpeg's `fps` filter fills each empty
 * slot with a byte-identical copy of the frame before (a 25 fps camera read at 30 repeats one frame in six). Tracked,
 * such a copy shows every bee standing still for a frame and then jumping two; on the 25 fps held-out clips read at
 * 30 that more than doubled the identity switches. A real sensor's noise never gives two identical pictures, so a
 * copy is recognised by its bytes and skipped: the tracker, which works in time, then sees the next new frame one
 * gap later. (A file's frames also keep the times of the clip frames they show, so a slow file is then tracked as at
 * its own rate; a camera's are stamped at the slots of `source.fps`, up to half a slot off.)
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

const rate = (fps: number) => String(Math.round(fps * 10) / 10);

/**
 * What to tell the user when, of the first `seen` frames of a camera read at `readFps`, `repeated` were repeats
 * (nothing below 5 %): the rate the camera really delivers, and to set it.
 */
export function repeatsNote(repeated: number, seen: number, readFps: number): string | undefined {
  if (seen === 0 || repeated / seen < 0.05) return undefined;
  const share = repeated / seen;
  return (
    `${Math.round(share * 100)} % of the first ${seen} frames repeated the one before and were skipped: the camera ` +
    `delivers about ${rate(readFps * (1 - share))} fps, not the ${rate(readFps)} of source.fps (or the picture did not ` +
    `change at all). The frames kept are stamped at the slots of source.fps, up to half a slot off the moment they ` +
    `show, which costs tracking: set source.fps (--fps) to the camera's rate`
  );
}
