import * as ort from 'onnxruntime-node';
import type { Frame } from '../capture/frame.ts';
import { decodeCenterNet, decodeYolo } from './decode.ts';
import { letterbox, resamplerFor, stretch, toInputTensor, type InputMapping, type Resampler } from './preprocess.ts';
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
}

interface ModelShape {
  layout: ModelLayout;
  inputName: string;
  inputWidth: number;
  inputHeight: number;
}

/**
 * Recognises the output layout: the project's CenterNet model names its outputs `heatmap` and `size` (and
 * optionally `offset`); a YOLOv8/11
 * export has a single output `[1, 4+classes, N]` (fewer rows than anchors).
 */
export function detectLayout(inputs: readonly ort.InferenceSession.ValueMetadata[], outputs: readonly ort.InferenceSession.ValueMetadata[], fallback: { width?: number; height?: number } = {}): ModelShape {
  const input = inputs[0];
  if (!input) throw new Error('model has no input');
  const inputShape = input.isTensor ? input.shape : [];
  if (inputShape.length !== 4 || (typeof inputShape[1] === 'number' && inputShape[1] !== 3)) {
    throw new Error(`model input ${input.name} must be [1, 3, H, W], got [${inputShape.join(', ')}]`);
  }
  const names = outputs.map((o) => o.name);
  const describe = () => outputs.map((o) => `${o.name} [${o.isTensor ? o.shape.join(', ') : 'non-tensor'}]`).join(', ');
  let layout: ModelLayout;
  if (names.includes('heatmap') && names.includes('size')) {
    layout = 'centernet';
  } else if (outputs.length === 1 && outputs[0]!.isTensor && outputs[0]!.shape.length === 3) {
    const [, rows, anchors] = outputs[0]!.shape;
    if (typeof rows === 'number' && typeof anchors === 'number' && rows > anchors) {
      throw new Error(`model output ${describe()} looks transposed ([1, N, 4+classes]); export it as [1, 4+classes, N]`);
    }
    layout = 'yolo';
  } else {
    throw new Error(`unrecognised model outputs ${describe()}: expected a YOLOv8/11 export [1, 4+classes, N] or CenterNet outputs "heatmap" and "size"`);
  }
  const height = typeof inputShape[2] === 'number' ? inputShape[2] : fallback.height;
  const width = typeof inputShape[3] === 'number' ? inputShape[3] : fallback.width;
  if (!height || !width) throw new Error(`model input ${input.name} has a dynamic size: set the detector input width and height`);
  return { layout, inputName: input.name, inputWidth: width, inputHeight: height };
}

/** A detector backed by an ONNX model on onnxruntime's CPU provider. */
export class OnnxDetector implements Detector {
  private mapping: InputMapping | undefined;
  private resampler: Resampler | undefined;
  private mappingKey = '';
  private buffer: Float32Array;

  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly shape: ModelShape,
    private readonly options: OnnxDetectorOptions,
  ) {
    this.buffer = new Float32Array(3 * shape.inputWidth * shape.inputHeight);
  }

  static async load(path: string, options: OnnxDetectorOptions = {}): Promise<OnnxDetector> {
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(path, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        ...(options.threads ? { intraOpNumThreads: options.threads } : {}),
      });
    } catch (error) {
      throw new Error(`cannot load ONNX model ${path}: ${(error as Error).message}`);
    }
    const fallback = { ...(options.inputWidth ? { width: options.inputWidth } : {}), ...(options.inputHeight ? { height: options.inputHeight } : {}) };
    const shape = detectLayout(session.inputMetadata, session.outputMetadata, fallback);
    return new OnnxDetector(session, shape, options);
  }

  get layout(): ModelLayout {
    return this.shape.layout;
  }

  get inputSize(): { width: number; height: number } {
    return { width: this.shape.inputWidth, height: this.shape.inputHeight };
  }

  async detect(frame: Frame): Promise<Detection[]> {
    const { inputWidth, inputHeight, inputName, layout } = this.shape;
    const key = `${frame.width}x${frame.height}`;
    if (key !== this.mappingKey) {
      this.mappingKey = key;
      this.mapping = (layout === 'yolo' ? letterbox : stretch)(frame.width, frame.height, inputWidth, inputHeight);
      this.resampler = resamplerFor(frame.width, frame.height, inputWidth, inputHeight, this.mapping);
    }
    const mapping = this.mapping!;
    toInputTensor(frame, inputWidth, inputHeight, mapping, this.buffer, this.resampler);
    const feeds = { [inputName]: new ort.Tensor('float32', this.buffer, [1, 3, inputHeight, inputWidth]) };
    const results = await this.session.run(feeds);
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
    const heatmap = results.heatmap!;
    const size = results.size!;
    const offset = results.offset;
    return decodeCenterNet(heatmap.data as Float32Array, heatmap.dims, size.data as Float32Array, size.dims, {
      threshold: this.options.scoreThreshold ?? 0.35,
      inputWidth,
      inputHeight,
      mapping,
      ...(offset ? { offset: { data: offset.data as Float32Array, dims: offset.dims } } : {}),
    });
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
