import { nonMaxSuppression } from './nms.ts';
import { toFramePixels, type InputMapping } from './preprocess.ts';
import type { Detection } from './types.ts';

export interface YoloDecodeOptions {
  scoreThreshold: number;
  iouThreshold: number;
  /** Class indices to keep; all when absent. */
  classes?: readonly number[];
  mapping: InputMapping;
  frameWidth: number;
  frameHeight: number;
}

/**
 * Decodes a YOLOv8/YOLO11 export: one tensor `[1, 4 + classes, N]`, rows cx, cy, w, h (input pixels) then one
 * score per class (already sigmoid, no objectness). Threshold, class filter, class-aware NMS, back to frame pixels.
 */
export function decodeYolo(data: Float32Array, dims: readonly number[], options: YoloDecodeOptions): Detection[] {
  if (dims.length !== 3 || dims[0] !== 1 || dims[1]! < 5) throw new Error(`YOLO output must be [1, 4+classes, N], got [${dims.join(', ')}]`);
  const rows = dims[1]!;
  const n = dims[2]!;
  const classCount = rows - 4;
  const wanted = options.classes ? new Set(options.classes) : undefined;
  const candidates: (Detection & { classId: number })[] = [];
  for (let i = 0; i < n; i++) {
    let best = -1;
    let bestScore = options.scoreThreshold;
    for (let c = 0; c < classCount; c++) {
      if (wanted && !wanted.has(c)) continue;
      const score = data[(4 + c) * n + i]!;
      if (score >= bestScore) {
        bestScore = score;
        best = c;
      }
    }
    if (best < 0) continue;
    const box = toFramePixels({ x: data[i]!, y: data[n + i]!, w: data[2 * n + i]!, h: data[3 * n + i]! }, options.mapping);
    if (box.x < 0 || box.y < 0 || box.x > options.frameWidth || box.y > options.frameHeight) continue; // centre in the padding
    candidates.push({ ...box, score: bestScore, classId: best });
  }
  return nonMaxSuppression(candidates, options.iouThreshold, (d) => d.classId).map(({ x, y, w, h, score }) => ({ x, y, w, h, score }));
}

/**
 * The cells of a `h`×`w` heatmap that are at least `threshold` and the maximum of their 3×3 neighbourhood, in raster
 * order. On a plateau the first cell in raster order wins, so one flat-topped peak gives one bee.
 */
export function findPeaks(heatmap: Float32Array, h: number, w: number, threshold: number): number[] {
  const peaks: number[] = [];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = heatmap[y * w + x]!;
      if (v < threshold) continue;
      let peak = true;
      for (let dy = -1; dy <= 1 && peak; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          if (dx === 0 && dy === 0) continue;
          const ny = y + dy;
          const nx = x + dx;
          if (ny < 0 || nx < 0 || ny >= h || nx >= w) continue;
          const neighbour = heatmap[ny * w + nx]!;
          // Strictly greater neighbours always win; equal ones win when they come earlier in raster order.
          const earlier = dy < 0 || (dy === 0 && dx < 0);
          if (neighbour > v || (neighbour === v && earlier)) {
            peak = false;
            break;
          }
        }
      }
      if (peak) peaks.push(y * w + x);
    }
  }
  return peaks;
}

export interface CenterNetDecodeOptions {
  threshold: number;
  inputWidth: number;
  inputHeight: number;
  mapping: InputMapping;
  maxDetections?: number;
  /** The optional `offset [1,2,h,w]` output: where the centre lies from the middle of its cell, input pixels. */
  offset?: { data: Float32Array; dims: readonly number[] };
  /** The optional `movement [1,2,h,w]` output: how far the bee moved since the previous input frame, input pixels. */
  movement?: { data: Float32Array; dims: readonly number[] };
}

/**
 * Decodes the project's CenterNet-style model: `heatmap [1,1,h,w]` (sigmoid, one cell per `stride` input pixels)
 * and `size [1,2,h,w]` (box width and height in input pixels), and when the model has them `offset [1,2,h,w]`
 * (x and y of the centre relative to the middle of the cell, input pixels) and `movement [1,2,h,w]` (how far the
 * bee moved since the previous input frame, input pixels). A bee is a peak of the heatmap (`findPeaks`); its centre
 * is the middle of that cell, moved by the offset.
 */
