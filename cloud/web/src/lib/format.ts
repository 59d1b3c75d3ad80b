/** How numbers, instants and sizes read on screen: in English, as the page is written, in the viewer's time zone. */

/**
 * The locale of every number, date and relative time. The page is English (`<html lang="en">`): the browser's own
 * locale made a German browser show "In 9.839" and "vor 1 Minute", which a screen reader voicing English read as
 * "nine point eight three nine". British English, for its 24-hour clock (hives are checked at 06:00 and 18:00, not
 * "6 AM") and its day-month order, which readers outside the US take the same way; the time zone stays the browser's.
 */
export const LOCALE = 'en-GB';

export function formatNumber(value: number | null | undefined, decimals = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString(LOCALE, { minimumFractionDigits: 0, maximumFractionDigits: decimals });
}

/** A count of bees: whole numbers, with a sign when asked (net flow). */
export function formatCount(value: number | null | undefined, signed = false): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const rounded = Math.round(value);
  const text = Math.abs(rounded).toLocaleString(LOCALE);
  if (!signed || rounded === 0) return rounded < 0 ? `−${text}` : text;
  return rounded > 0 ? `+${text}` : `−${text}`;
}

/** "1 trajectory", "1,234 trajectories": a count with its noun ("1 trajectories" read badly). */
export function formatCountOf(value: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(value)} ${Math.round(value) === 1 ? singular : plural}`;
}

export function formatDateTime(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '—';
  return date.toLocaleString(LOCALE, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * The time zone the page's times are in, as the browser names it ("Europe/Vienna"): charts and clips are in local
 * time while heatmaps are UTC days, and nothing said which was which.
 */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export function formatDate(value: string | number | Date): string {
  const date = new Date(value);
  return date.toLocaleDateString(LOCALE, { year: 'numeric', month: 'short', day: 'numeric' });
}

/** A UTC calendar date (YYYY-MM-DD, as heatmaps are keyed) in words, without shifting it into the local zone. */
export function formatUtcDay(day: string): string {
  const date = new Date(`${day}T12:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return date.toLocaleDateString(LOCALE, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
];

/** "5 minutes ago", "just now", "in 2 hours". */
export function formatRelative(value: string | number | Date | null | undefined, now = Date.now()): string {
  if (value === null || value === undefined) return 'never';
  const time = new Date(value).getTime();
  if (Number.isNaN(time)) return 'never';
  const seconds = (time - now) / 1000;
  if (Math.abs(seconds) < 45) return 'just now';
  const format = new Intl.RelativeTimeFormat(LOCALE, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size * 0.9 || unit === 'minute') return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toLocaleString(LOCALE, { maximumFractionDigits: unit === 0 ? 0 : 1 })} ${units[unit]}`;
}

/** 75 → "1:15", 3725 → "1:02:05". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '—';
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** An axis label for a time tick: clock time within a day, the date at midnight and for day-sized steps. */
export function formatTimeTick(t: number, stepMs: number): string {
  const date = new Date(t);
  const midnight = date.getHours() === 0 && date.getMinutes() === 0;
  if (stepMs >= 86_400_000 || midnight) return date.toLocaleDateString(LOCALE, { month: 'short', day: 'numeric' });
  return date.toLocaleTimeString(LOCALE, { hour: '2-digit', minute: '2-digit' });
}

/** "Hive 3", but "Hive 3/Nord" for a hive whose id already says so ("Hive Hive 3/Nord" repeated the word). */
export function hiveName(id: string): string {
  return /^hive\b/i.test(id) ? id : `Hive ${id}`;
}

/** "Box 7", but "Box 7/Süd" for a box whose id already says so. */
export function boxName(id: string): string {
  return /^box\b/i.test(id) ? id : `Box ${id}`;
}

/**
 * A server's message as a sentence: it answers in lower case without a full stop ("login or password is wrong"),
 * which read as raw machine text on the page.
 */
export function asSentence(message: string): string {
  const text = message.trim();
  if (text === '') return text;
  const capital = text[0]!.toUpperCase() + text.slice(1);
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`;
}
