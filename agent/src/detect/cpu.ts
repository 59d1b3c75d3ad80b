import { readFileSync } from 'node:fs';

/** What decides how onnxruntime adds 8-bit products on this CPU: its architecture and, where known, its flags. */
export interface CpuFeatures {
  arch: string;
  /** The `flags` of /proc/cpuinfo; undefined where they cannot be read (not Linux). */
  flags: ReadonlySet<string> | undefined;
}

/**
 * Whether onnxruntime's fast kernel for uint8 activations times int8 weights can overflow here. On x86 without VNNI
 * it multiplies byte pairs with `pmaddubsw`, which adds two products in 16 bits: 2 × 255 × 127 does not fit. VNNI's
 * dot products add in 32 bits, and onnxruntime names no Arm CPU among those with the overflow. An x86 CPU whose flags
 * are unknown is taken to overflow: being slower there beats seeing bees that are not there.
 */
export function int8KernelsOverflow(cpu: CpuFeatures): boolean {
  if (cpu.arch !== 'x64' && cpu.arch !== 'ia32') return false;
  if (!cpu.flags) return true;
  return !cpu.flags.has('avx512_vnni') && !cpu.flags.has('avx_vnni');
}

/** For the start-up log where it matters: why 8-bit models run slower on this CPU than on one with VNNI. */
export function int8KernelNote(cpu: CpuFeatures): string | undefined {
  if (!int8KernelsOverflow(cpu)) return undefined;
  const why = cpu.flags ? 'this x86 CPU has no VNNI' : 'the flags of this x86 CPU are unknown';
  return `8-bit models run on onnxruntime's exact kernel, slower than its fast one, which overflows where ${why}`;
}

/** The operators of ONNX's 8-bit formats (QDQ, QOperator and integer ops): a model naming any of them runs 8-bit kernels. */
const EIGHT_BIT_OPERATORS = ['QuantizeLinear', 'DequantizeLinear', 'QLinearConv', 'QLinearMatMul', 'ConvInteger', 'MatMulInteger'];

/**
 * Whether a serialised ONNX model uses 8-bit operators. Operator types are stored as plain strings in the protobuf,
 * so finding one among the bytes is enough; a float model names none of them.
 */
export function namesEightBitOperators(model: Uint8Array): boolean {
  const bytes = Buffer.from(model.buffer, model.byteOffset, model.byteLength);
  return EIGHT_BIT_OPERATORS.some((op) => bytes.includes(op));
}

/** The flags line of /proc/cpuinfo's first processor, as a set. */
export function parseCpuFlags(cpuinfo: string): ReadonlySet<string> | undefined {
  const line = cpuinfo.split('\n').find((l) => /^flags\s*:/.test(l));
  return line ? new Set(line.slice(line.indexOf(':') + 1).trim().split(/\s+/)) : undefined;
}

let host: CpuFeatures | undefined;

/** This machine's CPU, read once. */
export function hostCpu(): CpuFeatures {
  if (!host) {
    let flags: ReadonlySet<string> | undefined;
    try {
      flags = parseCpuFlags(readFileSync('/proc/cpuinfo', 'utf8'));
    } catch {
      flags = undefined;
    }
    host = { arch: process.arch, flags };
  }
  return host;
}
