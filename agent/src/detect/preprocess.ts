import { channelsOf, LITTLE_ENDIAN, type Frame } from '../capture/frame.ts';

/** How a frame maps into the model input: input = frame · scale + pad. */
export interface InputMapping {
  scaleX: number;
  scaleY: number;
  padX: number;
  padY: number;
}

/** YOLO's letterbox: keep the aspect ratio, centre, pad the rest. */
export function letterbox(frameWidth: number, frameHeight: number, inputWidth: number, inputHeight: number): InputMapping {
  const scale = Math.min(inputWidth / frameWidth, inputHeight / frameHeight);
  return { scaleX: scale, scaleY: scale, padX: (inputWidth - frameWidth * scale) / 2, padY: (inputHeight - frameHeight * scale) / 2 };
}

/** Plain resize to the input size (the project's own model is trained on whole resized frames). */
export function stretch(frameWidth: number, frameHeight: number, inputWidth: number, inputHeight: number): InputMapping {
  return { scaleX: inputWidth / frameWidth, scaleY: inputHeight / frameHeight, padX: 0, padY: 0 };
}

/** Maps a centre-based box from model-input pixels back to frame pixels. */
export function toFramePixels(box: { x: number; y: number; w: number; h: number }, mapping: InputMapping) {
  return {
    x: (box.x - mapping.padX) / mapping.scaleX,
    y: (box.y - mapping.padY) / mapping.scaleY,
    w: box.w / mapping.scaleX,
    h: box.h / mapping.scaleY,
  };
}

/**
 * How one axis of the input is sampled from the frame: input pixel `i` (counted from the first one inside the
 * picture) is the weighted sum of frame pixels `index[first[i] .. first[i+1])` with weights `weight[...]`.
 */
export interface AxisTaps {
  first: Int32Array;
  index: Int32Array;
  weight: Float32Array;
}

/**
 * Sampling taps for one axis. Shrinking averages every frame pixel an input pixel covers, with partial
 * weights at the edges (area averaging: each frame pixel counts, so noise averages out and thin details do not
 * alias, and a factor-2 shrink is the plain 2×2 mean); enlarging interpolates linearly between the two
 * nearest frame pixels. The trainer produces its frames with ffmpeg's `area` scaler, which computes the same.
 */
export function axisTaps(frameSize: number, scale: number, pad: number, start: number, end: number): AxisTaps {
  const count = Math.max(0, end - start);
  const first = new Int32Array(count + 1);
  const index: number[] = [];
  const weight: number[] = [];
  const clampIndex = (i: number) => Math.min(frameSize - 1, Math.max(0, i));
  for (let k = 0; k < count; k++) {
    first[k] = index.length;
    const i = start + k;
    if (scale >= 1) {
      const s = Math.min(frameSize - 1, Math.max(0, (i + 0.5 - pad) / scale - 0.5));
      const a = Math.floor(s);
      const f = s - a;
      index.push(a);
      weight.push(1 - f);
      if (f > 0 && a + 1 < frameSize) {
        index.push(a + 1);
        weight.push(f);
      }
      continue;
    }
    const from = Math.max(0, (i - pad) / scale);
    const to = Math.min(frameSize, (i + 1 - pad) / scale);
    const span = to - from;
    for (let j = Math.floor(from); j < Math.ceil(to - 1e-9); j++) {
      const overlap = Math.min(to, j + 1) - Math.max(from, j);
      if (overlap <= 1e-9) continue;
      index.push(clampIndex(j));
      weight.push(overlap / span);
    }
  }
  first[count] = index.length;
  return { first, index: Int32Array.from(index), weight: Float32Array.from(weight) };
}

/** The input pixels the picture covers (the rest is letterbox padding). */
function pictureRange(size: number, scale: number, pad: number, inputSize: number): [number, number] {
  return [Math.max(0, Math.ceil(pad - 1e-9)), Math.min(inputSize, Math.floor(pad + size * scale + 1e-9))];
}

/**
 * One axis of a shrink by a ratio of small whole numbers, `p` frame pixels to `q` input pixels, starting on a whole
 * frame pixel: input pixel `i` covers frame pixels `index[first[i] .. first[i+1])` by `weight` q-ths of a pixel each,
 * `p` in all.
 */
interface WholeTaps {
  first: Int32Array;
  index: Int32Array;
  weight: Int32Array;
  p: number;
  q: number;
}

/** Precomputed sampling of a frame size into the model input; build once per frame size. */
export interface Resampler {
  inputWidth: number;
  inputHeight: number;
  x0: number;
  y0: number;
  columns: AxisTaps;
  rows: AxisTaps;
  /**
   * The same sampling in whole numbers, when the picture fills the input and each axis shrinks by a ratio of small
   * whole numbers from a whole frame pixel (a 1280×720 frame's slot band at the slot model's scale: 2 and 3/2).
   */
  whole?: { columns: WholeTaps; rows: WholeTaps };
}

/** Frame pixels per input pixel as p/q in lowest terms, q up to 8 and p up to 16; none for an enlargement. */
function shrinkRatio(scale: number): [number, number] | undefined {
  for (let q = 1; q <= 8; q++) {
    const p = Math.round(q / scale);
    if (p >= q && p <= 16 && Math.abs(q / scale - p) < 1e-6) return [p, q];
  }
  return undefined;
}

