import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import type { Frame } from '../capture/frame.ts';
import { hostCpu, int8KernelsOverflow, namesEightBitOperators, type CpuFeatures } from './cpu.ts';
import { decodeCenterNet, decodeCenterNetHeads, decodeYolo } from './decode.ts';
import { letterbox, resamplerFor, stretch, toInputBytes, toInputTensor, type ByteLayout, type ByteScratch, type InputMapping, type Resampler } from './preprocess.ts';
import type { Detection, Detector } from './types.ts';

export type ModelLayout = 'yolo' | 'centernet';

export interface OnnxDetectorOptions {
  /** Minimum class score (YOLO) or heatmap peak (CenterNet). */
  scoreThreshold?: number;
  iouThreshold?: number;
  classes?: readonly number[];
  /** Input size for models whose input shape is dynamic. */
  inputWidth?: number;
  inputHeight?: number;
  threads?: number;
  /**
   * Where the model looks: a part of the frame and the input size it is stretched to, given the frame's size. By
   * default the whole frame goes into the model's own input size (letterboxed for YOLO).
   */
  region?: (frameWidth: number, frameHeight: number) => InputRegion;
  /** Sees every output of every run, by name, before decoding (calibrating an 8-bit copy of the model reads them). */
  observe?: (outputs: ort.InferenceSession.OnnxValueMapType) => void;
}

/**
 * How every detector model is opened. Where onnxruntime's fast 8-bit kernel overflows (`int8KernelsOverflow`), an
 * 8-bit model saw bees on a bright hive wall; there `x64quantprecision` makes onnxruntime rewrite any weights beyond
 * ±64 to unsigned ones and take its exact, slower kernel. Not elsewhere: onnxruntime would rewrite them on CPUs with
 * VNNI too, whose fast kernel is exact, and the shipped whole-frame model took 1.6× as long there.
 */
export function sessionOptions(threads?: number, cpu: CpuFeatures = hostCpu()): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    ...(threads ? { intraOpNumThreads: threads } : {}),
    ...(int8KernelsOverflow(cpu) ? { extra: { session: { x64quantprecision: '1' } } } : {}),
  };
}

/** A rectangle of the frame (frame px) and the model input it is stretched to. */
export interface InputRegion {
  x: number;
  y: number;
  width: number;
  height: number;
  inputWidth: number;
  inputHeight: number;
}

interface ModelShape {
  layout: ModelLayout;
  inputName: string;
  inputWidth: number;
  inputHeight: number;
  /** 1, or 2 for a model that also sees the previous frame (6 input channels: this frame's RGB, then the previous one's). */
  frames: 1 | 2;
  /**
   * `float`: `[1, C, H, W]` float32 in 0..1, channels first. `bytes`: uint8, channels last, `[1, H, W, C]` or, in
   * 2×2 blocks, `[1, H/2, W/2, 4·C]` (an 8-bit model that reads the bytes itself, as `quantize-detector` makes it;
   * `ByteLayout` in preprocess.ts says where each byte goes).
   */
  pixels: 'float' | 'bytes';
  /** 2 for a byte input in 2×2 blocks, else 1. */
  block: 1 | 2;
  /** Whether a CenterNet model gives its planes as one `heads` output before their pixel shuffle (`decodeCenterNetHeads`). */
  heads: boolean;
  /** Whether the model's input height and width are fixed numbers (else the model takes any size). */
  fixedSize: boolean;
}

/** A source that jumps ahead this far (a reconnect, a restart) has no usable previous frame. */
const MAX_PAIR_GAP_MS = 1000;

/**
 * Recognises the output layout: the project's CenterNet model names its outputs `heatmap` and `size` (and
 * optionally `offset` and `movement`; with `movement` its input holds two frames); a YOLOv8/11 export has a
 * single output `[1, 4+classes, N]` (fewer rows than anchors). And the input: float32 channels first, or, for a
 * CenterNet model's 8-bit copy, uint8 channels last, in rows or in 2×2 blocks.
 */
