import { LOCALE } from './format.ts';

/**
 * How old a hive's last value of one field is, said only where it is older than the hive's newest reading: a scale
 * weighing every 15 min beside a climate sensor posting every minute has a weight older than "Last reading".
 */

/** Sensors of one hive posting a little apart are one reading for the eye: under a minute older says nothing. */
export const SAME_READING_MS = 60_000;

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "14 min ago", "3 hr ago": short, to fit under a value in a third of a 320 px card. */
export function shortAge(at: number, now: number, locale = LOCALE): string {
  const elapsed = Math.max(0, now - at);
  if (elapsed < 45_000) return 'just now';
  const format = new Intl.RelativeTimeFormat(locale, { style: 'short', numeric: 'always' });
  const [unit, size] = UNITS.find(([, size]) => elapsed >= size * 0.9) ?? UNITS[UNITS.length - 1]!;
  return format.format(-Math.max(1, Math.round(elapsed / size)), unit);
}

/**
 * The age to show beside a field's value taken at `valueAt` when the hive's newest reading was at `newestAt` (ISO
 * instants), or null: no value, or one as new as the newest reading, whose age the card already says.
 */
export function ageWhenOlder(valueAt: string | null, newestAt: string, now: number, locale = LOCALE): string | null {
  if (valueAt === null) return null;
  const at = Date.parse(valueAt);
  const newest = Date.parse(newestAt);
  if (Number.isNaN(at) || Number.isNaN(newest) || newest - at < SAME_READING_MS) return null;
  return shortAge(at, now, locale);
}