function wholeTaps(frameSize: number, scale: number, pad: number, count: number): WholeTaps | undefined {
  const ratio = shrinkRatio(scale);
  const originExact = -pad / scale;
  const origin = Math.round(originExact);
  if (!ratio || Math.abs(originExact - origin) > 1e-6) return undefined;
  const [p, q] = ratio;
  if (origin < 0 || origin + Math.ceil((count * p) / q) > frameSize) return undefined;
  const first = new Int32Array(count + 1);
  const index: number[] = [];
  const weight: number[] = [];
  for (let i = 0; i < count; i++) {
    first[i] = index.length;
    // In q-ths of a frame pixel, input pixel i covers [i·p, (i+1)·p) and frame pixel j covers [j·q, (j+1)·q).
    for (let j = Math.floor((i * p) / q); j * q < (i + 1) * p; j++) {
      index.push(origin + j);
      weight.push(Math.min((i + 1) * p, (j + 1) * q) - Math.max(i * p, j * q));
    }
  }
  first[count] = index.length;
  return { first, index: Int32Array.from(index), weight: Int32Array.from(weight), p, q };
}

export function resamplerFor(frameWidth: number, frameHeight: number, inputWidth: number, inputHeight: number, mapping: InputMapping): Resampler {
  const [x0, x1] = pictureRange(frameWidth, mapping.scaleX, mapping.padX, inputWidth);
  const [y0, y1] = pictureRange(frameHeight, mapping.scaleY, mapping.padY, inputHeight);
  const fills = x0 === 0 && y0 === 0 && x1 === inputWidth && y1 === inputHeight;
  const wholeColumns = fills ? wholeTaps(frameWidth, mapping.scaleX, mapping.padX, inputWidth) : undefined;
  const wholeRows = wholeColumns && wholeTaps(frameHeight, mapping.scaleY, mapping.padY, inputHeight);
  return {
    inputWidth,
    inputHeight,
    x0,
    y0,
    columns: axisTaps(frameWidth, mapping.scaleX, mapping.padX, x0, x1),
    rows: axisTaps(frameHeight, mapping.scaleY, mapping.padY, y0, y1),
    ...(wholeColumns && wholeRows ? { whole: { columns: wholeColumns, rows: wholeRows } } : {}),
  };
}

/**
 * Fills a `[1,3,H,W]` float32 RGB tensor in 0..1 (planar) from a gray or RGB frame, padding with YOLO's gray
 * (114/255). Separable: each needed frame row is resampled horizontally once, then rows are combined. Reuses
 * `out` (and a resampler built for this frame size) when given.
 */
export function toInputTensor(frame: Frame, inputWidth: number, inputHeight: number, mapping: InputMapping, out?: Float32Array, resampler?: Resampler): Float32Array {
  const plane = inputWidth * inputHeight;
  const tensor = out ?? new Float32Array(plane * 3);
  const blocks = wholeBlocks(frame, inputWidth, inputHeight, mapping);
  if (blocks) return averageBlocks(frame, blocks, inputWidth, inputHeight, tensor);
  tensor.fill(114 / 255);
  const r = resampler ?? resamplerFor(frame.width, frame.height, inputWidth, inputHeight, mapping);
  const channels = channelsOf(frame.format);
  const { width, data } = frame;
  const { columns, rows } = r;
  const outWidth = columns.first.length - 1;
  const outHeight = rows.first.length - 1;
  const line = new Float32Array(outWidth * 3);
  const sum = new Float32Array(outWidth * 3);
  const inv = 1 / 255;
  for (let y = 0; y < outHeight; y++) {
    sum.fill(0);
    for (let t = rows.first[y]!; t < rows.first[y + 1]!; t++) {
      resampleRow(data, rows.index[t]! * width, channels, columns, line);
      const w = rows.weight[t]!;
      for (let k = 0; k < sum.length; k++) sum[k] = sum[k]! + line[k]! * w;
    }
    const o = (r.y0 + y) * inputWidth + r.x0;
    for (let x = 0; x < outWidth; x++) {
      tensor[o + x] = sum[x * 3]! * inv;
      tensor[plane + o + x] = sum[x * 3 + 1]! * inv;
      tensor[2 * plane + o + x] = sum[x * 3 + 2]! * inv;
    }
  }
  return tensor;
}

/** A mapping in which every input pixel is one whole kx×ky block of frame pixels, all inside the frame. */
interface BlockGrid {
  kx: number;
  ky: number;
  /** The frame pixel of the first block's top-left corner. */
  left: number;
  top: number;
}

function wholeBlocks(frame: Frame, inputWidth: number, inputHeight: number, mapping: InputMapping): BlockGrid | undefined {
  const whole = (v: number) => (Math.abs(v - Math.round(v)) < 1e-9 ? Math.round(v) : undefined);
  const kx = whole(1 / mapping.scaleX);
  const ky = whole(1 / mapping.scaleY);
  const left = whole(-mapping.padX / mapping.scaleX);
  const top = whole(-mapping.padY / mapping.scaleY);
  if (!kx || !ky || left === undefined || top === undefined) return undefined;
  if (left < 0 || top < 0 || left + inputWidth * kx > frame.width || top + inputHeight * ky > frame.height) return undefined;
  return { kx, ky, left, top };
}

