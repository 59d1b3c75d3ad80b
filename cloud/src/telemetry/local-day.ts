/**
 * Calendar days in a beekeeper's own time zone. "Today's" counts that reset at midnight UTC reset in the middle of the
 * afternoon's flight in the Americas and in the morning in Asia, so the day is taken where the user is. The bounds are
 * computed here, not with the database's `AT TIME ZONE`, so that the embedded database needs no zone data of its own.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `name` is a time zone this server knows (an IANA name such as "Europe/Vienna", or "UTC"). */
export function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/** The calendar date (YYYY-MM-DD) in `timeZone` at instant `ms`. */
function dateAt(timeZone: string, ms: number): string {
  const fields: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(ms)) fields[part.type] = part.value;
  return `${fields.year!.padStart(4, '0')}-${fields.month}-${fields.day}`;
}

/** The calendar date (YYYY-MM-DD) in `timeZone` at `at`. */
export function dateIn(timeZone: string, at: Date = new Date()): string {
  return dateAt(timeZone, at.getTime());
}

/**
 * The first instant whose date in `timeZone` is `date` or later. Searched for rather than computed from an offset, so
 * that a day whose midnight the clocks skip (Havana goes from 23:59:59 to 01:00) starts when it really does. Offsets
 * lie within −12 h and +14 h, and change on whole seconds.
 */
function startOfDay(timeZone: string, date: string): number {
  const midnightUtc = Date.parse(`${date}T00:00:00Z`) / 1000;
  let before = midnightUtc - 15 * 3600; // still the day before everywhere
  let after = midnightUtc + 13 * 3600; // already this day everywhere
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (dateAt(timeZone, middle * 1000) >= date) after = middle;
    else before = middle;
  }
  return after * 1000;
}

/** The instants [from, to) of calendar day `date` (YYYY-MM-DD) in `timeZone`: 23, 24 or 25 hours as the clocks go. */
export function dayBounds(date: string, timeZone: string): { from: Date; to: Date } {
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return { from: new Date(startOfDay(timeZone, date)), to: new Date(startOfDay(timeZone, next)) };
}
