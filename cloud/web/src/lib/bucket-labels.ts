/** How a chart names its buckets: the width in its title, and each bucket's time where two would read the same. */

const UNITS: [seconds: number, singular: string][] = [
  [7 * 86_400, 'week'],
  [86_400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** 604800 → "week", 86400 → "day", 7200 → "2 hours", 900 → "15 minutes": what "Traffic per …" ends in. */
export function bucketWidthName(seconds: number): string {
  const [unit, singular] = UNITS.find(([size]) => seconds % size === 0 && seconds >= size) ?? UNITS.at(-1)!;
  const count = seconds / unit;
  return count === 1 ? singular : `${count.toLocaleString('en')} ${singular}s`;
}

/** "GMT+2", "GMT-3", "GMT+10:30": the UTC offset of `timeZone` (default the browser's) at `t`. */
function utcOffsetName(t: number, timeZone: string | undefined): string {
  return new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'shortOffset' }).formatToParts(t).find((part) => part.type === 'timeZoneName')?.value ?? '';
}

/**
 * Each bucket's time as `format` writes it; where two buckets read the same (the hour the clocks repeat in autumn:
 * 02:00 summer time, then 02:00 winter time), each of them with its UTC offset, so the rows can be told apart.
 */
export function bucketTimeLabels(times: readonly number[], format: (t: number) => string, timeZone?: string): string[] {
  const labels = times.map(format);
  const seen = new Map<string, number>();
  for (const label of labels) seen.set(label, (seen.get(label) ?? 0) + 1);
  return labels.map((label, i) => ((seen.get(label) ?? 0) > 1 ? `${label} (${utcOffsetName(times[i]!, timeZone)})` : label));
}
