import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPython } from '@hivegate/simulator';
import { createCapture } from '../src/agent.ts';
import type { AgentConfig } from '../src/config/config.ts';
import { OnnxDetector, type InputRegion } from '../src/detect/onnx.ts';

const QDQ = fileURLToPath(new URL('./qdq.py', import.meta.url));

function runQdq(python: string, args: string[]): string {
  const result = spawnSync(python, [QDQ, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) throw new Error(`qdq.py ${args[0]} failed: ${result.error?.message ?? result.stderr.trim()}`);
  return result.stdout;
}

/**
 * The lowest and highest value each named tensor took in each recorded frame. A tensor's range is then a percentile
 * of those: the 99th of the per-frame highs keeps a rare outlier frame from coarsening every other frame's steps.
 */
export class RangeRecorder {
  private readonly lows = new Map<string, number[]>();
  private readonly highs = new Map<string, number[]>();
  frames = 0;

  constructor(private readonly names: readonly string[]) {}

  record(outputs: Readonly<Record<string, { data: unknown }>>): void {
    this.frames++;
    for (const name of this.names) {
      const tensor = outputs[name];
      if (!tensor) throw new Error(`the calibrated model has no output "${name}"`);
      const data = tensor.data as Float32Array;
      let low = Infinity;
      let high = -Infinity;
      for (let i = 0; i < data.length; i++) {
        const v = data[i]!;
        if (v < low) low = v;
        if (v > high) high = v;
      }
      push(this.lows, name, low);
      push(this.highs, name, high);
    }
  }

  /** Per tensor: [low, high], the `percentile`th of the per-frame highs and its mirror of the lows (100: extremes). */
  ranges(percentile: number): Record<string, [number, number]> {
    const ranges: Record<string, [number, number]> = {};
    for (const name of this.names) {
      const lows = [...(this.lows.get(name) ?? [])].sort((a, b) => a - b);
      const highs = [...(this.highs.get(name) ?? [])].sort((a, b) => a - b);
      if (highs.length === 0) throw new Error('no frames were recorded');
      const rank = (n: number, p: number) => Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1));
      const mirrored = highs.length - 1 - rank(highs.length, percentile);
      ranges[name] = [lows[mirrored]!, highs[rank(highs.length, percentile)]!];
    }
    return ranges;
  }
}

function push(map: Map<string, number[]>, name: string, value: number): void {
  const list = map.get(name);
  if (list) list.push(value);
  else map.set(name, [value]);
}

export interface CalibrationClip {
  /** Names the clip in progress lines. */
  label: string;
  /** The agent's configuration for the clip (source, zone, bee size). */
  config: AgentConfig;
  /** Where in the frame the model looks (the slot pass's band); the whole frame when absent. */
  region?: (frameWidth: number, frameHeight: number) => InputRegion;
}

export interface QuantizeOptions {
  model: string;
  out: string;
  clips: readonly CalibrationClip[];
  /** Record ranges on every nth frame (the model still sees every frame: it pairs each with the one before). */
  every?: number;
  /** Which percentile of the per-frame extremes bounds each tensor (default 99; 100: the extremes). */
  percentile?: number;
  /** Bits per weight: 8 (the default), or 7, which no x86 integer kernel can overflow (see qdq.py). */
  weightBits?: 7 | 8;
  /** Write the calibrated ranges here (JSON: tensor name -> [low, high]). */
  saveRanges?: string;
  /** Take the ranges from this file (written by `saveRanges`) instead of calibrating: `clips` are not run. */
  ranges?: string;
  python?: string;
  progress?: (line: string) => void;
}

/**
 * Runs the float model over the clips as the agent would (its capture, its input code, its frame pairing),
 * records the range of every tensor that gets quantized, and writes the 8-bit model (`qdq.py`).
 */
export async function quantizeDetector(options: QuantizeOptions): Promise<{ tensors: number; frames: number }> {
  const python = findPython(['onnx', 'numpy'], options.python);
  const work = mkdtempSync(join(tmpdir(), 'hivegate-quantize-'));
  try {
    const exposed = join(work, 'exposed.onnx');
    const names = JSON.parse(runQdq(python, ['expose', options.model, exposed])) as string[];
    let rangesFile: string;
    let frames = 0;
    if (options.ranges) {
      const ranges = JSON.parse(readFileSync(options.ranges, 'utf8')) as Record<string, unknown>;
      const missing = names.filter((name) => !(name in ranges));
      if (missing.length > 0) throw new Error(`${options.ranges} has no range for ${missing.join(', ')}: it was calibrated for another model`);
      rangesFile = options.ranges;
    } else {
      const recorder = await calibrate(exposed, names, options);
      frames = recorder.frames;
      const ranges = JSON.stringify(recorder.ranges(options.percentile ?? 99));
      rangesFile = join(work, 'ranges.json');
      writeFileSync(rangesFile, ranges);
      if (options.saveRanges) writeFileSync(options.saveRanges, ranges);
    }
    runQdq(python, ['quantize', options.model, rangesFile, options.out, '--weight-bits', String(options.weightBits ?? 8)]);
    return { tensors: names.length, frames };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs the exposed float model over the clips and records every quantized tensor's range. */
async function calibrate(exposed: string, names: readonly string[], options: QuantizeOptions): Promise<RangeRecorder> {
  const every = options.every ?? 1;
  const recorder = new RangeRecorder(names);
  for (const clip of options.clips) {
    let frame = 0;
    const observe = (outputs: Readonly<Record<string, { data: unknown }>>) => {
      if (frame++ % every === 0) recorder.record(outputs);
    };
    const detector = await OnnxDetector.load(exposed, { threads: 1, observe, ...(clip.region ? { region: clip.region } : {}) });
    const capture = createCapture(clip.config);
    try {
      await capture.start();
      for await (const picture of capture) await detector.detect(picture);
    } finally {
      await capture.stop();
      await detector.release();
    }
    options.progress?.(`${clip.label}: ${frame} frames`);
  }
  return recorder;
}