export function decodeCenterNet(heatmap: Float32Array, heatmapDims: readonly number[], size: Float32Array, sizeDims: readonly number[], options: CenterNetDecodeOptions): Detection[] {
  if (heatmapDims.length !== 4 || heatmapDims[0] !== 1 || heatmapDims[1] !== 1) throw new Error(`heatmap must be [1, 1, H, W], got [${heatmapDims.join(', ')}]`);
  const h = heatmapDims[2]!;
  const w = heatmapDims[3]!;
  if (sizeDims.length !== 4 || sizeDims[1] !== 2 || sizeDims[2] !== h || sizeDims[3] !== w) throw new Error(`size must be [1, 2, ${h}, ${w}], got [${sizeDims.join(', ')}]`);
  const { offset, movement } = options;
  for (const [name, output] of [['offset', offset], ['movement', movement]] as const) {
    if (output && (output.dims.length !== 4 || output.dims[1] !== 2 || output.dims[2] !== h || output.dims[3] !== w)) {
      throw new Error(`${name} must be [1, 2, ${h}, ${w}], got [${output.dims.join(', ')}]`);
    }
  }
  const strideX = options.inputWidth / w;
  const strideY = options.inputHeight / h;
  const plane = h * w;
  const out: Detection[] = [];
  for (const cell of findPeaks(heatmap, h, w, options.threshold)) {
    const x = cell % w;
    const y = (cell - x) / w;
    const dx = offset ? offset.data[cell]! : 0;
    const dy = offset ? offset.data[plane + cell]! : 0;
    const box = toFramePixels({ x: (x + 0.5) * strideX + dx, y: (y + 0.5) * strideY + dy, w: size[cell]!, h: size[plane + cell]! }, options.mapping);
    const score = heatmap[cell]!;
    if (movement) {
      const { scaleX, scaleY } = options.mapping;
      out.push({ ...box, score, movement: { dx: movement.data[cell]! / scaleX, dy: movement.data[plane + cell]! / scaleY } });
    } else {
      out.push({ ...box, score });
    }
  }
  out.sort((a, b) => b.score - a.score);
  return out.slice(0, options.maxDetections ?? 300);
}

/** The planes of a CenterNet model's `heads` output, in order: heatmap (logits), size (2), offset (2), movement (2). */
const HEAD_PLANES = 7;

/**
 * Decodes the `heads` output an 8-bit copy of the project's CenterNet model gives instead of its four outputs
 * (`tools/qdq.py`): the last convolution's `[1, 7·4, h, w]`, i.e. the seven output planes before the pixel shuffle
 * that doubles their resolution. Plane `p` at output cell (x, y) of the `2w`×`2h` grid is channel `4p + 2·(y mod 2) +
 * (x mod 2)` at (⌊x/2⌋, ⌊y/2⌋) (DepthToSpace's CRD order); plane 0 is the heatmap before its sigmoid, planes 1–2 the
 * size before its ReLU. The same bees as `decodeCenterNet` on the shuffled outputs, without the shuffle: only the
 * heatmap is laid out again (in `scratch.heat`, made or remade there when missing or of another size, so a caller
 * that keeps `scratch` reuses it), the rest is read at the peaks.
 */
export function decodeCenterNetHeads(
  heads: Float32Array,
  dims: readonly number[],
  options: Omit<CenterNetDecodeOptions, 'offset' | 'movement'>,
  scratch: { heat?: Float32Array } = {},
): Detection[] {
  if (dims.length !== 4 || dims[0] !== 1 || dims[1] !== 4 * HEAD_PLANES) throw new Error(`heads must be [1, ${4 * HEAD_PLANES}, H, W], got [${dims.join(', ')}]`);
  const h = dims[2]!;
  const w = dims[3]!;
  const plane = h * w;
  const gridW = 2 * w;
  const gridH = 2 * h;
  if (scratch.heat?.length !== 4 * plane) scratch.heat = new Float32Array(4 * plane);
  const heat = scratch.heat;
  for (let sub = 0; sub < 4; sub++) {
    const dy = sub >> 1;
    const dx = sub & 1;
    for (let y = 0; y < h; y++) {
      let o = (2 * y + dy) * gridW + dx;
      let i = sub * plane + y * w;
      for (let x = 0; x < w; x++, o += 2, i++) heat[o] = heads[i]!;
    }
  }
  const { threshold } = options;
  const logitThreshold = threshold <= 0 ? -Infinity : threshold >= 1 ? Infinity : Math.log(threshold / (1 - threshold));
  const strideX = options.inputWidth / gridW;
  const strideY = options.inputHeight / gridH;
  const { scaleX, scaleY } = options.mapping;
  const out: Detection[] = [];
  for (const cell of findPeaks(heat, gridH, gridW, logitThreshold)) {
    const x = cell % gridW;
    const y = (cell - x) / gridW;
    const at = (p: number) => heads[(4 * p + 2 * (y & 1) + (x & 1)) * plane + (y >> 1) * w + (x >> 1)]!;
    const box = toFramePixels({ x: (x + 0.5) * strideX + at(3), y: (y + 0.5) * strideY + at(4), w: Math.max(0, at(1)), h: Math.max(0, at(2)) }, options.mapping);
    // In float32, as the float graph's sigmoid gave it: very clear peaks score exactly 1 and keep their raster order.
    out.push({ ...box, score: Math.fround(1 / (1 + Math.exp(-heat[cell]!))), movement: { dx: at(5) / scaleX, dy: at(6) / scaleY } });
  }
  out.sort((a, b) => b.score - a.score);
  return out.slice(0, options.maxDetections ?? 300);
}
