import { describe, expect, it } from 'vitest';
import { asSentence, boxName, formatBytes, formatCount, formatCountOf, formatDate, formatDateTime, formatNumber, formatRelative, formatTimeTick, formatUtcDay, hiveName } from './format.ts';

describe('formatCountOf', () => {
  // A day with one bee read "1 trajectories · 1 points · busiest spot 1 passes".
  it('gives the noun its number', () => {
    expect(formatCountOf(1, 'trajectory', 'trajectories')).toBe('1 trajectory');
    expect(formatCountOf(0, 'point')).toBe('0 points');
    expect(formatCountOf(1234, 'pass', 'passes')).toBe('1,234 passes');
  });
});

describe('names and messages', () => {
  // "Hive Hive 3/Nord" repeated the word when the id begins with it.
  it('say "Hive" and "Box" once', () => {
    expect(hiveName('3/Nord')).toBe('Hive 3/Nord');
    expect(hiveName('Hive 3/Nord')).toBe('Hive 3/Nord');
    expect(hiveName('hive-7')).toBe('hive-7');
    expect(hiveName('Hives-garden')).toBe('Hive Hives-garden');
    expect(boxName('Box 2')).toBe('Box 2');
    expect(boxName('gate-1')).toBe('Box gate-1');
  });

  // The server's "login or password is wrong" was shown as it came, in lower case without a full stop.
  it('make a sentence of a server message', () => {
    expect(asSentence('login or password is wrong')).toBe('Login or password is wrong.');
    expect(asSentence('Try again.')).toBe('Try again.');
    expect(asSentence('')).toBe('');
  });
});

describe('numbers and times', () => {
  // They followed the browser's locale on an English page: "In 9.839", "34,8 °C", "vor 1 Minute", "27. Nov. 2026".
  // (Node's default locale here is en-US, so US forms such as "Nov 27, 2026, 12:57 PM" would fail these too.)
  it('are written in English with a 24-hour clock, whatever the default locale', () => {
    expect(formatCount(9839)).toBe('9,839');
    expect(formatCount(-1234, true)).toBe('−1,234');
    expect(formatNumber(34.8)).toBe('34.8');
    expect(formatNumber(1234.56, 2)).toBe('1,234.56');
    expect(formatBytes(1_500_000)).toBe('1.5 MB');
    const afternoon = new Date(2026, 10, 27, 12, 57);
    expect(formatDateTime(afternoon)).toBe('27 Nov 2026, 12:57');
    expect(formatDateTime(new Date(2026, 10, 27, 18, 5))).toBe('27 Nov 2026, 18:05');
    expect(formatDate(afternoon)).toBe('27 Nov 2026');
    expect(formatUtcDay('2026-11-27')).toMatch(/^Fri,? 27 Nov 2026$/);
    expect(formatTimeTick(new Date(2026, 10, 27, 18, 0).getTime(), 3_600_000)).toBe('18:00');
    expect(formatTimeTick(new Date(2026, 10, 27).getTime(), 3_600_000)).toBe('27 Nov');
    const now = afternoon.getTime();
    expect(formatRelative(now - 60_000, now)).toBe('1 minute ago');
    expect(formatRelative(now - 86_400_000, now)).toBe('yesterday');
    expect(formatRelative(now + 2 * 3_600_000, now)).toBe('in 2 hours');
  });
});
