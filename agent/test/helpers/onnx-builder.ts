import protobuf from 'protobufjs';

/**
 * Builds tiny ONNX models in tests. The schema below is the subset of onnx.proto that these graphs need,
 * written from the ONNX IR specification's field numbers.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: { type: 'int64', id: 1 },
            producerName: { type: 'string', id: 2 },
            graph: { type: 'GraphProto', id: 7 },
            opsetImport: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 },
          },
        },
        OperatorSetIdProto: { fields: { domain: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 } } },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
          },
        },
        NodeProto: {
          fields: {
            input: { rule: 'repeated', type: 'string', id: 1 },
            output: { rule: 'repeated', type: 'string', id: 2 },
            name: { type: 'string', id: 3 },
            opType: { type: 'string', id: 4 },
            attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 },
          },
        },
        AttributeProto: {
          fields: {
            name: { type: 'string', id: 1 },
            f: { type: 'float', id: 2 },
            i: { type: 'int64', id: 3 },
            s: { type: 'bytes', id: 4 },
            t: { type: 'TensorProto', id: 5 },
            ints: { rule: 'repeated', type: 'int64', id: 8 },
            type: { type: 'int32', id: 20 },
          },
        },
        TensorProto: {
          fields: {
            dims: { rule: 'repeated', type: 'int64', id: 1 },
            dataType: { type: 'int32', id: 2 },
            floatData: { rule: 'repeated', type: 'float', id: 4, options: { packed: true } },
            int64Data: { rule: 'repeated', type: 'int64', id: 7, options: { packed: true } },
            name: { type: 'string', id: 8 },
            rawData: { type: 'bytes', id: 9 },
          },
        },
        ValueInfoProto: { fields: { name: { type: 'string', id: 1 }, type: { type: 'TypeProto', id: 2 } } },
        TypeProto: {
          fields: { tensorType: { type: 'TypeProtoTensor', id: 1 } },
        },
        TypeProtoTensor: { fields: { elemType: { type: 'int32', id: 1 }, shape: { type: 'TensorShapeProto', id: 2 } } },
        TensorShapeProto: { fields: { dim: { rule: 'repeated', type: 'Dimension', id: 1 } } },
        Dimension: { fields: { dimValue: { type: 'int64', id: 1 }, dimParam: { type: 'string', id: 2 } } },
      },
    },
  },
});

const ModelProto = root.lookupType('onnx.ModelProto');
const FLOAT = 1;
export const UINT8 = 2;
export const INT8 = 3;
const INT64 = 7;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_STRING = 3;
const ATTRIBUTE_TENSOR = 4;
const ATTRIBUTE_INTS = 7;

export type Dims = (number | string)[];

export function valueInfo(name: string, dims: Dims, elemType: number = FLOAT) {
  return { name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } } };
}

export function floatTensor(name: string, dims: number[], values: ArrayLike<number>) {
  return { name, dims, dataType: FLOAT, floatData: Array.from(values) };
}

/** A uint8 or int8 tensor (`UINT8`, `INT8`), stored as raw bytes. */
export function byteTensor(name: string, dims: number[], dataType: typeof UINT8 | typeof INT8, values: ArrayLike<number>) {
  const rawData = dataType === INT8 ? new Uint8Array(Int8Array.from(values).buffer) : Uint8Array.from(values);
  return { name, dims, dataType, rawData };
}

export function int64Tensor(name: string, values: number[]) {
  return { name, dims: [values.length], dataType: INT64, int64Data: values };
}

export function node(opType: string, inputs: string[], outputs: string[], attributes: Record<string, number | number[] | string | ReturnType<typeof floatTensor>> = {}) {
  const attribute = Object.entries(attributes).map(([name, value]) => {
    if (Array.isArray(value)) return { name, ints: value, type: ATTRIBUTE_INTS };
    if (typeof value === 'number') return { name, i: value, type: ATTRIBUTE_INT };
    if (typeof value === 'string') return { name, s: Buffer.from(value), type: ATTRIBUTE_STRING };
    return { name, t: value, type: ATTRIBUTE_TENSOR };
  });
  return { opType, input: inputs, output: outputs, name: `${opType}_${outputs[0]}`, attribute };
}

export function encodeModel(graph: { nodes: ReturnType<typeof node>[]; inputs: ReturnType<typeof valueInfo>[]; outputs: ReturnType<typeof valueInfo>[]; initializers?: object[] }, opset = 13): Uint8Array {
  const message = ModelProto.fromObject({
    irVersion: 7,
    producerName: 'hivegate-tests',
    opsetImport: [{ domain: '', version: opset }],
    graph: { name: 'g', node: graph.nodes, input: graph.inputs, output: graph.outputs, initializer: graph.initializers ?? [] },
  });
  return ModelProto.encode(message).finish();
}

