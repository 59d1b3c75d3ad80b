import { describe, expect, it } from 'vitest';
import { int8KernelNote, int8KernelsOverflow, namesEightBitOperators, parseCpuFlags } from './cpu.ts';

const x86 = (...flags: string[]) => ({ arch: 'x64', flags: new Set(flags) });

describe('int8KernelsOverflow', () => {
  it('is true on x86 without VNNI, whose fast kernel adds two products in 16 bits', () => {
    expect(int8KernelsOverflow(x86('sse4_1', 'avx2', 'fma'))).toBe(true);
    expect(int8KernelsOverflow(x86('avx2', 'avx512f', 'avx512bw'))).toBe(true);
    expect(int8KernelsOverflow(x86('sse4_1'))).toBe(true);
  });

  it('is false with either VNNI, and on Arm', () => {
    expect(int8KernelsOverflow(x86('avx2', 'avx512f', 'avx512_vnni'))).toBe(false);
    expect(int8KernelsOverflow(x86('avx2', 'avx_vnni'))).toBe(false);
    expect(int8KernelsOverflow({ arch: 'arm64', flags: new Set(['fp', 'asimd', 'asimddp']) })).toBe(false);
    expect(int8KernelsOverflow({ arch: 'arm64', flags: undefined })).toBe(false);
  });

  it('takes an x86 CPU whose flags are unknown to overflow', () => {
    expect(int8KernelsOverflow({ arch: 'x64', flags: undefined })).toBe(true);
  });
});

describe('parseCpuFlags', () => {
  it('reads the first flags line of /proc/cpuinfo', () => {
    const cpuinfo = 'processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse4_1 avx2 avx512_vnni\n\nprocessor\t: 1\nflags\t\t: fpu\n';
    expect(parseCpuFlags(cpuinfo)).toEqual(new Set(['fpu', 'sse4_1', 'avx2', 'avx512_vnni']));
  });

  it('gives undefined when there is no flags line (Arm names them Features)', () => {
    expect(parseCpuFlags('processor\t: 0\nFeatures\t: fp asimd\n')).toBeUndefined();
    expect(parseCpuFlags('')).toBeUndefined();
  });
});

describe('int8KernelNote', () => {
  it('explains the slower kernel where it is taken, and says nothing elsewhere', () => {
    expect(int8KernelNote(x86('avx2'))).toBe("8-bit models run on onnxruntime's exact kernel, slower than its fast one, which overflows where this x86 CPU has no VNNI");
    expect(int8KernelNote({ arch: 'x64', flags: undefined })).toMatch(/where the flags of this x86 CPU are unknown$/);
    expect(int8KernelNote(x86('avx2', 'avx_vnni'))).toBeUndefined();
    expect(int8KernelNote({ arch: 'arm64', flags: undefined })).toBeUndefined();
  });
});

describe('namesEightBitOperators', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  it('finds the operators of the QDQ, QOperator and integer formats among the bytes', () => {
    for (const op of ['DequantizeLinear', 'QuantizeLinear', 'QLinearConv', 'QLinearMatMul', 'ConvInteger', 'MatMulInteger']) {
      expect(namesEightBitOperators(bytes(`\u0008\u0001${op}\u0012`))).toBe(true);
    }
  });
  it('finds none in a float graph', () => {
    expect(namesEightBitOperators(bytes('Conv Relu Resize Sigmoid Concat DepthToSpace'))).toBe(false);
    expect(namesEightBitOperators(new Uint8Array(0))).toBe(false);
  });
  it('reads a view into a larger buffer only within the view', () => {
    const whole = bytes('QLinearConv Conv');
    expect(namesEightBitOperators(whole.subarray(12))).toBe(false);
  });
});
