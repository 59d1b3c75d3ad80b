import { describe, expect, it } from 'vitest';
import { Progress } from './progress.ts';

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, isTTY, columns: 100, write: (text: string) => writes.push(text) };
}

describe('Progress', () => {
  it('writes occasional plain lines when stderr is not a terminal', () => {
    const out = stream(false);
    let now = 0;
    const progress = new Progress('render x', 100, out, () => now);
    for (let done = 1; done <= 100; done++) {
      now += 50; // 5 s in all: at most one line a second
      progress.update(done);
    }
    progress.finish('done');
    const lines = out.writes.join('').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(lines.length).toBeLessThanOrEqual(6);
    expect(lines[0]).toMatch(/^render x: \d+% \(\d+\/100 frames\)$/);
    expect(lines.at(-1)).toBe('render x: done');
    expect(out.writes.join('')).not.toContain('\r');
  });

  it('redraws one bar in place on a terminal', () => {
    const out = stream(true);
    let now = 0;
    const progress = new Progress('render x', 10, out, () => now);
    for (let done = 1; done <= 10; done++) {
      now += 1000;
      progress.update(done);
    }
    expect(out.writes.every((text) => text.startsWith('\r'))).toBe(true);
    expect(out.writes.at(-1)).toMatch(/\[#+\] 100% 10\/10 frames, 1 fps, ETA 0 s/);
  });
});