/** The int8 initializers of an ONNX model, by name (as qdq.py writes them: raw bytes). */
export function int8Initializers(model: Uint8Array): Map<string, Int8Array> {
  const decoded = ModelProto.toObject(ModelProto.decode(model), { bytes: Array }) as { graph?: { initializer?: { name: string; dataType: number; rawData?: number[] }[] } };
  const found = new Map<string, Int8Array>();
  for (const tensor of decoded.graph?.initializer ?? []) {
    if (tensor.dataType === INT8) found.set(tensor.name, Int8Array.from(tensor.rawData ?? [], (byte) => (byte << 24) >> 24));
  }
  return found;
}

/**
 * An 8-bit 1×1 convolution (dequantize, convolve, quantize: onnxruntime fuses it into a QLinearConv) of 16 channels
 * with every weight at `weight` (scale 1/weight, so each is 1.0) and a bytes input at 1/255 a step: for an input of
 * 255 everywhere the exact output is 16.
 */
export function quantizedConvModel(weight: number): Uint8Array {
  const channels = 16;
  return encodeModel({
    inputs: [valueInfo('bytes', [1, channels, 1, 1], UINT8)],
    outputs: [valueInfo('sum', [1, 1, 1, 1])],
    initializers: [
      floatTensor('inputScale', [], [1 / 255]),
      byteTensor('inputZero', [], UINT8, [0]),
      byteTensor('weights', [1, channels, 1, 1], INT8, new Array<number>(channels).fill(weight)),
      floatTensor('weightScale', [], [1 / weight]),
      byteTensor('weightZero', [], INT8, [0]),
      floatTensor('outputScale', [], [0.1]),
      byteTensor('outputZero', [], UINT8, [0]),
    ],
    nodes: [
      node('DequantizeLinear', ['bytes', 'inputScale', 'inputZero'], ['input']),
      node('DequantizeLinear', ['weights', 'weightScale', 'weightZero'], ['kernel']),
      node('Conv', ['input', 'kernel'], ['convolved'], { kernel_shape: [1, 1] }),
      node('QuantizeLinear', ['convolved', 'outputScale', 'outputZero'], ['quantized']),
      node('DequantizeLinear', ['quantized', 'outputScale', 'outputZero'], ['sum']),
    ],
  });
}

/**
 * A YOLO-layout model whose single output `output0 [1, 4+classes, N]` is the given constant, whatever the
 * input (the input still flows through a zero-weight term so the graph uses it).
 */
export function yoloConstantModel(input: { width: number; height: number }, rows: number[][]): Uint8Array {
  const channels = rows.length;
  const anchors = rows[0]!.length;
  const flat = rows.flat();
  return encodeModel({
    inputs: [valueInfo('images', [1, 3, input.height, input.width])],
    outputs: [valueInfo('output0', [1, channels, anchors])],
    initializers: [floatTensor('boxes', [1, channels, anchors], flat), floatTensor('zero', [], [0])],
    nodes: [
      node('ReduceMean', ['images'], ['mean'], { keepdims: 0 }),
      node('Mul', ['mean', 'zero'], ['nothing']),
      node('Add', ['boxes', 'nothing'], ['output0']),
    ],
  });
}

/** A `[1, 2, gh, gw]` size output holding the same box everywhere: widths, then heights. */
function constantSizes(gh: number, gw: number, box: { w: number; h: number }) {
  const sizes = new Float32Array(2 * gh * gw);
  sizes.fill(box.w, 0, gh * gw);
  sizes.fill(box.h, gh * gw);
  return floatTensor('sizes', [1, 2, gh, gw], sizes);
}

/**
 * A CenterNet-layout model: `heatmap [1,1,H/4,W/4]` is the 4×4 max-pool of the input's red channel (so a red
 * dot in the frame is a peak), `size [1,2,H/4,W/4]` is a constant box size everywhere.
 */
export function centerNetModel(input: { width: number; height: number }, box: { w: number; h: number }): Uint8Array {
  const gh = input.height / 4;
  const gw = input.width / 4;
  return encodeModel({
    inputs: [valueInfo('images', [1, 3, input.height, input.width])],
    outputs: [valueInfo('heatmap', [1, 1, gh, gw]), valueInfo('size', [1, 2, gh, gw])],
    initializers: [
      int64Tensor('starts', [0]),
      int64Tensor('ends', [1]),
      int64Tensor('axes', [1]),
      constantSizes(gh, gw, box),
      floatTensor('zero', [], [0]),
    ],
    nodes: [
      node('Slice', ['images', 'starts', 'ends', 'axes'], ['red']),
      node('MaxPool', ['red'], ['heatmap'], { kernel_shape: [4, 4], strides: [4, 4] }),
      node('ReduceMean', ['images'], ['mean'], { keepdims: 0 }),
      node('Mul', ['mean', 'zero'], ['nothing']),
      node('Add', ['sizes', 'nothing'], ['size']),
    ],
  });
}

