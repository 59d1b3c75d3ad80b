/** The time ranges the hive page offers, kept in the URL query so a reload or a shared link shows the same view. */

export const PRESETS = {
  '24h': { label: '24 h', ms: 24 * 3600_000 },
  '7d': { label: '7 d', ms: 7 * 86_400_000 },
  '30d': { label: '30 d', ms: 30 * 86_400_000 },
} as const;
export type Preset = keyof typeof PRESETS;
export const DEFAULT_PRESET: Preset = '24h';
/** The server keeps two years; a longer custom range would only show emptiness. */
export const MAX_RANGE_MS = 732 * 86_400_000;

export interface TimeRange {
  preset: Preset | 'custom';
  from: Date;
  to: Date;
}

function isPreset(value: string | null): value is Preset {
  return value !== null && Object.hasOwn(PRESETS, value);
}

/** The preset window ending now, with "now" rounded up to the minute so re-renders ask for the same range. */
export function presetRange(preset: Preset, now = new Date()): TimeRange {
  const to = new Date(Math.ceil(now.getTime() / 60_000) * 60_000);
  return { preset, from: new Date(to.getTime() - PRESETS[preset].ms), to };
}

/** Why a custom range cannot be used, and the field to fix; undefined when it can be used. */
export interface RangeProblem {
  field: 'from' | 'to';
  message: string;
}

export function checkCustomRange(from: Date | undefined, to: Date | undefined): RangeProblem | undefined {
  if (!from) return { field: 'from', message: 'Enter a valid start ("From").' };
  if (!to) return { field: 'to', message: 'Enter a valid end ("To").' };
  if (to.getTime() <= from.getTime()) return { field: 'to', message: '"To" must be after "From".' };
  if (to.getTime() - from.getTime() > MAX_RANGE_MS) return { field: 'from', message: 'Choose a range of at most two years.' };
  return undefined;
}

/** Reads `?range=7d` or `?from=…&to=…` (ISO instants); anything unreadable falls back to the default preset. */
export function rangeFromQuery(search: string, now = new Date()): TimeRange {
  const query = new URLSearchParams(search);
  const preset = query.get('range');
  if (isPreset(preset)) return presetRange(preset, now);
  const from = parseInstant(query.get('from'));
  const to = parseInstant(query.get('to'));
  if (from && to && checkCustomRange(from, to) === undefined) return { preset: 'custom', from, to };
  return presetRange(DEFAULT_PRESET, now);
}

export function rangeToQuery(range: TimeRange): string {
  const query = new URLSearchParams();
  if (range.preset === 'custom') {
    query.set('from', range.from.toISOString());
    query.set('to', range.to.toISOString());
  } else {
    query.set('range', range.preset);
  }
  return `?${query.toString()}`;
}

/**
 * The range parameters of a query string (range, or from and to), for links between a hive's page and its boxes'
 * pages: a round trip through a box's page fell back from the chosen 7 days to the last 24 hours.
 */
export function rangeParams(search: string): string {
  const query = new URLSearchParams(search);
  const kept = new URLSearchParams();
  for (const name of ['range', 'from', 'to']) {
    const value = query.get(name);
    if (value !== null) kept.set(name, value);
  }
  const text = kept.toString();
  return text ? `?${text}` : '';
}

function parseInstant(value: string | null): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const TRAFFIC_BUCKETS = [300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 7 * 86_400];
const MAX_BARS = 120;

/**
 * Bucket width for the traffic bar chart: at most about 120 bars (readable on a phone), on the same round widths
 * the server uses. Line charts take the server's own choice instead.
 */
export function trafficBucketSeconds(from: Date, to: Date): number {
  const seconds = (to.getTime() - from.getTime()) / 1000;
  return TRAFFIC_BUCKETS.find((width) => seconds / width <= MAX_BARS) ?? Math.ceil(seconds / MAX_BARS);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A Date as the value of an `<input type="datetime-local">` (local wall time, minutes). */
export function toLocalInput(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** The value of a datetime-local input as a Date (read as local time), or undefined when blank or malformed. */
export function fromLocalInput(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, Number.isNaN(s) ? 0 : s);
  // new Date rolls 2024-02-31 over into March: reject rather than silently show another day.
  return date.getMonth() === mo - 1 && date.getDate() === d ? date : undefined;
}

/** Today's date in UTC (YYYY-MM-DD): heatmaps are per UTC day. */
export function utcDateString(at = new Date()): string {
  return at.toISOString().slice(0, 10);
}
