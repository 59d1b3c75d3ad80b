import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { splitRun } from '../bench/endurance.ts';
import { tempDir } from './helpers/media.ts';

const exec = promisify(execFile);
const agentRoot = fileURLToPath(new URL('..', import.meta.url));

describe('bench:endurance', () => {
  it('cuts a run into parts of equal frames, timed between the status files around each boundary', () => {
    // 100 frames/s for the first 2 s, then 50 frames/s; RSS grows in the second half.
    const samples = [
      { t: 0, frames: 0 },
      { t: 1000, frames: 100, rssMb: 200 },
      { t: 2000, frames: 200, rssMb: 201 },
      { t: 4000, frames: 300, rssMb: 240 },
      { t: 6000, frames: 400, rssMb: 250 },
    ];
    const parts = splitRun(samples, 400, 4);
    expect(parts.map((p) => [p.fromFrame, p.toFrame])).toEqual([[0, 100], [100, 200], [200, 300], [300, 400]]);
    expect(parts.map((p) => p.fps)).toEqual([100, 100, 50, 50]);
    expect(parts.map((p) => p.rssMb)).toEqual([200, 201, 240, 250].map((mb) => ({ lowest: mb, highest: mb })));
    expect(splitRun(samples, 400, 2).map((p) => p.rssMb)).toEqual([{ lowest: 200, highest: 201 }, { lowest: 240, highest: 250 }]);
    // A boundary between two status files takes the time in proportion: frame 150 at 1.5 s, so the first of two halves ran 150 frames in 1.5 s.
    expect(splitRun(samples, 300, 2).map((p) => p.fps)).toEqual([100, 60]);
  });

  const cache = tempDir('bench-endurance');
  afterAll(() => cache.cleanup());

  // The real agent process on a 10 s clip against the cloud on its embedded database: every row the record needs,
  // and what the cloud stored equals what the agent counted. (In a clone without the web app built, the cloud's
  // warning about it came first in the output.)
  it('runs the agent against the cloud and prints each part, the ratios and what arrived', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'bench/endurance.ts', '--seconds', '10', '--parts', '2', '--cache', cache.path], { cwd: agentRoot });
    expect(stdout).toMatch(/^clip: simulator scenario busy-afternoon, 640x480 @ 30 fps, 10 s \(300 frames\); \d+ in, \d+ out\n/);
    expect(stdout).toMatch(/^300 frames in \d+\.\d s \(\d+\.\d frames\/s, start included\); \d+ status files read$/m);
    expect(stdout).toMatch(/^ {3}1 {2}0–5 +\d+\.\d {2}(\d+–\d+|–)$/m);
    expect(stdout).toMatch(/^ {3}2 {2}5–10 +\d+\.\d {2}\d+–\d+$/m);
    expect(stdout).toMatch(/^frames\/s, last part \/ the first: \d+\.\d\d$/m);
    expect(stdout).toMatch(/^RSS, last part \/ the first: (lowest \d+\.\d\d, highest \d+\.\d\d|– .*)$/m);
    expect(stdout).toMatch(/^peak RSS \d+ MB/m);
    expect(stdout).toMatch(/^the agent (logged nothing but its start and its stop|also logged \d+ line\(s\):)$/m);
    const arrived = /counted by the agent: in (\d+), out (\d+) \(true \d+, \d+\); 0 records left queued; stored in the cloud: in (\d+), out (\d+) in 1 intervals \(1 expected\)/.exec(stdout);
    expect(arrived).not.toBeNull();
    expect([arrived![3], arrived![4]]).toEqual([arrived![1], arrived![2]]);
  }, 120_000);

  // The same with the clip played as a network camera in real time: the agent's live path, stopped by SIGTERM.
  it('--live runs the agent on the clip played as a camera, stops it, and what it counted arrived', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'bench/endurance.ts', '--seconds', '10', '--parts', '2', '--live', '--cache', cache.path], { cwd: agentRoot });
    expect(stdout).toContain('on the clip played as a network camera in real time');
    // Real time: about 30 frames/s, and the camera's 300 frames less the seconds before the agent joined (more on a
    // busy machine, where the agent takes longer to load its models).
    const run = /^(\d+) frames in (\d+\.\d) s \((\d+\.\d) frames\/s, start included, (\d+) dropped by the capture\)/m.exec(stdout);
    expect(run).not.toBeNull();
    expect(Number(run![1])).toBeGreaterThan(90);
    expect(Number(run![1])).toBeLessThanOrEqual(300);
    expect(Number(run![3])).toBeLessThan(40);
    // What was counted arrived, but for the interval still open at the stop, which the agent saved for its next start.
    const arrived = /counted by the agent: in (\d+), out (\d+) .*; 0 records left queued; stored in the cloud: in (\d+), out (\d+) in \d+ intervals; saved for the agent's next start: in (\d+), out (\d+)$/m.exec(stdout);
    expect(arrived).not.toBeNull();
    const [countedIn, countedOut, storedIn, storedOut, savedIn, savedOut] = arrived!.slice(1).map(Number);
    expect([storedIn! + savedIn!, storedOut! + savedOut!]).toEqual([countedIn, countedOut]);
  }, 120_000);
});