/**
 * The common cases: a whole 640×480 or 1280×720 frame into 320×240 (2×2 or 4×3 blocks), and the slot pass's crop
 * at full resolution (1×1). Each input pixel averages its block with integer sums: the same values as the general
 * separable path, at a fraction of its cost.
 */
function averageBlocks(frame: Frame, grid: BlockGrid, inputWidth: number, inputHeight: number, tensor: Float32Array): Float32Array {
  const { kx, ky, left, top } = grid;
  const plane = inputWidth * inputHeight;
  const channels = channelsOf(frame.format);
  const { data, width } = frame;
  const scale = 1 / (255 * kx * ky);
  const rowStride = width * channels;
  if (kx === 1 && ky === 1 && channels === 3) {
    for (let y = 0; y < inputHeight; y++) {
      let p = (top + y) * rowStride + left * 3;
      let o = y * inputWidth;
      for (let x = 0; x < inputWidth; x++, p += 3, o++) {
        tensor[o] = data[p]! * scale;
        tensor[plane + o] = data[p + 1]! * scale;
        tensor[2 * plane + o] = data[p + 2]! * scale;
      }
    }
    return tensor;
  }
  if (kx === 2 && ky === 2 && channels === 3) {
    // 640×480 colour into 320×240, the shipped model's case: unrolled, about half the generic loop's time.
    for (let y = 0; y < inputHeight; y++) {
      let p = (top + y * 2) * rowStride + left * 3;
      let q = p + rowStride;
      let o = y * inputWidth;
      for (let x = 0; x < inputWidth; x++, p += 6, q += 6, o++) {
        tensor[o] = (data[p]! + data[p + 3]! + data[q]! + data[q + 3]!) * scale;
        tensor[plane + o] = (data[p + 1]! + data[p + 4]! + data[q + 1]! + data[q + 4]!) * scale;
        tensor[2 * plane + o] = (data[p + 2]! + data[p + 5]! + data[q + 2]! + data[q + 5]!) * scale;
      }
    }
    return tensor;
  }
  for (let y = 0; y < inputHeight; y++) {
    const rowStart = (top + y * ky) * rowStride + left * channels;
    for (let x = 0; x < inputWidth; x++) {
      let red = 0;
      let green = 0;
      let blue = 0;
      for (let dy = 0; dy < ky; dy++) {
        let p = rowStart + dy * rowStride + x * kx * channels;
        for (let dx = 0; dx < kx; dx++) {
          if (channels === 1) {
            red += data[p]!;
            p += 1;
          } else {
            red += data[p]!;
            green += data[p + 1]!;
            blue += data[p + 2]!;
            p += 3;
          }
        }
      }
      const o = y * inputWidth + x;
      tensor[o] = red * scale;
      tensor[plane + o] = (channels === 1 ? red : green) * scale;
      tensor[2 * plane + o] = (channels === 1 ? red : blue) * scale;
    }
  }
  return tensor;
}

/**
 * How an 8-bit model lays out its input bytes: channels last, in blocks of `block`×`block` pixels (1: pixel by
 * pixel, row by row; 2: 2×2 blocks, row by row), each block holding the `frames` frames the model sees one after the
 * other (this frame, then the previous one), each frame's pixels of the block in rows (top-left, top-right,
 * bottom-left, bottom-right), RGB each. So one frame's part of a 2×2 block is twelve bytes in a row: three words.
 */
export interface ByteLayout {
  frames: number;
  block: 1 | 2;
}

/** Where one frame's bytes go: `data`, laid out as the model takes it, as frame `slot` of its blocks (0: this frame, 1: the previous one). */
export interface ByteTarget {
  data: Uint8Array;
  slot: number;
}

/**
 * Where input pixel (x, y) of a `width`-wide input starts, as frame 0 of its block: `row(y) + column(x)`, with
 * `column(x)` = `(x >> shift) * blockBytes + (x & mask) * 3` (in rows: shift and mask 0). Frame `slot` is `slot *
 * slotBytes` further on.
 */
function byteGrid(layout: ByteLayout, width: number) {
  const { frames, block } = layout;
  const shift = block === 2 ? 1 : 0;
  const mask = block - 1;
  const slotBytes = block * block * 3;
  const blockBytes = slotBytes * frames;
  const row = (y: number) => (y >> shift) * (width >> shift) * blockBytes + (y & mask) * block * 3;
  return { shift, mask, slotBytes, blockBytes, row };
}

export type ByteGrid = ReturnType<typeof byteGrid>;

/** A byte target's first byte in the grid, and its data as 32-bit words where it starts on a word boundary. */
const startOf = (target: ByteTarget, grid: ByteGrid) => target.slot * grid.slotBytes;
const wordsOf = (data: Uint8Array) => (data.byteOffset % 4 === 0 && data.length % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length / 4) : undefined);

/**
 * Fills an 8-bit model's byte input from a gray or RGB frame: `toInputTensor`'s values times 255, to the nearest
 * byte with halves to even (what the float graph's input quantizer made of them). Writes the frame to `into` and,
 * when given, also to `alsoInto` (a two-frame model's next input, where this frame is the previous one). On the
 * general path (a mapping that is neither whole blocks of the frame nor a shrink by small whole ratios) the float
 * values are made first, in `scratch.values`.
 */
