import { describe, expect, it } from 'vitest';
import { asSentence, boxName, formatCountOf, hiveName } from './format.ts';

describe('formatCountOf', () => {
  // A day with one bee read "1 trajectories · 1 points · busiest spot 1 passes".
  it('gives the noun its number', () => {
    expect(formatCountOf(1, 'trajectory', 'trajectories')).toBe('1 trajectory');
    expect(formatCountOf(0, 'point')).toBe('0 points');
    expect(formatCountOf(1234, 'pass', 'passes')).toBe(`${(1234).toLocaleString()} passes`);
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
