import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionOptions } from '../src/detect/onnx.ts';
import { tempDir } from './helpers/media.ts';
import { quantizedConvModel } from './helpers/onnx-builder.ts';

const AGENT_DIR = fileURLToPath(new URL('..', import.meta.url));
const ARM64_NODE = fileURLToPath(new URL('../../scripts/arm64-node.sh', import.meta.url));
const MODEL_OUTPUTS = fileURLToPath(new URL('./fixtures/model-outputs.mjs', import.meta.url));

/** The shipped 8-bit models and an input of the size the agent gives each (busy-afternoon's slot band for the second). */
const MODELS = [
  { name: 'bee-centernet-int8.onnx', dims: [1, 120, 160, 24] },
  { name: 'bee-centernet-slot-int8.onnx', dims: [1, 88, 304, 24] },
];

/** Bytes from a fixed xorshift sequence: every value 0–255 comes up, so the wide sums are there to overflow. */
function noiseBytes(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return bytes;
}

function runNode(command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd: AGENT_DIR, encoding: 'utf8', timeout: 240_000 });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.slice(0, 3).join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

const ARM = { arch: 'arm64', flags: undefined };

// A Raspberry Pi cannot run here, so qemu stands in for its cores (scripts/arm64-node.sh, set up by
// scripts/install.sh --test): Debian's arm64 Node.js running onnxruntime-node's own arm64 binary, the one a Pi
// installs. The Pi 4's Cortex-A72 has no dot-product instructions and the Pi 5's Cortex-A76 has them, so onnxruntime
// takes a different 8-bit kernel on each. Every accuracy figure was measured on x86: this says the Pi sees the same.
describe('8-bit models on a Raspberry Pi (arm64 under qemu)', () => {
  const dir = tempDir('arm64');
  const runs = MODELS.map((model, i) => ({ ...model, model: join(AGENT_DIR, 'models', model.name), input: join(dir.path, `input-${i}.bin`) }));
  // The x86 overflow's own check (onnx-x86-overflow.test.ts): 16 channels of 255 × 127, exactly 16.
  const conv = { model: join(dir.path, 'conv.onnx'), input: join(dir.path, 'conv-input.bin'), dims: [1, 16, 1, 1] };

  beforeAll(() => {
    for (const [i, run] of runs.entries()) writeFileSync(run.input, noiseBytes(run.dims.reduce((a, b) => a * b), 1 + i));
    writeFileSync(conv.model, quantizedConvModel(127));
    writeFileSync(conv.input, new Uint8Array(16).fill(255));
    // This machine, as the agent opens models here (with onnxruntime's exact kernel where its fast one overflows).
    const host = runs.map((run, i) => ({ ...run, options: sessionOptions(1), out: join(dir.path, `host-${i}`) }));
    runNode(process.execPath, [MODEL_OUTPUTS, JSON.stringify(host)]);
  }, 60_000);
  afterAll(() => dir.cleanup());

  for (const cpu of ['cortex-a72', 'cortex-a76']) {
    it(`${cpu}: the shipped models give this machine's outputs bit for bit, and no 8-bit sum overflows`, () => {
      const arm = runs.map((run, i) => ({ ...run, options: sessionOptions(1, ARM), out: join(dir.path, `${cpu}-${i}`) }));
      const armConv = { ...conv, options: sessionOptions(1, ARM), out: join(dir.path, `${cpu}-conv`) };
      runNode('bash', [ARM64_NODE, '--cpu', cpu, MODEL_OUTPUTS, JSON.stringify([...arm, armConv])]);
      for (const [i, run] of runs.entries()) {
        const expected = new Float32Array(readFileSync(join(dir.path, `host-${i}.heads`)).buffer);
        const actual = new Float32Array(readFileSync(join(dir.path, `${cpu}-${i}.heads`)).buffer);
        expect(actual.length, run.name).toBe(expected.length);
        let differing = 0;
        for (let j = 0; j < expected.length; j++) if (actual[j] !== expected[j]) differing++;
        expect(differing, `${run.name}: outputs that differ from this machine's`).toBe(0);
      }
      const sum = readFileSync(`${armConv.out}.sum`);
      expect([...new Float32Array(sum.buffer, sum.byteOffset, sum.byteLength / 4)]).toEqual([16]);
    }, 300_000);
  }
});