export function toInputBytes(
  frame: Frame,
  inputWidth: number,
  inputHeight: number,
  mapping: InputMapping,
  layout: ByteLayout,
  into: ByteTarget,
  alsoInto?: ByteTarget,
  resampler?: Resampler,
  scratch: ByteScratch = {},
): void {
  if (layout.block === 2 && (inputWidth % 2 !== 0 || inputHeight % 2 !== 0)) throw new Error(`an input in 2x2 blocks needs even sides, got ${inputWidth}x${inputHeight}`);
  const grid = byteGrid(layout, inputWidth);
  // Without a second target the second writes land on the first target's own bytes again: no branch per pixel.
  const second = alsoInto ?? into;
  const blocks = wholeBlocks(frame, inputWidth, inputHeight, mapping);
  if (blocks) {
    const { data } = frame;
    const channels = channelsOf(frame.format);
    const rowStride = frame.width * channels;
    const first = blocks.top * rowStride + blocks.left * channels;
    // Four bytes at a time where the frame's rows and both targets lie on word boundaries (the agent's frames and inputs do).
    const words = LITTLE_ENDIAN && channels === 3 && data.byteOffset % 4 === 0 && first % 4 === 0 && rowStride % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.length >> 2) : undefined;
    if (words && blocks.kx === 4 && blocks.ky === 3) return averageFourByThreeWords({ words, first: first >> 2, rowWords: rowStride >> 2 }, inputWidth, inputHeight, grid, into, second);
    const simple = (blocks.kx === 1 && blocks.ky === 1) || (blocks.kx === 2 && blocks.ky === 2);
    if (!simple || channels !== 3) return averageBlockBytes(data, first, rowStride, channels, blocks.kx, blocks.ky, inputWidth, inputHeight, grid, into, second);
    const outWords = words && layout.block === 2 ? wordsOf(into.data) : undefined;
    const out2Words = outWords && wordsOf(second.data);
    const copy = blocks.kx === 1;
    if (words && outWords && out2Words && (!copy || inputWidth % 4 === 0)) {
      const source = { words, first: first >> 2, rowWords: rowStride >> 2 };
      const targets = { out: outWords, start: startOf(into, grid) >> 2, out2: out2Words, start2: startOf(second, grid) >> 2 };
      if (copy) copyBlockWords(source, inputWidth, inputHeight, grid, targets);
      else halveBlockWords(source, inputWidth, inputHeight, grid, targets);
    } else if (copy) {
      copyBytes(data, first, rowStride, inputWidth, inputHeight, grid, into, second);
    } else if (words && inputWidth % 2 === 0) {
      halveWords(words, first >> 2, rowStride >> 2, inputWidth, inputHeight, grid, into, second);
    } else {
      halveBytes(data, first, rowStride, inputWidth, inputHeight, grid, into, second);
    }
    return;
  }
  const sampling = resampler ?? resamplerFor(frame.width, frame.height, inputWidth, inputHeight, mapping);
  if (sampling.whole) return averageWholeTaps(frame, sampling.whole.columns, sampling.whole.rows, grid, into, second, scratch);
  const plane = inputWidth * inputHeight;
  if (scratch.values?.length !== 3 * plane) scratch.values = new Float32Array(3 * plane);
  const tensor = toInputTensor(frame, inputWidth, inputHeight, mapping, scratch.values, sampling);
  const { shift, mask, blockBytes, row } = grid;
  const start = startOf(into, grid);
  const start2 = startOf(second, grid);
  for (let y = 0; y < inputHeight; y++) {
    const rowStart = row(y);
    for (let x = 0; x < inputWidth; x++) {
      const i = y * inputWidth + x;
      const o = rowStart + (x >> shift) * blockBytes + (x & mask) * 3;
      putPixel(into.data, o + start, second.data, o + start2, nearestByte(tensor[i]! * 255), nearestByte(tensor[plane + i]! * 255), nearestByte(tensor[2 * plane + i]! * 255));
    }
  }
}

/** Buffers the byte paths reuse from frame to frame; made or remade when missing or of another size. */
export interface ByteScratch {
  values?: Float32Array;
  lines?: Int32Array;
}

/**
 * A shrink by ratios of small whole numbers (`Resampler.whole`): each input pixel's area average as a whole-number
 * sum of frame bytes times their overlaps, divided by the overlaps' total, to the nearest byte by table. Exact,
 * where the float path's rounding tips halfway means either way (a sixth of them for 2 × 3/2). Separable: each frame
 * row is resampled across once and kept while the next input row still needs it (3/2 shares every third row).
 * For a 1280×720 frame's slot band (2 and 3/2) it replaces the float path.
 */
