import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { readTrackingOptions } from '../bench/tracking-options.ts';
import { tempDir } from './helpers/media.ts';

const exec = promisify(execFile);
const agentRoot = fileURLToPath(new URL('..', import.meta.url));
const benchTracking = (args: string[]) => exec(process.execPath, ['--import', 'tsx', 'bench/tracking.ts', ...args], { cwd: agentRoot });

const cache = tempDir('bench-tracking');
afterAll(() => cache.cleanup());

function cachedDetections(scenario: string): { file: string; frames: { timestampMs: number; dropped?: true }[] }[] {
  const [clipDir] = readdirSync(cache.path).filter((name) => name.startsWith(scenario));
  return readdirSync(join(cache.path, clipDir!))
    .filter((name) => name.startsWith('detections-'))
    .map((file) => ({ file, frames: JSON.parse(readFileSync(join(cache.path, clipDir!, file), 'utf8')) as { timestampMs: number; dropped?: true }[] }));
}

describe('bench:tracking --drop-every', () => {
  it('hides every Nth frame from the detector and scores the rest', async () => {
    const { stdout } = await benchTracking(['--scenarios', 'busy-afternoon', '--seconds', '1', '--drop-every', '3', '--cache', cache.path]);
    expect(stdout).toMatch(/\| busy-afternoon \|/);
    const frames = cachedDetections('busy-afternoon')[0]!.frames;
    expect(frames).toHaveLength(30);
    expect(frames.map((f, i) => (f.dropped ? i : -1)).filter((i) => i >= 0)).toEqual([2, 5, 8, 11, 14, 17, 20, 23, 26, 29]);
  }, 120_000);

  it('refuses a step that would drop every frame or is not a whole number', async () => {
    // Once through the command, which ends with the message and a failure code; the other values where it is read.
    await expect(benchTracking(['--drop-every', '1', '--cache', cache.path])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--drop-every takes a whole number ≥ 2, got "1"') });
    for (const bad of ['2.5', 'x']) expect(() => readTrackingOptions(['--drop-every', bad], agentRoot)).toThrow(`--drop-every takes a whole number ≥ 2, got "${bad}"`);
  }, 60_000);
});

describe('bench:tracking --fps', () => {
  it('reads the clip at the agent rate, and at the clip rate reuses what was detected without the flag', async () => {
    await benchTracking(['--scenarios', 'fanning-bees', '--seconds', '1', '--cache', cache.path]);
    await benchTracking(['--scenarios', 'fanning-bees', '--seconds', '1', '--fps', '30', '--cache', cache.path]);
    expect(cachedDetections('fanning-bees').map((c) => c.frames.length)).toEqual([30]);
    const { stdout } = await benchTracking(['--scenarios', 'fanning-bees', '--seconds', '1', '--fps', '15', '--cache', cache.path]);
    expect(stdout).toMatch(/\| fanning-bees \|/);
    const halfRate = cachedDetections('fanning-bees').find((c) => c.frames.length !== 30);
    expect(halfRate?.frames).toHaveLength(15);
    const gaps = halfRate!.frames.slice(1).map((f, i) => f.timestampMs - halfRate!.frames[i]!.timestampMs);
    for (const gap of gaps) expect(gap).toBeCloseTo(1000 / 15, 2);
  }, 120_000);

  it('refuses a rate that is not a positive number up to 240', () => {
    for (const bad of ['0', '-15', '241']) expect(() => readTrackingOptions([`--fps=${bad}`], agentRoot)).toThrow(`--fps must be a number above 0 and at most 240, got "${bad}"`);
  });
});

describe('bench:tracking --arrival-delay', () => {
  const table = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('|')).join('\n');

  it('stamps late frames as the live capture does, or at arrival with --arrival-stamps', async () => {
    const args = ['--scenarios', 'busy-afternoon', '--seconds', '3', '--cache', cache.path];
    const exact = table((await benchTracking(args)).stdout);
    // Nothing late: the stream clock gives the clip's own times back.
    const onTime = (await benchTracking([...args, '--arrival-delay', '0'])).stdout;
    expect(table(onTime)).toBe(exact);
    expect(onTime).toContain('frames up to 0 ms late, stamped by the live capture\'s stream clock: each step between two frames off by 0.00 ms on average');
    const stepError = (stdout: string) => Number(/off by ([\d.]+) ms on average/.exec(stdout)?.[1]);
    // Up to 30 ms late on 33 ms steps: at arrival the steps are off by about 10 ms, by the stream clock by little.
    expect(stepError((await benchTracking([...args, '--arrival-delay', '30', '--arrival-stamps'])).stdout)).toBeGreaterThan(5);
    expect(stepError((await benchTracking([...args, '--arrival-delay', '30'])).stdout)).toBeLessThan(1);
  }, 180_000);

  it('refuses a delay out of range, and arrival stamps without a delay', () => {
    expect(() => readTrackingOptions(['--arrival-delay=-1'], agentRoot)).toThrow('--arrival-delay takes milliseconds from 0 to 1000, got "-1"');
    expect(() => readTrackingOptions(['--arrival-stamps'], agentRoot)).toThrow('--arrival-stamps needs --arrival-delay');
  });
});
