/**
 * Where the buckets of a series start, laid on the wall clock of a time zone. Computed here rather than with the
 * database's `AT TIME ZONE`: binning the local wall time there and turning the bin back into an instant folded the
 * hour the clocks repeat in autumn into the other one (two real hours summed under one, the first missing), and the
 * embedded database needs no zone data of its own this way.
 *
 * The rules:
 * - A bucket shorter than a day starts on every local boundary of its width (an hour on the local hour, Kolkata's
 *   at :30 UTC) and at every change of the UTC offset, so it never spans one: the hour the clocks repeat is two
 *   buckets, each starting at the real instant its hour begins; a three-hour bucket the change falls in ends there
 *   and the rest of it is a bucket of its own; Lord Howe's half-hour change gives a half-hour bucket.
 * - A bucket of a day or longer starts at local midnight (the first instant of the day where a zone skips its
 *   midnight) and keeps the change inside it: a day is one bucket of 23 or 25 hours.
 * - Buckets of whole weeks start on Monday (ISO 8601); other widths are counted from 1970-01-01.
 */

const DAY = 86_400;
const WEEK = 7 * DAY;
/** 1970-01-05, the epoch's first Monday. */
const FIRST_MONDAY = 4 * DAY;
/**
 * How far apart the offset is sampled in search of changes. A zone's changes lie weeks apart (Morocco's around
 * Ramadan are the closest today); only two that cancel out within a week would be missed, and a decade of daily
 * buckets costs some 500 samples rather than 3,650.
 */
const SCAN_STEP = WEEK;

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** The UTC offset of `timeZone` at epoch second `at`, in seconds (+7200 for Berlin in summer). */
export function utcOffsetSeconds(timeZone: string, at: number): number {
  if (timeZone === 'UTC') return 0;
  let formatter = offsetFormatters.get(timeZone);
  if (!formatter) {
    // The offset alone ("GMT+02:00") formats three times faster than the wall clock's fields.
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormatters.set(timeZone, formatter);
  }
  const match = /GMT(?:([+\-\u2212])(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(formatter.format(at * 1000));
  if (!match) throw new Error(`cannot read the UTC offset of ${timeZone}`);
  if (match[1] === undefined) return 0;
  const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4] ?? 0);
  return match[1] === '+' ? seconds : -seconds;
}

interface OffsetChange {
  /** The epoch second the new offset begins. */
  at: number;
  offset: number;
}

/** The offsets of a time zone over a stretch of time, found once, so that each bucket costs no more calls to Intl. */
class ZoneTimeline {
  private readonly firstOffset: number;
  readonly changes: OffsetChange[] = [];

  constructor(timeZone: string, from: number, to: number) {
    this.firstOffset = utcOffsetSeconds(timeZone, from);
    if (timeZone === 'UTC') return;
    let lo = from;
    let loOffset = this.firstOffset;
    while (lo < to) {
      const hi = Math.min(lo + SCAN_STEP, to);
      const hiOffset = utcOffsetSeconds(timeZone, hi);
      if (hiOffset === loOffset) {
        lo = hi;
        continue;
      }
      // The first second in (lo, hi] with another offset than lo's.
      let before = lo;
      let changed = hi;
      while (changed - before > 1) {
        const middle = Math.floor((before + changed) / 2);
        if (utcOffsetSeconds(timeZone, middle) === loOffset) before = middle;
        else changed = middle;
      }
      loOffset = utcOffsetSeconds(timeZone, changed);
      this.changes.push({ at: changed, offset: loOffset });
      lo = changed;
    }
  }

  offsetAt(at: number): number {
    // The number of changes at or before `at`, by bisection: a long series asks for every bucket.
    let lo = 0;
    let hi = this.changes.length;
    while (lo < hi) {
      const middle = (lo + hi) >> 1;
      if (this.changes[middle]!.at <= at) lo = middle + 1;
      else hi = middle;
    }
    return lo === 0 ? this.firstOffset : this.changes[lo - 1]!.offset;
  }

