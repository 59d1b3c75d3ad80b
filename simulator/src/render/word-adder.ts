/**
 * Adds a stretch of a table of 32-bit words to a frame's words (modulo 2^32), sixteen bytes at a time in
 * WebAssembly SIMD. The sensor adds its noise to every frame this way: V8 runs the same sum written in TypeScript
 * one word at a time, at about 3 ns a word, which was a quarter of all the renderer's time.
 */

/**
 * The module, assembled by hand (it is small enough to read). In the text format:
 *
 *   (module
 *     (import "env" "memory" (memory 1))
 *     (func (export "add") (param $to i32) (param $a i32) (param $b i32) (param $bytes i32)
 *       (block $done
 *         (loop $next
 *           (br_if $done (i32.eqz (local.get $bytes)))
 *           (v128.store (local.get $to) (i32x4.add (v128.load (local.get $a)) (v128.load (local.get $b))))
 *           (local.set $to (i32.add (local.get $to) (i32.const 16)))
 *           (local.set $a (i32.add (local.get $a) (i32.const 16)))
 *           (local.set $b (i32.add (local.get $b) (i32.const 16)))
 *           (local.set $bytes (i32.sub (local.get $bytes) (i32.const 16)))
 *           (br $next)))))
 *
 * `bytes` must be a multiple of 16.
 */
const I32 = 0x7f;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  localGet: 0x20,
  localSet: 0x21,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  // SIMD instructions: the 0xfd prefix, then the instruction's number in LEB128, then (loads, stores) alignment and offset.
  v128Load: [0xfd, 0x00, 0x00, 0x00],
  v128Store: [0xfd, 0x0b, 0x00, 0x00],
  i32x4Add: [0xfd, 0xae, 0x01],
} as const;

const [TO, A, B, BYTES] = [0, 1, 2, 3];
const step = (local: number, change: number) => [op.localGet, local, op.i32Const, 16, change, op.localSet, local];

const body = [
  0x00, // no locals beyond the parameters
  ...op.block,
  ...op.loop,
  ...[op.localGet, BYTES, op.i32Eqz, op.brIf, 1],
  ...[op.localGet, TO, op.localGet, A, ...op.v128Load, op.localGet, B, ...op.v128Load, ...op.i32x4Add, ...op.v128Store],
  ...step(TO, op.i32Add),
  ...step(A, op.i32Add),
  ...step(B, op.i32Add),
  ...step(BYTES, op.i32Sub),
  ...[op.br, 0],
  op.end,
  op.end,
  op.end,
];

const section = (id: number, content: readonly number[]) => [id, ...leb128(content.length), ...content];
const name = (text: string) => [text.length, ...Buffer.from(text, 'ascii')];

function leb128(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

const MODULE = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
  ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 0]), // one type: (i32, i32, i32, i32) -> ()
  ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]), // memory imported, at least one page
  ...section(3, [1, 0]), // one function, of type 0
  ...section(7, [1, ...name('add'), 0x00, 0]), // exported as "add"
  ...section(10, [1, ...leb128(body.length), ...body]),
]);

/** The part of the runtime's WebAssembly API used here (TypeScript's Node typings declare none of it). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
let compiled: object | null | undefined;

/** The compiled module, or null where this runtime has no WebAssembly SIMD. */
function simdModule(): object | null {
  if (compiled === undefined) compiled = wasm?.validate(MODULE) ? new wasm.Module(MODULE) : null;
  return compiled;
}

/** The same sum one word at a time: where there is no WebAssembly SIMD, and for a frame's last few words. */
function addWords(table: Int32Array, tableOffset: number, source: Int32Array, target: Int32Array): void {
  for (let i = 0; i < target.length; i++) target[i] = ((source[i] as number) + (table[tableOffset + i] as number)) | 0;
}

/** The instantiated module: its function and the frame in and out in its memory. */
interface SimdKernel {
  add: (to: number, a: number, b: number, bytes: number) => void;
  sourceBytes: Uint8Array;
  targetBytes: Uint8Array;
}

/**
 * A table of words and room for one frame in and one frame out, in the module's memory. Fill `table`, then
 * `add` any frame-sized array (4-byte aligned) with the table from any word offset.
 */
export class WordAdder {
  /** The table to add from; filled by the caller. */
  readonly table: Int32Array;
  private readonly frameWords: number;
  /** Words summed in whole 16-byte steps in SIMD; the last few, if any, one at a time. */
  private readonly simdWords: number;
  private readonly kernel: SimdKernel | undefined;

  constructor(frameWords: number, tableWords: number, options: { simd?: boolean } = {}) {
    this.frameWords = frameWords;
    const module = options.simd === false ? null : simdModule();
    if (!module || !wasm) {
      this.table = new Int32Array(tableWords);
      this.simdWords = 0;
      return;
    }
    // Memory: the table, then the frame in, then the frame out.
    const bytes = (tableWords + 2 * frameWords) * 4;
    const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / 65536)) });
    const instance = new wasm.Instance(module, { env: { memory } });
    this.table = new Int32Array(memory.buffer, 0, tableWords);
    this.kernel = {
      add: instance.exports.add as SimdKernel['add'],
      sourceBytes: new Uint8Array(memory.buffer, tableWords * 4, frameWords * 4),
      targetBytes: new Uint8Array(memory.buffer, (tableWords + frameWords) * 4, frameWords * 4),
    };
    this.simdWords = frameWords & ~3;
  }

  /** Whether the sums run in WebAssembly SIMD (else one word at a time). */
  get simd(): boolean {
    return this.kernel !== undefined;
  }

  /** Writes `source` + `table[tableOffset …]` word by word (modulo 2^32) into `target`; both frameWords long. */
  addTo(source: Uint8Array | Uint8ClampedArray, tableOffset: number, target: Uint8Array | Uint8ClampedArray): void {
    const kernel = this.kernel;
    if (kernel) {
      kernel.sourceBytes.set(source);
      kernel.add(kernel.targetBytes.byteOffset, kernel.sourceBytes.byteOffset, tableOffset * 4, this.simdWords * 4);
      target.set(kernel.targetBytes);
    }
    const from = this.simdWords;
    if (from === this.frameWords) return;
    const words = this.frameWords - from;
    const wordsAt = (bytes: Uint8Array | Uint8ClampedArray) => new Int32Array(bytes.buffer, bytes.byteOffset + from * 4, words);
    addWords(this.table, tableOffset + from, wordsAt(source), wordsAt(target));
  }
}