export function detectLayout(inputs: readonly ort.InferenceSession.ValueMetadata[], outputs: readonly ort.InferenceSession.ValueMetadata[], fallback: { width?: number; height?: number } = {}): ModelShape {
  const input = inputs[0];
  if (!input) throw new Error('model has no input');
  const inputShape = input.isTensor ? input.shape : [];
  const pixels = input.isTensor && input.type === 'uint8' ? 'bytes' : 'float';
  const names = outputs.map((o) => o.name);
  const heads = names.includes('heads');
  // The heads hold the movement planes too.
  const twoFrames = heads || names.includes('movement');
  const channels = twoFrames ? 6 : 3;
  // Channels first for float inputs, last for byte inputs, which may come in 2×2 blocks (four pixels' channels).
  const [channelAxis, heightAxis, widthAxis] = pixels === 'bytes' ? [3, 1, 2] : [1, 2, 3];
  const block = pixels === 'bytes' && inputShape[channelAxis] === 4 * channels ? 2 : 1;
  if (inputShape.length !== 4 || (typeof inputShape[channelAxis] === 'number' && inputShape[channelAxis] !== block * block * channels)) {
    const expected = pixels === 'bytes' ? `[1, H, W, ${channels}] or, in 2x2 blocks, [1, H/2, W/2, ${4 * channels}] (uint8)` : `[1, ${channels}, H, W]`;
    throw new Error(`model input ${input.name} must be ${expected}${twoFrames ? ' (this frame and the previous one, for its movement output)' : ''}, got [${inputShape.join(', ')}]`);
  }
  const describe = () => outputs.map((o) => `${o.name} [${o.isTensor ? o.shape.join(', ') : 'non-tensor'}]`).join(', ');
  let layout: ModelLayout;
  if (heads || (names.includes('heatmap') && names.includes('size'))) {
    layout = 'centernet';
  } else if (outputs.length === 1 && outputs[0]!.isTensor && outputs[0]!.shape.length === 3) {
    const [, rows, anchors] = outputs[0]!.shape;
    if (typeof rows === 'number' && typeof anchors === 'number' && rows > anchors) {
      throw new Error(`model output ${describe()} looks transposed ([1, N, 4+classes]); export it as [1, 4+classes, N]`);
    }
    layout = 'yolo';
  } else {
    throw new Error(`unrecognised model outputs ${describe()}: expected a YOLOv8/11 export [1, 4+classes, N] or CenterNet outputs "heatmap" and "size" (or "heads")`);
  }
  const fixedHeight = inputShape[heightAxis];
  const fixedWidth = inputShape[widthAxis];
  const height = typeof fixedHeight === 'number' ? fixedHeight * block : fallback.height;
  const width = typeof fixedWidth === 'number' ? fixedWidth * block : fallback.width;
  if (!height || !width) throw new Error(`model input ${input.name} has a dynamic size: set the detector input width and height`);
  if (twoFrames && layout !== 'centernet') throw new Error('a movement output needs the CenterNet outputs "heatmap" and "size"');
  if (pixels === 'bytes' && layout !== 'centernet') throw new Error(`model input ${input.name} takes bytes: only CenterNet models are read that way (a YOLO export takes float32)`);
  const fixedSize = typeof fixedHeight === 'number' && typeof fixedWidth === 'number';
  return { layout, inputName: input.name, inputWidth: width, inputHeight: height, frames: twoFrames ? 2 : 1, pixels, block, heads, fixedSize };
}

