import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/media.ts';

const exec = promisify(execFile);
const agentRoot = fileURLToPath(new URL('..', import.meta.url));

// `pnpm bench:agent` on a one-second clip, one round: it renders its clip, runs each pipeline in a process of its
// own and prints every row the benchmark's record needs. The numbers themselves are for docs/benchmarks.md.
describe('bench:agent', () => {
  const cache = tempDir('bench-agent');
  afterAll(() => cache.cleanup());

  it('prints the baseline, each pipeline with its ratio to it and its own peak RSS, and the detectors in turn', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'bench/pipeline.ts', '--seconds', '1', '--rounds', '1', '--cache', cache.path], { cwd: agentRoot });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^clip: simulator scenario busy-afternoon, 640x480 @ 30 fps, 1 s \(30 frames\); \d+ true crossings; 1 round\(s\)/);
    expect(stdout).toMatch(/ffmpeg decode only: +\d+\.\d frames\/s/);
    const rows = lines.filter((line) => line.startsWith('full pipeline,'));
    expect(rows.map((row) => row.split(':')[0]!.trim())).toEqual(['full pipeline, shipped model', 'full pipeline, motion detector']);
    for (const row of rows) expect(row).toMatch(/\d+\.\d frames\/s .*ratio to decode \d\.\d\d .*peak RSS \d+ MB/);
    // The shipped model is the agent's default detector: the 8-bit pair with the slot pass.
    expect(rows[0]).toContain('bee-centernet-int8.onnx), slot pass ×2');
    expect(stdout).toMatch(/detectors alone, in turn frame by frame on the first 30 frames, median of 6 passes:\n +shipped model: +\d+\.\d\d ms\/frame/);
  }, 120_000);
});