function averageWholeTaps(frame: Frame, columns: WholeTaps, rows: WholeTaps, grid: ByteGrid, into: ByteTarget, second: ByteTarget, scratch: ByteScratch): void {
  const width = columns.first.length - 1;
  const height = rows.first.length - 1;
  const channels = channelsOf(frame.format);
  const { data } = frame;
  const rowStride = frame.width * channels;
  const size = width * 3;
  if (scratch.lines?.length !== 3 * size) scratch.lines = new Int32Array(3 * size);
  // Two lines across, for the last two frame rows resampled, and the input row's sums.
  const lines = scratch.lines;
  const sums = lines.subarray(2 * size);
  const lineRows = [-1, -1];
  let older = 0;
  const means = meansOf(columns.p * rows.p);
  const { shift, mask, blockBytes } = grid;
  const start = startOf(into, grid);
  const start2 = startOf(second, grid);
  for (let y = 0; y < height; y++) {
    const firstTap = rows.first[y]!;
    const taps = rows.first[y + 1]! - firstTap;
    if (taps !== 2) sums.fill(0);
    let a = 0;
    let b = 0;
    for (let t = firstTap; t < firstTap + taps; t++) {
      const frameRow = rows.index[t]!;
      let slot = lineRows[0] === frameRow ? 0 : lineRows[1] === frameRow ? 1 : -1;
      if (slot < 0) {
        slot = older;
        lineRows[slot] = frameRow;
        acrossWholeTaps(data, frameRow * rowStride, channels, columns, lines, slot * size);
      }
      // The line just used is the newer one: a row's second tap never writes over its first.
      older = 1 - slot;
      if (t === firstTap) a = slot * size;
      else b = slot * size;
      if (taps === 2) continue;
      const w = rows.weight[t]!;
      for (let k = 0, l = slot * size; k < size; k++, l++) sums[k] = sums[k]! + lines[l]! * w;
    }
    const outRow = grid.row(y);
    if (taps === 2) {
      // Two frame rows (every input row of a 3/2 shrink): weighted straight from their lines, no sums pass.
      const wa = rows.weight[firstTap]!;
      const wb = rows.weight[firstTap + 1]!;
      for (let x = 0, k = 0; x < width; x++, k += 3) {
        const o = outRow + (x >> shift) * blockBytes + (x & mask) * 3;
        const red = means[lines[a + k]! * wa + lines[b + k]! * wb]!;
        const green = means[lines[a + k + 1]! * wa + lines[b + k + 1]! * wb]!;
        const blue = means[lines[a + k + 2]! * wa + lines[b + k + 2]! * wb]!;
        putPixel(into.data, o + start, second.data, o + start2, red, green, blue);
      }
      continue;
    }
    for (let x = 0, k = 0; x < width; x++, k += 3) {
      const o = outRow + (x >> shift) * blockBytes + (x & mask) * 3;
      putPixel(into.data, o + start, second.data, o + start2, means[sums[k]!]!, means[sums[k + 1]!]!, means[sums[k + 2]!]!);
    }
  }
}

/** One frame row through whole-number column taps into `lines` from `at` (RGB interleaved; gray is repeated). */
function acrossWholeTaps(data: Uint8Array, rowStart: number, channels: number, columns: WholeTaps, lines: Int32Array, at: number): void {
  const { first, index, weight } = columns;
  const width = first.length - 1;
  if (channels === 3 && columns.p === 2 && columns.q === 1) {
    // Two whole pixels per input pixel (1280 wide at the slot model's scale): plain pair sums.
    for (let x = 0, p = rowStart + index[0]! * 3, o = at; x < width; x++, p += 6, o += 3) {
      lines[o] = data[p]! + data[p + 3]!;
      lines[o + 1] = data[p + 1]! + data[p + 4]!;
      lines[o + 2] = data[p + 2]! + data[p + 5]!;
    }
    return;
  }
  for (let x = 0, o = at; x < width; x++, o += 3) {
    let red = 0;
    let green = 0;
    let blue = 0;
    for (let t = first[x]!; t < first[x + 1]!; t++) {
      const w = weight[t]!;
      if (channels === 1) {
        red += data[rowStart + index[t]!]! * w;
      } else {
        const p = rowStart + index[t]! * 3;
        red += data[p]! * w;
        green += data[p + 1]! * w;
        blue += data[p + 2]! * w;
      }
    }
    lines[o] = red;
    lines[o + 1] = channels === 1 ? red : green;
    lines[o + 2] = channels === 1 ? red : blue;
  }
}

/** The nearest byte, halves to even (as ONNX's QuantizeLinear rounds). */
function nearestByte(v: number): number {
  if (!(v > 0)) return 0;
  if (v >= 255) return 255;
  const low = Math.floor(v);
  const rest = v - low;
  return rest > 0.5 || (rest === 0.5 && (low & 1) === 1) ? low + 1 : low;
}

/** The mean of `count` bytes summing to `sum`, to the nearest byte, halves to even: integer arithmetic only. */
function meanByte(sum: number, count: number): number {
  const low = Math.floor(sum / count);
  const twiceRest = 2 * (sum - low * count);
  return twiceRest > count || (twiceRest === count && (low & 1) === 1) ? low + 1 : low;
}

// `averageBlocks` for byte inputs: the slot pass's full-resolution crop, the 2×2 shrink, and any other whole blocks.
// Byte by byte for any layout; in 2×2 blocks, where the frame and the targets lie on word boundaries, a block's
// twelve bytes of one frame at a time as three words.

/** One pixel's RGB into both targets (V8 inlines it into the loops below). */
function putPixel(out: Uint8Array, o: number, out2: Uint8Array, o2: number, red: number, green: number, blue: number): void {
  out[o] = red;
  out[o + 1] = green;
  out[o + 2] = blue;
  out2[o2] = red;
  out2[o2 + 1] = green;
  out2[o2 + 2] = blue;
}

