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
 * bee moved since the previous input frame, input pixels). A bee is a cell above the
 * threshold that is the maximum of its 3×3 neighbourhood; its centre is the middle of that cell, moved by the
 * offset. On a plateau the first cell in raster order wins, so one flat-topped peak gives one bee.
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
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = heatmap[y * w + x]!;
      if (v < options.threshold) continue;
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
      if (!peak) continue;
      const cell = y * w + x;
      const dx = offset ? offset.data[cell]! : 0;
      const dy = offset ? offset.data[plane + cell]! : 0;
      const box = toFramePixels({ x: (x + 0.5) * strideX + dx, y: (y + 0.5) * strideY + dy, w: size[cell]!, h: size[plane + cell]! }, options.mapping);
      if (movement) {
        const { scaleX, scaleY } = options.mapping;
        out.push({ ...box, score: v, movement: { dx: movement.data[cell]! / scaleX, dy: movement.data[plane + cell]! / scaleY } });
      } else {
        out.push({ ...box, score: v });
      }
    }
  }
  out.sort((a, b) => b.score - a.score);
  return out.slice(0, options.maxDetections ?? 300);
}
