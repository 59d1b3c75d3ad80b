import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPython } from '@hivegate/simulator';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeModel, floatTensor, int64Tensor, int8Initializers, node, valueInfo } from './helpers/onnx-builder.ts';
import { tempDir } from './helpers/media.ts';

const QDQ = fileURLToPath(new URL('../tools/qdq.py', import.meta.url));

interface HeadsOptions {
  channels?: number;
  firstStride?: number;
  shuffleMode?: string;
  sizeActivation?: string;
  heatmapStep?: number;
  outputs?: readonly string[];
}

/**
 * A small graph shaped like train-detector's export: a 3×3 stride-2 convolution over `channels` input planes, a
 * ReLU, a 1×1 convolution to 28 planes, a pixel shuffle, and the four outputs as channel slices of it (the heatmap
 * through a sigmoid, the size through a ReLU). Each option breaks one thing qdq.py relies on.
 */
function headsModel(options: HeadsOptions = {}): Uint8Array {
  const { channels = 6, firstStride = 2, shuffleMode = 'CRD', sizeActivation = 'Relu', heatmapStep = 1, outputs = ['heatmap', 'size', 'offset', 'movement'] } = options;
  const weights = (count: number) => Array.from({ length: count }, (_, i) => Math.sin(i + 1) / 4);
  const slice = (name: string, start: number, end: number, step = 1) => [
    int64Tensor(`${name}Start`, [start]),
    int64Tensor(`${name}End`, [end]),
    int64Tensor(`${name}Step`, [step]),
  ];
  const planes: Record<string, [number, number, string | undefined]> = { heatmap: [0, 1, 'Sigmoid'], size: [1, 3, sizeActivation], offset: [3, 5, undefined], movement: [5, 7, undefined] };
  const outputNodes = outputs.flatMap((name) => {
    const [, , activation] = planes[name]!;
    const sliced = activation ? `${name}Planes` : name;
    return [
      node('Slice', ['shuffled', `${name}Start`, `${name}End`, 'channelAxis', `${name}Step`], [sliced]),
      ...(activation ? [node(activation, [sliced], [name])] : []),
    ];
  });
  return encodeModel({
    inputs: [valueInfo('images', [1, channels, 16, 16])],
    // The shuffle doubles the first convolution's resolution.
    outputs: outputs.map((name) => valueInfo(name, [1, planes[name]![1] - planes[name]![0], 32 / firstStride, 32 / firstStride])),
    initializers: [
      floatTensor('w0', [8, channels, 3, 3], weights(8 * channels * 9)),
      floatTensor('b0', [8], weights(8)),
      floatTensor('w1', [28, 8, 1, 1], weights(28 * 8)),
      floatTensor('b1', [28], weights(28)),
      int64Tensor('channelAxis', [1]),
      ...outputs.flatMap((name) => slice(name, planes[name]![0], planes[name]![1], name === 'heatmap' ? heatmapStep : 1)),
    ],
    nodes: [
      node('Conv', ['images', 'w0', 'b0'], ['features'], { kernel_shape: [3, 3], strides: [firstStride, firstStride], pads: [1, 1, 1, 1] }),
      node('Relu', ['features'], ['activated']),
      node('Conv', ['activated', 'w1', 'b1'], ['last'], { kernel_shape: [1, 1] }),
      node('DepthToSpace', ['last'], ['shuffled'], { blocksize: 2, mode: shuffleMode }),
      ...outputNodes,
    ],
  });
}

// qdq.py rewrites graphs of one known shape; anything else must be refused with a reason and no file written.
describe('qdq.py quantize', () => {
  const dir = tempDir('qdq');
  afterAll(() => dir.cleanup());
  const python = findPython(['onnx', 'numpy']);
  let made = 0;

  const quantize = (model: Uint8Array, flags: string[] = []) => {
    made++;
    const modelPath = join(dir.path, `model-${made}.onnx`);
    const rangesPath = join(dir.path, `ranges-${made}.json`);
    const out = join(dir.path, `int8-${made}.onnx`);
    writeFileSync(modelPath, model);
    // The one activation a convolution reads besides the input: the ReLU's output.
    writeFileSync(rangesPath, JSON.stringify({ activated: [0, 2] }));
    const result = spawnSync(python, [QDQ, 'quantize', modelPath, rangesPath, out, ...flags], { encoding: 'utf8' });
    return { status: result.status, stderr: result.stderr, out };
  };

  it('rewrites a graph of the shape it knows into bytes in 2x2 blocks and one heads output', async () => {
    const { status, stderr, out } = quantize(headsModel());
    expect(stderr).toContain('2 convolutions quantized');
    expect(status).toBe(0);
    const session = await ort.InferenceSession.create(out);
    expect(session.inputMetadata[0]).toMatchObject({ type: 'uint8', shape: [1, 8, 8, 24] });
    expect(session.outputMetadata).toMatchObject([{ name: 'heads', shape: [1, 28, 8, 8] }]);
    const { heads } = await session.run({ images: new ort.Tensor('uint8', new Uint8Array(8 * 8 * 24).fill(128), [1, 8, 8, 24]) });
    expect(heads!.dims).toEqual([1, 28, 8, 8]);
    await session.release();
  });

  it('writes weights within ±127, or within ±63 (what no x86 integer kernel overflows) when told 7 bits', () => {
    const largest = (file: string) => Math.max(...[...int8Initializers(readFileSync(file)).values()].flatMap((w) => Array.from(w, Math.abs)));
    const eight = quantize(headsModel());
    expect(eight.status).toBe(0);
    // Each output channel's largest weight takes the top step.
    expect(largest(eight.out)).toBe(127);
    const seven = quantize(headsModel(), ['--weight-bits', '7']);
    expect(seven.status).toBe(0);
    expect(largest(seven.out)).toBe(63);
    const refused = quantize(headsModel(), ['--weight-bits', '4']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('--weight-bits takes 7 or 8, got 4');
    expect(existsSync(refused.out)).toBe(false);
  });

  it.each([
    ['a first convolution of stride 1', { firstStride: 1 }, 'the first convolution must be 3x3 with stride 2 and padding 1 to read 2x2 blocks'],
    ['four input planes', { channels: 4 }, 'the first convolution must read RGB frames (a multiple of 3 channels), got 4'],
    ['a missing output', { outputs: ['heatmap', 'size', 'offset'] }, 'the outputs must be heatmap, size, offset, movement to become one heads output'],
    ['a size through a sigmoid', { sizeActivation: 'Sigmoid' }, 'output size must come from a Relu'],
    ['a heatmap slice with a step', { heatmapStep: 2 }, 'output heatmap must be channels 0..1 of the shuffled last convolution'],
    ['a shuffle in DCR order', { shuffleMode: 'DCR' }, 'must come from one DepthToSpace (CRD, block 2)'],
  ] as const)('refuses %s, saying why, and writes nothing', (_case, options, reason) => {
    const { status, stderr, out } = quantize(headsModel(options));
    expect(status).not.toBe(0);
    expect(stderr).toContain(reason);
    expect(existsSync(out)).toBe(false);
  });
});