function copyBytes(data: Uint8Array, first: number, rowStride: number, width: number, height: number, grid: ByteGrid, into: ByteTarget, second: ByteTarget): void {
  const { shift, mask, blockBytes } = grid;
  const out = into.data;
  const out2 = second.data;
  for (let y = 0; y < height; y++) {
    let p = first + y * rowStride;
    const rowStart = grid.row(y);
    const o0 = rowStart + startOf(into, grid);
    const o20 = rowStart + startOf(second, grid);
    for (let x = 0; x < width; x++, p += 3) {
      const column = (x >> shift) * blockBytes + (x & mask) * 3;
      putPixel(out, o0 + column, out2, o20 + column, data[p]!, data[p + 1]!, data[p + 2]!);
    }
  }
}

/** A frame as 32-bit words: the first word of the region read, and the words per frame row. */
interface WordSource {
  words: Uint32Array;
  first: number;
  rowWords: number;
}

/** Both targets as 32-bit words, and the word where each one's frame starts in the first block. */
interface WordTargets {
  out: Uint32Array;
  start: number;
  out2: Uint32Array;
  start2: number;
}

/** One frame's twelve bytes of a block, as three words, into both targets (V8 inlines it, as `putPixel`). */
function putBlockWords(out: Uint32Array, o: number, out2: Uint32Array, o2: number, word0: number, word1: number, word2: number): void {
  out[o] = word0;
  out[o + 1] = word1;
  out[o + 2] = word2;
  out2[o2] = word0;
  out2[o2 + 1] = word1;
  out2[o2 + 2] = word2;
}

/**
 * `copyBytes` into 2×2 blocks, two blocks at a time: a frame row's four pixels are three words, and each block's
 * twelve bytes (six from each of its two rows, in order) are three words made of them. About a fifth of the time of
 * byte by byte (0.14 against 0.65 ms) for the slot pass's 608×176 band, which lies on word boundaries (its width a
 * multiple of 16).
 */
function copyBlockWords(source: WordSource, width: number, height: number, grid: ByteGrid, targets: WordTargets): void {
  const { words, first, rowWords } = source;
  const { out, out2 } = targets;
  const blockWords = grid.blockBytes >> 2;
  let o = targets.start;
  let o2 = targets.start2;
  for (let y = 0; y < height; y += 2) {
    let p = first + y * rowWords;
    let q = p + rowWords;
    for (let x = 0; x < width; x += 4, p += 3, q += 3) {
      const p0 = words[p]!;
      const p1 = words[p + 1]!;
      const p2 = words[p + 2]!;
      const q0 = words[q]!;
      const q1 = words[q + 1]!;
      const q2 = words[q + 2]!;
      // Left block: top row bytes 0-5, bottom row bytes 0-5. Right block: bytes 6-11 of each.
      const left0 = p0;
      const left1 = (p1 & 0xffff) | (q0 << 16);
      const left2 = (q0 >>> 16) | (q1 << 16);
      const right0 = (p1 >>> 16) | (p2 << 16);
      const right1 = (p2 >>> 16) | (q1 & 0xffff0000);
      const right2 = q2;
      putBlockWords(out, o, out2, o2, left0, left1, left2);
      putBlockWords(out, o + blockWords, out2, o2 + blockWords, right0, right1, right2);
      o += 2 * blockWords;
      o2 += 2 * blockWords;
    }
  }
}

function halveBytes(data: Uint8Array, first: number, rowStride: number, width: number, height: number, grid: ByteGrid, into: ByteTarget, second: ByteTarget): void {
  const { shift, mask, blockBytes } = grid;
  const out = into.data;
  const out2 = second.data;
  for (let y = 0; y < height; y++) {
    let p = first + 2 * y * rowStride;
    let q = p + rowStride;
    const rowStart = grid.row(y);
    const o0 = rowStart + startOf(into, grid);
    const o20 = rowStart + startOf(second, grid);
    for (let x = 0; x < width; x++, p += 6, q += 6) {
      // sum/4 to the nearest, halves to even: (sum + 1 + (sum/4 odd)) / 4, rounded down.
      const sumRed = data[p]! + data[p + 3]! + data[q]! + data[q + 3]!;
      const sumGreen = data[p + 1]! + data[p + 4]! + data[q + 1]! + data[q + 4]!;
      const sumBlue = data[p + 2]! + data[p + 5]! + data[q + 2]! + data[q + 5]!;
      const column = (x >> shift) * blockBytes + (x & mask) * 3;
      putPixel(out, o0 + column, out2, o20 + column, (sumRed + 1 + ((sumRed >> 2) & 1)) >> 2, (sumGreen + 1 + ((sumGreen >> 2) & 1)) >> 2, (sumBlue + 1 + ((sumBlue >> 2) & 1)) >> 2);
    }
  }
}

const EVEN_BYTES = 0x00ff00ff;

// The 2×2 shrink four bytes at a time: two frame rows' three words hold four pixels each, the two output pixels'
// blocks. Adding the rows' even bytes and their odd bytes separately gives 16-bit sums in the two lanes of a word,
// which an output pixel's three channels are picked from (a pixel's red and the next pixel's red are three bytes apart,
// so they sit in different lanes). Each mean is rounded to the nearest, halves to even: (sum + 1 + (sum/4 odd)) / 4,
// rounded down, written out in each place: a rounding function made per call costs many times as much where the
// TypeScript loader names every closure it makes, and one module-level function for all of them took this path from
// 0.61 to 0.84 ms a frame (measured again on 2026-11-25).
const evenSums = (a: number, b: number) => (a & EVEN_BYTES) + (b & EVEN_BYTES);
const oddSums = (a: number, b: number) => ((a >>> 8) & EVEN_BYTES) + ((b >>> 8) & EVEN_BYTES);