  /**
   * The first instant at which the wall clock reads `wall` (epoch seconds of that wall time read as UTC) or later:
   * the earlier of two where the clocks repeat it, the change itself where they skip it.
   */
  firstInstantAtWall(wall: number): number {
    // Offsets lie within −12 h and +14 h, so the instant lies within a day either side.
    const candidates = [this.offsetAt(wall - DAY), this.offsetAt(wall + DAY)]
      .map((offset) => wall - offset)
      .filter((instant) => instant + this.offsetAt(instant) === wall);
    if (candidates.length > 0) return Math.min(...candidates);
    const skipping = this.changes.find((change) => change.at > wall - DAY && change.at + change.offset >= wall);
    if (!skipping) throw new Error(`no instant reads ${new Date(wall * 1000).toISOString()} on this wall clock`);
    return skipping.at;
  }
}

function originOf(bucketSeconds: number): number {
  return bucketSeconds % WEEK === 0 ? FIRST_MONDAY : 0;
}

/**
 * The instants at which buckets of `bucketSeconds` start, from the one `from` falls in up to the last before `to`,
 * ascending. The first may lie before `from` (the bucket `from` cuts into).
 */
export function bucketStarts(from: Date, to: Date, bucketSeconds: number, timeZone: string): Date[] {
  const fromSecond = Math.floor(from.getTime() / 1000);
  const toSecond = Math.ceil(to.getTime() / 1000);
  // Wide enough for the bucket `from` is in, which starts up to a bucket (and a day's offset) before it.
  const timeline = new ZoneTimeline(timeZone, fromSecond - Math.max(bucketSeconds, DAY) - 2 * DAY, toSecond + 2 * DAY);
  const starts = bucketSeconds < DAY ? shortBucketStarts(fromSecond, toSecond, bucketSeconds, timeline) : longBucketStarts(fromSecond, toSecond, bucketSeconds, timeline);
  return starts.map((second) => new Date(second * 1000));
}

function shortBucketStarts(from: number, to: number, width: number, timeline: ZoneTimeline): number[] {
  const origin = originOf(width);
  // A day before `from` surely holds the boundary or change that starts the bucket `from` is in.
  const scanFrom = from - DAY;
  const changes = timeline.changes.filter((change) => change.at > scanFrom && change.at < to);
  const starts: number[] = [];
  let segmentStart = scanFrom;
  let offset = timeline.offsetAt(scanFrom);
  for (let i = 0; i <= changes.length; i++) {
    const segmentEnd = changes[i]?.at ?? to;
    if (i > 0) starts.push(segmentStart);
    // The first local boundary at or after the segment's start, on the segment's wall clock.
    let boundary = origin + Math.ceil((segmentStart + offset - origin) / width) * width - offset;
    for (; boundary < segmentEnd; boundary += width) if (boundary !== starts.at(-1)) starts.push(boundary);
    segmentStart = segmentEnd;
    offset = changes[i]?.offset ?? offset;
  }
  return fromBucketOf(from, to, starts);
}

function longBucketStarts(from: number, to: number, width: number, timeline: ZoneTimeline): number[] {
  const origin = originOf(width);
  let index = Math.floor((from + timeline.offsetAt(from) - origin) / width);
  while (timeline.firstInstantAtWall(origin + index * width) > from) index--;
  const starts: number[] = [];
  for (let start = timeline.firstInstantAtWall(origin + index * width); start < to; start = timeline.firstInstantAtWall(origin + ++index * width)) {
    starts.push(start);
  }
  return starts;
}

/** The starts from the last at or before `from` on, those before `to`. */
function fromBucketOf(from: number, to: number, ascending: number[]): number[] {
  let first = 0;
  while (first + 1 < ascending.length && ascending[first + 1]! <= from) first++;
  return ascending.slice(first).filter((start) => start < to);
}