/** A detector backed by an ONNX model on onnxruntime's CPU provider. */
export class OnnxDetector implements Detector {
  private mapping: InputMapping | undefined;
  private resampler: Resampler | undefined;
  private mappingKey = '';
  /** The input size for the current frame size: the model's own, or the region's. */
  private input: { width: number; height: number };
  /** A float model's input; for a two-frame model the second half holds the previous frame's tensor. */
  private buffer: Float32Array;
  /**
   * A byte model's inputs, used in turn: each frame goes into the first one's leading channels and, for a two-frame
   * model, into the second one's trailing channels, where the next frame finds it as its previous frame.
   */
  private bytes: [Uint8Array, Uint8Array];
  /** The heatmap of a `heads` output laid out again, reused from frame to frame. */
  private readonly headsScratch: { heat?: Float32Array } = {};
  /** A byte model's float values on the general resampling path, made there when first needed. */
  private readonly scratch: ByteScratch = {};
  /** Timestamp of the frame in the buffer's first half, once there is one. */
  private lastTimestampMs: number | undefined;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly shape: ModelShape,
    private readonly options: OnnxDetectorOptions,
    /** Whether the model runs onnxruntime's 8-bit kernels. */
    readonly eightBit: boolean,
  ) {
    this.input = { width: shape.inputWidth, height: shape.inputHeight };
    this.buffer = new Float32Array(0);
    this.bytes = [new Uint8Array(0), new Uint8Array(0)];
    this.allocate();
  }

  private allocate(): void {
    const size = 3 * this.shape.frames * this.input.width * this.input.height;
    if (this.shape.pixels === 'bytes') {
      if (this.bytes[0].length !== size) this.bytes = [new Uint8Array(size), new Uint8Array(size)];
    } else if (this.buffer.length !== size) {
      this.buffer = new Float32Array(size);
    }
  }

  static async load(path: string, options: OnnxDetectorOptions = {}): Promise<OnnxDetector> {
    let session: ort.InferenceSession;
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
      session = await ort.InferenceSession.create(bytes, sessionOptions(options.threads));
    } catch (error) {
      throw new Error(`cannot load ONNX model ${path}: ${(error as Error).message}`);
    }
    const fallback = { ...(options.inputWidth ? { width: options.inputWidth } : {}), ...(options.inputHeight ? { height: options.inputHeight } : {}) };
    // A region sets the input size frame by frame; the model only has to accept it.
    const shape = detectLayout(session.inputMetadata, session.outputMetadata, options.region ? { width: 1, height: 1, ...fallback } : fallback);
    return new OnnxDetector(session, shape, options, namesEightBitOperators(bytes));
  }

  get layout(): ModelLayout {
    return this.shape.layout;
  }

  get inputSize(): { width: number; height: number } {
    return { width: this.shape.inputWidth, height: this.shape.inputHeight };
  }

  /** Whether the model sees the previous frame too and says how far each bee moved since. */
  get seesMovement(): boolean {
    return this.shape.frames === 2;
  }

  /**
   * Takes a frame without running the model (a caller that skips this frame): a two-frame model then pairs the next
   * frame with it, so its movements still span one frame. A one-frame model has nothing to keep.
   */
  remember(frame: Frame): void {
    if (this.shape.frames !== 2) return;
    this.fitTo(frame);
    const { width, height } = this.input;
    if (this.shape.pixels === 'bytes') {
      const { frames, block } = this.shape;
      // The next input's previous-frame channels.
      toInputBytes(frame, width, height, this.mapping!, { frames, block }, { data: this.bytes[0], slot: 1 }, undefined, this.resampler, this.scratch);
    } else {
      // Where the last frame goes: the next one moves it to the second half.
      toInputTensor(frame, width, height, this.mapping!, this.buffer.subarray(0, 3 * width * height), this.resampler);
    }
    this.lastTimestampMs = frame.timestampMs;
  }

  private fitTo(frame: Frame): void {
    const key = `${frame.width}x${frame.height}`;
    if (key === this.mappingKey) return;
    this.mappingKey = key;
    this.setMapping(frame.width, frame.height);
    this.lastTimestampMs = undefined;
  }

  async detect(frame: Frame): Promise<Detection[]> {
    const { inputName, layout } = this.shape;
    this.fitTo(frame);
    const mapping = this.mapping!;
    const { width: inputWidth, height: inputHeight } = this.input;
    const pairsWithLast = this.shape.frames === 2 && this.lastTimestampMs !== undefined && frame.timestampMs - this.lastTimestampMs <= MAX_PAIR_GAP_MS && frame.timestampMs >= this.lastTimestampMs;
    this.lastTimestampMs = frame.timestampMs;
    const input = this.shape.pixels === 'bytes' ? this.byteInput(frame, pairsWithLast) : this.floatInput(frame, pairsWithLast);
    const results = await this.session.run({ [inputName]: input });
    this.options.observe?.(results);
    if (layout === 'yolo') {
      const output = results[this.session.outputNames[0]!]!;
      return decodeYolo(output.data as Float32Array, output.dims, {
        scoreThreshold: this.options.scoreThreshold ?? 0.35,
        iouThreshold: this.options.iouThreshold ?? 0.45,
        ...(this.options.classes ? { classes: this.options.classes } : {}),
        mapping,
        frameWidth: frame.width,
        frameHeight: frame.height,
      });
    }
    const threshold = this.options.scoreThreshold ?? 0.35;
    if (this.shape.heads) {
      const heads = results.heads!;
      return decodeCenterNetHeads(heads.data as Float32Array, heads.dims, { threshold, inputWidth, inputHeight, mapping }, this.headsScratch);
    }
    const heatmap = results.heatmap!;
    const size = results.size!;
    const { offset, movement } = results;
    return decodeCenterNet(heatmap.data as Float32Array, heatmap.dims, size.data as Float32Array, size.dims, {
      threshold,
      inputWidth,
      inputHeight,
      mapping,
      ...(offset ? { offset: { data: offset.data as Float32Array, dims: offset.dims } } : {}),
      ...(movement ? { movement: { data: movement.data as Float32Array, dims: movement.dims } } : {}),
    });
  }

  // With nothing usable before it, a frame is its own previous frame (the model was trained on such pairs: every
  // bee's movement is zero).
  private floatInput(frame: Frame, pairsWithLast: boolean): ort.Tensor {
    const { width, height } = this.input;
    const plane = 3 * width * height;
    // The frame in the first half becomes the previous one.
    if (pairsWithLast) this.buffer.copyWithin(plane, 0, plane);
    toInputTensor(frame, width, height, this.mapping!, this.buffer.subarray(0, plane), this.resampler);
    if (this.shape.frames === 2 && !pairsWithLast) this.buffer.copyWithin(plane, 0, plane);
    return new ort.Tensor('float32', this.buffer, [1, 3 * this.shape.frames, height, width]);
  }

  private byteInput(frame: Frame, pairsWithLast: boolean): ort.Tensor {
    const { width, height } = this.input;
    const [input, next] = this.bytes;
    const { frames, block } = this.shape;
    const layout: ByteLayout = { frames, block };
    toInputBytes(frame, width, height, this.mapping!, layout, { data: input, slot: 0 }, frames === 2 ? { data: next, slot: 1 } : undefined, this.resampler, this.scratch);
    if (frames === 2) {
      // This frame is its own previous one too (only on a first frame or after a gap, so written a second time).
      if (!pairsWithLast) toInputBytes(frame, width, height, this.mapping!, layout, { data: input, slot: 1 }, undefined, this.resampler, this.scratch);
      this.bytes = [next, input];
    }
    return new ort.Tensor('uint8', input, [1, height / block, width / block, block * block * 3 * frames]);
  }

  private setMapping(frameWidth: number, frameHeight: number): void {
    const region = this.options.region?.(frameWidth, frameHeight);
    if (region) {
      const { fixedSize, inputWidth, inputHeight } = this.shape;
      if (fixedSize && (region.inputWidth !== inputWidth || region.inputHeight !== inputHeight)) {
        throw new Error(`the model takes only ${inputWidth}x${inputHeight} inputs, but its region needs ${region.inputWidth}x${region.inputHeight}: export it for any input size (train-detector --zoom 2 does)`);
      }
      const scaleX = region.inputWidth / region.width;
      const scaleY = region.inputHeight / region.height;
      this.mapping = { scaleX, scaleY, padX: -region.x * scaleX, padY: -region.y * scaleY };
      this.input = { width: region.inputWidth, height: region.inputHeight };
    } else {
      this.input = { width: this.shape.inputWidth, height: this.shape.inputHeight };
      this.mapping = (this.shape.layout === 'yolo' ? letterbox : stretch)(frameWidth, frameHeight, this.input.width, this.input.height);
    }
    this.allocate();
    this.resampler = resamplerFor(frameWidth, frameHeight, this.input.width, this.input.height, this.mapping);
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