/** The left output pixel of two frame rows' first two words (bytes 0+3, 1+4, 2+5), as red | green << 8 | blue << 16. */
function halveLeft(a0: number, a1: number, b0: number, b1: number): number {
  const even0 = evenSums(a0, b0);
  const odd0 = oddSums(a0, b0);
  const red = (even0 & 0xffff) + (odd0 >>> 16);
  const green = (odd0 & 0xffff) + (evenSums(a1, b1) & 0xffff);
  const blue = (even0 >>> 16) + (oddSums(a1, b1) & 0xffff);
  return ((red + 1 + ((red >> 2) & 1)) >> 2) | (((green + 1 + ((green >> 2) & 1)) >> 2) << 8) | (((blue + 1 + ((blue >> 2) & 1)) >> 2) << 16);
}

/** The right output pixel, of their second and third words (bytes 6+9, 7+10, 8+11), likewise. */
function halveRight(a1: number, a2: number, b1: number, b2: number): number {
  const even1 = evenSums(a1, b1);
  const odd1 = oddSums(a1, b1);
  const even2 = evenSums(a2, b2);
  const odd2 = oddSums(a2, b2);
  const red = (even1 >>> 16) + (odd2 & 0xffff);
  const green = (odd1 >>> 16) + (even2 >>> 16);
  const blue = (even2 & 0xffff) + (odd2 >>> 16);
  return ((red + 1 + ((red >> 2) & 1)) >> 2) | (((green + 1 + ((green >> 2) & 1)) >> 2) << 8) | (((blue + 1 + ((blue >> 2) & 1)) >> 2) << 16);
}

/**
 * `halveBytes` four bytes at a time, in rows (`block` 1): two output pixels from three words of each of two frame
 * rows. About half the time of byte by byte for a 640×480 frame.
 */
function halveWords(words: Uint32Array, first: number, rowWords: number, width: number, height: number, grid: ByteGrid, into: ByteTarget, second: ByteTarget): void {
  const { shift, mask, blockBytes } = grid;
  const out = into.data;
  const out2 = second.data;
  for (let y = 0; y < height; y++) {
    let p = first + 2 * y * rowWords;
    let q = p + rowWords;
    const rowStart = grid.row(y);
    const o0 = rowStart + startOf(into, grid);
    const o20 = rowStart + startOf(second, grid);
    for (let x = 0; x < width; x += 2, p += 3, q += 3) {
      const left = halveLeft(words[p]!, words[p + 1]!, words[q]!, words[q + 1]!);
      const right = halveRight(words[p + 1]!, words[p + 2]!, words[q + 1]!, words[q + 2]!);
      // In rows the next pixel is a block further on; in 2×2 blocks (targets off word boundaries) the same block's next.
      const column = (x >> shift) * blockBytes + (x & mask) * 3;
      const nextColumn = ((x + 1) >> shift) * blockBytes + ((x + 1) & mask) * 3;
      putPixel(out, o0 + column, out2, o20 + column, left & 0xff, (left >> 8) & 0xff, left >> 16);
      putPixel(out, o0 + nextColumn, out2, o20 + nextColumn, right & 0xff, (right >> 8) & 0xff, right >> 16);
    }
  }
}

/**
 * The 2×2 shrink into 2×2 blocks: an output block (four frame rows, four frame pixels wide) at a time, its twelve
 * bytes of this frame written as three words to each target.
 */
function halveBlockWords(source: WordSource, width: number, height: number, grid: ByteGrid, targets: WordTargets): void {
  const { words, first, rowWords } = source;
  const { out, out2 } = targets;
  const blockWords = grid.blockBytes >> 2;
  let o = targets.start;
  let o2 = targets.start2;
  for (let y = 0; y < height; y += 2) {
    let p = first + 2 * y * rowWords;
    for (let x = 0; x < width; x += 2, p += 3, o += blockWords, o2 += blockWords) {
      const q = p + rowWords;
      const r = q + rowWords;
      const s = r + rowWords;
      const topLeft = halveLeft(words[p]!, words[p + 1]!, words[q]!, words[q + 1]!);
      const topRight = halveRight(words[p + 1]!, words[p + 2]!, words[q + 1]!, words[q + 2]!);
      const bottomLeft = halveLeft(words[r]!, words[r + 1]!, words[s]!, words[s + 1]!);
      const bottomRight = halveRight(words[r + 1]!, words[r + 2]!, words[s + 1]!, words[s + 2]!);
      // Bytes: top-left RGB, top-right RGB, bottom-left RGB, bottom-right RGB.
      const word0 = topLeft | (topRight << 24);
      const word1 = (topRight >> 8) | (bottomLeft << 16);
      const word2 = (bottomLeft >> 16) | (bottomRight << 8);
      putBlockWords(out, o, out2, o2, word0, word1, word2);
    }
  }
}