/**
 * A two-frame CenterNet-layout model (input `[1, 6, H, W]`: this frame's RGB, then the previous frame's):
 * `heatmap` and `size` as in `centerNetModel` from this frame's red channel, and `movement [1,2,H/4,W/4]` whose
 * two planes are both `scale × (pool(this red) − pool(previous red))`: at a red dot that is new since the previous
 * frame it reads `scale` input pixels, at one that was already there 0. That shows which frame the detector fed as
 * the previous one. With `input` 'any' it takes any input size (sides multiples of 4), as a slot model does: its
 * size output is then built from the heatmap's shape instead of a constant. With `bytes` it takes what an 8-bit model
 * takes, uint8 channels last: `rows` `[1, H, W, 6]`, `blocks` `[1, H/2, W/2, 24]` (2×2 blocks, this frame's then
 * the previous one's, as `quantize-detector` makes them), which it turns into the float input first.
 */
export function centerNetPairModel(input: { width: number; height: number } | 'any', box: { w: number; h: number }, scale: number, options: { bytes?: 'rows' | 'blocks' } = {}): Uint8Array {
  const fixed = input !== 'any';
  const [h, w, gh, gw]: Dims = fixed ? [input.height, input.width, input.height / 4, input.width / 4] : ['height', 'width', 'gh', 'gw'];
  const sizes = fixed
    ? { initializers: [constantSizes(gh as number, gw as number, box)], nodes: [node('Identity', ['sizes'], ['size'])] }
    : {
        initializers: [floatTensor('zero', [], [0]), floatTensor('boxW', [], [box.w]), floatTensor('boxH', [], [box.h])],
        nodes: [
          node('Mul', ['heatmap', 'zero'], ['zeros']),
          node('Add', ['zeros', 'boxW'], ['widths']),
          node('Add', ['zeros', 'boxH'], ['heights']),
          node('Concat', ['widths', 'heights'], ['size'], { axis: 1 }),
        ],
      };
  const toFloat = [node('Cast', ['bytes'], ['byteValues'], { to: FLOAT }), node('Mul', ['byteValues', 'byteScale'], ['channelsLast'])];
  const bytes = {
    rows: { nodes: [...toFloat, node('Transpose', ['channelsLast'], ['images'], { perm: [0, 3, 1, 2] })] },
    // A block's channels are (frame, row, column, RGB); put the frame after the pixel's place, (row, column,
    // channel), which is DepthToSpace's DCR order.
    blocks: {
      nodes: [
        ...toFloat,
        node('Reshape', ['channelsLast', 'framesThenPlaces'], ['byFrame']),
        node('Transpose', ['byFrame'], ['byPlace'], { perm: [0, 1, 2, 4, 3, 5] }),
        node('Reshape', ['byPlace', 'blockChannels'], ['placesThenChannels']),
        node('Transpose', ['placesThenChannels'], ['blockPlanes'], { perm: [0, 3, 1, 2] }),
        node('DepthToSpace', ['blockPlanes'], ['images'], { blocksize: 2 }),
      ],
      initializers: [int64Tensor('framesThenPlaces', [0, 0, 0, 2, 4, 3]), int64Tensor('blockChannels', [0, 0, 0, 24])],
    },
  };
  const half = (d: number | string) => (typeof d === 'number' ? d / 2 : `${d}/2`);
  const byteInput = {
    rows: valueInfo('bytes', [1, h!, w!, 6], UINT8),
    blocks: valueInfo('bytes', [1, half(h!), half(w!), 24], UINT8),
  };
  return encodeModel({
    inputs: [options.bytes ? byteInput[options.bytes] : valueInfo('images', [1, 6, h!, w!])],
    outputs: [valueInfo('heatmap', [1, 1, gh!, gw!]), valueInfo('size', [1, 2, gh!, gw!]), valueInfo('movement', [1, 2, gh!, gw!])],
    initializers: [
      int64Tensor('red', [0]),
      int64Tensor('redEnd', [1]),
      int64Tensor('previousRed', [3]),
      int64Tensor('previousRedEnd', [4]),
      int64Tensor('axes', [1]),
      floatTensor('scale', [], [scale]),
      ...sizes.initializers,
      ...(options.bytes ? [floatTensor('byteScale', [], [1 / 255])] : []),
      ...(options.bytes === 'blocks' ? bytes.blocks.initializers : []),
    ],
    nodes: [
      ...(options.bytes ? bytes[options.bytes].nodes : []),
      node('Slice', ['images', 'red', 'redEnd', 'axes'], ['current']),
      node('Slice', ['images', 'previousRed', 'previousRedEnd', 'axes'], ['previous']),
      node('MaxPool', ['current'], ['heatmap'], { kernel_shape: [4, 4], strides: [4, 4] }),
      node('MaxPool', ['previous'], ['previousPeaks'], { kernel_shape: [4, 4], strides: [4, 4] }),
      node('Sub', ['heatmap', 'previousPeaks'], ['appeared']),
      node('Mul', ['appeared', 'scale'], ['moved']),
      node('Concat', ['moved', 'moved'], ['movement'], { axis: 1 }),
      ...sizes.nodes,
    ],
  });
}
