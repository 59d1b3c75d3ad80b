import { describe, expect, it } from 'vitest';
import { ClockStepLog, ClockStepWatch, clockStepNote } from './clock-steps.ts';

describe('ClockStepWatch', () => {
  it('reports a step of the wall clock against the monotonic one, and not drift', () => {
    const watch = new ClockStepWatch(2000);
    expect(watch.observe(1_000_000, 0)).toBe(0);
    expect(watch.observe(1_001_000, 1000)).toBe(0); // both ran a second
    expect(watch.observe(1_002_500, 2000)).toBe(0); // 0.5 s of slewing
    expect(watch.observe(4_602_500, 3000)).toBe(3_599_000); // NTP after boot: an hour forward
    expect(watch.observe(4_563_500, 4000)).toBe(-40_000); // set back by 40 s
    expect(watch.observe(4_564_500, 5000)).toBe(0);
  });
});

describe('clockStepNote', () => {
  it('says what a step forward and a step back mean for the counts', () => {
    expect(clockStepNote(3_599_000, 0)).toBe("clock: this machine's clock jumped forward by 60 min (set by time sync, or by hand); counts made before carry the old time");
    expect(clockStepNote(-40_000, Date.parse('2026-05-01T10:00:00Z'))).toBe(
      "clock: this machine's clock went back by 40 s; frame times hold until it is past 2026-05-01T10:00:40.000Z again (times never go back), so the counts of that time go to one minute",
    );
    expect(clockStepNote(5 * 3600_000 + 7 * 60_000, 0)).toContain('jumped forward by 5 h 7 min');
  });
});

describe('ClockStepLog', () => {
  it('logs a step of the clocks it is given, once, and nothing after stop', async () => {
    let wall = 1_000_000;
    let monotonic = 0;
    const lines: string[] = [];
    const clockLog = new ClockStepLog({ log: (line) => lines.push(line), intervalMs: 5, wallMs: () => wall, monotonicMs: () => monotonic });
    clockLog.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(lines).toEqual([]);
    wall += 7_200_000;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(lines).toEqual([expect.stringContaining('jumped forward by 2 h 0 min')]);
    clockLog.stop();
    wall -= 60_000;
    monotonic += 1;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(lines).toHaveLength(1);
  });
});
