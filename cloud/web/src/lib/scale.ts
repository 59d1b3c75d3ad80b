/** Axis arithmetic for the SVG charts: no DOM here, so it is unit-tested in Node. */

export interface LinearScale {
  (value: number): number;
  domain: readonly [number, number];
  range: readonly [number, number];
}

export function linearScale(domain: readonly [number, number], range: readonly [number, number]): LinearScale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  const scale = ((value: number) => (span === 0 ? (r0 + r1) / 2 : r0 + ((value - d0) / span) * (r1 - r0))) as LinearScale;
  scale.domain = domain;
  scale.range = range;
  return scale;
}

/** A step of 1, 2 or 5 times a power of ten that splits `span` into about `count` parts. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0) || !(count > 0)) return 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  // Thresholds at the geometric means (√2, √10, √50) pick the nice step closest to the raw one.
  const nice = fraction >= Math.sqrt(50) ? 10 : fraction >= Math.sqrt(10) ? 5 : fraction >= Math.SQRT2 ? 2 : 1;
  return nice * power;
}

/**
 * Round axis bounds enclosing [min, max] and the ticks between them. A flat series gets a band around its value,
 * so a constant temperature still draws as a line in the middle rather than on the frame.
 */
export function niceTicks(min: number, max: number, count = 5, { integer = false }: { integer?: boolean } = {}): { min: number; max: number; ticks: number[]; step: number } {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { min: 0, max: 1, ticks: [0, 1], step: 1 };
  if (min > max) [min, max] = [max, min];
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    min -= pad;
    max += pad;
  }
  // Counted things (bees) come in whole numbers: an axis of 0, 0.2 … 1 showed fractions of a bee.
  const step = integer ? Math.max(1, niceStep(max - min, count)) : niceStep(max - min, count);
  const lo = Math.floor(min / step + 1e-9) * step;
  const hi = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; lo + i * step <= hi + step / 2; i++) ticks.push(roundTo(lo + i * step, step));
  return { min: lo, max: hi, ticks, step };
}

/** Removes float noise (0.30000000000000004) by rounding to the step's decimal places. */
function roundTo(value: number, step: number): number {
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  return Number(value.toFixed(Math.min(decimals, 12)));
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
/**
 * Each step at most about twice the one before, so that whenever one step gives more labels than fit, the next gives
 * no fewer than two: a jump from 2 to 7 days left a 7-day chart on a phone a single label.
 */
const TIME_STEPS = [HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, ...[1, 2, 3, 5, 7, 10, 15, 30, 60, 90, 180, 365].map((days) => days * DAY)];

/** Instants from `from` to `to` at whole local hours (steps under a day) or local midnights, `step` apart. */
function ticksAt(from: number, to: number, step: number): number[] {
  const ticks: number[] = [];
  const start = new Date(from);
  if (step < DAY) {
    start.setMinutes(0, 0, 0);
    const hours = step / HOUR;
    while (start.getTime() < from || start.getHours() % hours !== 0) start.setHours(start.getHours() + 1);
    for (const t = start; t.getTime() <= to; t.setHours(t.getHours() + hours)) ticks.push(t.getTime());
  } else {
    start.setHours(0, 0, 0, 0);
    if (start.getTime() < from) start.setDate(start.getDate() + 1);
    const days = Math.round(step / DAY);
    for (const t = start; t.getTime() <= to; t.setDate(t.getDate() + days)) ticks.push(t.getTime());
  }
  return ticks;
}

/**
 * Tick instants between from and to (ms), at whole local hours or local midnights: the most that are at most
 * `maxTicks`, i.e. those of the shortest step whose ticks fit. Local time because a beekeeper reads "06:00" as their
 * morning.
 */
export function timeTicks(from: number, to: number, maxTicks: number): { ticks: number[]; step: number } {
  if (!(to > from) || maxTicks < 1) return { ticks: [], step: HOUR };
  for (const step of TIME_STEPS) {
    // A step this short gives more ticks than fit whatever the alignment; skipped without listing them.
    if ((to - from) / step > maxTicks + 1) continue;
    const ticks = ticksAt(from, to, step);
    if (ticks.length <= maxTicks) return { ticks, step };
  }
  const longest = TIME_STEPS[TIME_STEPS.length - 1]!;
  return { ticks: ticksAt(from, to, longest), step: longest };
}

/** A point of a series: time in ms, value or null for "no reading". */
export interface Point {
  t: number;
  v: number | null;
}

/**
 * An SVG path through the points that lifts the pen at missing values and at gaps longer than `maxGapMs`, so the
 * chart does not invent readings for hours a sensor was silent.
 */
export function linePath(points: readonly Point[], x: (t: number) => number, y: (v: number) => number, maxGapMs = Infinity): string {
  let path = '';
  let previous: number | undefined;
  for (const { t, v } of points) {
    if (v === null || !Number.isFinite(v)) {
      previous = undefined;
      continue;
    }
    const command = previous === undefined || t - previous > maxGapMs ? 'M' : 'L';
    path += `${command}${x(t).toFixed(1)},${y(v).toFixed(1)}`;
    previous = t;
  }
  return path;
}

/** Lone points (neighbours missing or too far) do not show in a line; the chart draws them as dots. */
export function isolatedPoints(points: readonly Point[], maxGapMs = Infinity): { t: number; v: number }[] {
  const joins = (a: Point | undefined, b: Point | undefined) =>
    a !== undefined && b !== undefined && a.v !== null && b.v !== null && Number.isFinite(a.v) && Number.isFinite(b.v) && Math.abs(b.t - a.t) <= maxGapMs;
  const lonely: { t: number; v: number }[] = [];
  points.forEach((p, i) => {
    if (p.v === null || !Number.isFinite(p.v)) return;
    if (!joins(points[i - 1], p) && !joins(p, points[i + 1])) lonely.push({ t: p.t, v: p.v });
  });
  return lonely;
}

/** Index of the point nearest to time t (points sorted by time), or -1 when there are none. */
export function nearestIndex(points: readonly { t: number }[], t: number): number {
  if (points.length === 0) return -1;
  let lo = 0;
  let hi = points.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.t <= t) lo = mid;
    else hi = mid;
  }
  return Math.abs(points[lo]!.t - t) <= Math.abs(points[hi]!.t - t) ? lo : hi;
}
