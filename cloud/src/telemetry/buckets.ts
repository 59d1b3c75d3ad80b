/** Bucket widths that make readable chart axes, smallest first. */
const NICE_BUCKETS = [60, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86_400, 7 * 86_400];
export const TARGET_POINTS = 500;
export const MAX_POINTS = 10_000;
export const MAX_BUCKET_SECONDS = 31 * 86_400;
/**
 * The longest range a series covers. Bucket starts are found by following the time zone's offset across the range:
 * years 0001 to 9999 took seconds of the event loop for one field, and aliases multiply it.
 */
export const MAX_RANGE_YEARS = 200;
const MAX_RANGE_SECONDS = MAX_RANGE_YEARS * 365.25 * 86_400;

export type BucketChoice = { ok: true; bucketSeconds: number } | { ok: false; error: string };

/** Checks a requested range and bucket width, or picks a width giving about TARGET_POINTS points. */
export function chooseBucket(from: Date, to: Date, requested?: number | null): BucketChoice {
  const rangeSeconds = (to.getTime() - from.getTime()) / 1000;
  if (!(rangeSeconds > 0)) return { ok: false, error: '"to" must be after "from"' };
  if (rangeSeconds > MAX_RANGE_SECONDS) return { ok: false, error: `"from" to "to" may span at most ${MAX_RANGE_YEARS} years` };
  if (requested !== undefined && requested !== null) {
    if (!Number.isInteger(requested) || requested < 1 || requested > MAX_BUCKET_SECONDS) {
      return { ok: false, error: `bucketSeconds must be an integer from 1 to ${MAX_BUCKET_SECONDS}` };
    }
    if (rangeSeconds / requested > MAX_POINTS) {
      return { ok: false, error: `bucketSeconds ${requested} gives more than ${MAX_POINTS} points over this range; use at least ${Math.ceil(rangeSeconds / MAX_POINTS)}` };
    }
    return { ok: true, bucketSeconds: requested };
  }
  const nice = NICE_BUCKETS.find((width) => rangeSeconds / width <= TARGET_POINTS);
  return { ok: true, bucketSeconds: nice ?? Math.ceil(rangeSeconds / TARGET_POINTS) };
}

/** Today's date in UTC as YYYY-MM-DD. */
export function utcDate(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

export function isIsoDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && utcDate(date) === value;
}
