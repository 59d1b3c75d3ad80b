import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sessionOptions } from '../src/detect/onnx.ts';
import { quantizedConvModel } from './helpers/onnx-builder.ts';
import { tempDir } from './helpers/media.ts';

const CHILD = fileURLToPath(new URL('./fixtures/quantized-conv.mjs', import.meta.url));
const AGENT_DIR = fileURLToPath(new URL('..', import.meta.url));

const DEFAULTS = { executionProviders: ['cpu'], intraOpNumThreads: 1 };

// x86 CPUs without VNNI cannot be had on demand, so valgrind stands in for one: it runs this machine's x86 code but
// offers no AVX-512 or VNNI, and onnxruntime then picks its AVX2 kernels (as on such a CPU). One process for all runs.
function runUnderValgrind(runs: [model: string, options: object][]): number[][] {
  const result = spawnSync('valgrind', ['--tool=none', '-q', process.execPath, CHILD, JSON.stringify(runs)], { cwd: AGENT_DIR, encoding: 'utf8', timeout: 180_000 });
  if (result.error) throw new Error(`valgrind could not run (scripts/install.sh --test installs it): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`onnxruntime under valgrind failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as number[][];
}

// What broke: on such CPUs the 8-bit whole-frame model saw bees along a bright hive wall, because onnxruntime's
// unsigned × signed kernel adds two products in 16 bits, and 255 × 127 twice does not fit.
describe('8-bit models on x86 without VNNI', () => {
  const dir = tempDir('x86-overflow');
  afterAll(() => dir.cleanup());

  it('are exact with the agent\'s session options, and with 7-bit weights (qdq.py --weight-bits 7) with any', () => {
    const eightBit = join(dir.path, 'eight-bit.onnx');
    const sevenBit = join(dir.path, 'seven-bit.onnx');
    writeFileSync(eightBit, quantizedConvModel(127));
    writeFileSync(sevenBit, quantizedConvModel(63));
    // The options the agent picks on such a CPU (valgrind does not hide this machine's /proc/cpuinfo).
    const agentOptions = sessionOptions(1, { arch: 'x64', flags: new Set(['sse4_1', 'avx', 'avx2', 'fma']) });
    const [plain, agent, seven] = runUnderValgrind([[eightBit, DEFAULTS], [eightBit, agentOptions], [sevenBit, DEFAULTS]]);
    // The emulated CPU must show the overflow, or this test proves nothing.
    expect(plain?.[0], 'onnxruntime under valgrind no longer overflows: the emulated CPU has changed').toBeLessThan(12);
    expect(agent).toEqual([16]);
    expect(seven).toEqual([16]);
  }, 240_000);
});