/** The rounded mean of every sum of `count` bytes, by sum: a division and a comparison per channel cost more than the sums. */
const meanTables = new Map<number, Uint8Array>();
/** `meanByte(sum, count)` for every sum of `count` bytes, made once per count. */
function meansOf(count: number): Uint8Array {
  let table = meanTables.get(count);
  if (!table) meanTables.set(count, (table = Uint8Array.from({ length: count * 255 + 1 }, (_, sum) => meanByte(sum, count))));
  return table;
}

/**
 * A 1280×720 frame's 4×3 blocks (into 320×240) four bytes at a time: a block's row is four pixels, three words, and
 * the three rows' even and odd bytes are summed in 16-bit lanes as in the 2×2 shrink. Red is bytes 0, 3, 6 and 9 of
 * the twelve, green 1, 4, 7, 10, blue 2, 5, 8, 11.
 */
function averageFourByThreeWords(source: WordSource, width: number, height: number, grid: ByteGrid, into: ByteTarget, second: ByteTarget): void {
  const { words, first, rowWords } = source;
  const { shift, mask, blockBytes } = grid;
  const means = meansOf(12);
  const out = into.data;
  const out2 = second.data;
  for (let y = 0; y < height; y++) {
    let p = first + 3 * y * rowWords;
    const rowStart = grid.row(y);
    const o0 = rowStart + startOf(into, grid);
    const o20 = rowStart + startOf(second, grid);
    for (let x = 0; x < width; x++, p += 3) {
      const q = p + rowWords;
      const r = q + rowWords;
      const even0 = evenSums(words[p]!, words[q]!) + (words[r]! & EVEN_BYTES);
      const odd0 = oddSums(words[p]!, words[q]!) + ((words[r]! >>> 8) & EVEN_BYTES);
      const even1 = evenSums(words[p + 1]!, words[q + 1]!) + (words[r + 1]! & EVEN_BYTES);
      const odd1 = oddSums(words[p + 1]!, words[q + 1]!) + ((words[r + 1]! >>> 8) & EVEN_BYTES);
      const even2 = evenSums(words[p + 2]!, words[q + 2]!) + (words[r + 2]! & EVEN_BYTES);
      const odd2 = oddSums(words[p + 2]!, words[q + 2]!) + ((words[r + 2]! >>> 8) & EVEN_BYTES);
      const red = (even0 & 0xffff) + (odd0 >>> 16) + (even1 >>> 16) + (odd2 & 0xffff);
      const green = (odd0 & 0xffff) + (even1 & 0xffff) + (odd1 >>> 16) + (even2 >>> 16);
      const blue = (even0 >>> 16) + (odd1 & 0xffff) + (even2 & 0xffff) + (odd2 >>> 16);
      const column = (x >> shift) * blockBytes + (x & mask) * 3;
      putPixel(out, o0 + column, out2, o20 + column, means[red]!, means[green]!, means[blue]!);
    }
  }
}

function averageBlockBytes(
  data: Uint8Array,
  first: number,
  rowStride: number,
  channels: number,
  kx: number,
  ky: number,
  width: number,
  height: number,
  grid: ByteGrid,
  into: ByteTarget,
  second: ByteTarget,
): void {
  const { shift, mask, blockBytes } = grid;
  const count = kx * ky;
  const start = startOf(into, grid);
  const start2 = startOf(second, grid);
  const means = meansOf(count);
  for (let y = 0; y < height; y++) {
    const rowStart = first + y * ky * rowStride;
    const outRow = grid.row(y);
    for (let x = 0; x < width; x++) {
      let red = 0;
      let green = 0;
      let blue = 0;
      for (let dy = 0; dy < ky; dy++) {
        let p = rowStart + dy * rowStride + x * kx * channels;
        for (let dx = 0; dx < kx; dx++, p += channels) {
          red += data[p]!;
          if (channels === 3) {
            green += data[p + 1]!;
            blue += data[p + 2]!;
          }
        }
      }
      const r = means[red]!;
      const g = channels === 1 ? r : means[green]!;
      const b = channels === 1 ? r : means[blue]!;
      const o = outRow + (x >> shift) * blockBytes + (x & mask) * 3;
      putPixel(into.data, o + start, second.data, o + start2, r, g, b);
    }
  }
}

/** One frame row resampled horizontally into `line` (RGB interleaved, 0..255 scale). */
function resampleRow(data: Uint8Array, rowStart: number, channels: number, columns: AxisTaps, line: Float32Array): void {
  const { first, index, weight } = columns;
  const count = first.length - 1;
  if (channels === 1) {
    for (let x = 0; x < count; x++) {
      let v = 0;
      for (let t = first[x]!; t < first[x + 1]!; t++) v += data[rowStart + index[t]!]! * weight[t]!;
      line[x * 3] = v;
      line[x * 3 + 1] = v;
      line[x * 3 + 2] = v;
    }
    return;
  }
  const base = rowStart * 3;
  for (let x = 0; x < count; x++) {
    let red = 0;
    let green = 0;
    let blue = 0;
    for (let t = first[x]!; t < first[x + 1]!; t++) {
      const p = base + index[t]! * 3;
      const w = weight[t]!;
      red += data[p]! * w;
      green += data[p + 1]! * w;
      blue += data[p + 2]! * w;
    }
    line[x * 3] = red;
    line[x * 3 + 1] = green;
    line[x * 3 + 2] = blue;
  }
}
