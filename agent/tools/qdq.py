#!/usr/bin/env python3
"""Rewrites the bee detector's float ONNX graph into an 8-bit one that onnxruntime runs with integer kernels.

Two steps, driven by `quantize-detector.ts`, which runs the float model over real frames in between:

  qdq.py expose MODEL OUT      writes MODEL with every tensor that will be quantized added as an output, and prints
                               those tensors' names as JSON (the driver records their ranges)
  qdq.py quantize MODEL RANGES OUT [--weight-bits 7|8]
                               writes the 8-bit model: RANGES is a JSON object of tensor name -> [low, high]

The 8-bit model is the float graph with QuantizeLinear/DequantizeLinear pairs ("QDQ") around every convolution,
addition and upsampling; onnxruntime fuses each such group into one integer operator (QLinearConv, QLinearAdd),
and a Relu followed by a quantizer into the quantizer's range. Weights are int8, symmetric, one scale per output
channel (with `--weight-bits 7` within ±63: on x86 CPUs without VNNI onnxruntime's fast kernel adds two products of
a uint8 activation and an int8 weight in 16 bits, which 2 × 255 × 127 overflows and 2 × 255 × 63 does not; the
agent has onnxruntime take an exact, slower kernel there for 8-bit weights, and 7-bit ones cost some accuracy, see
docs/benchmarks.md); biases int32 at the product of the input's and the weight's scales (what QLinearConv expects); activations
uint8 over the range the driver saw. The input is bytes divided by 255, so its range is exactly [0, 1] at a step of
1/255: it loses nothing. So the 8-bit model takes those bytes themselves, channels last and in blocks of 2×2
pixels ([1, H/2, W/2, 4·C] uint8: for each block this frame's top-left, top-right, bottom-left and bottom-right pixel,
RGB each, then the previous frame's). The agent writes them without converting to float (a quarter of the memory),
a frame's twelve bytes of a block in one run, as 32-bit words; onnxruntime's channels-last integer convolutions read them without a quantizer or a transpose; and the
first convolution (3×3, stride 2) becomes a 2×2 one over 4·C channels with the same weights, which onnxruntime runs
in half the time, as wide inputs suit its matrix kernels better than six channels do. The outputs stay float; the
four of them (heatmap, size, offset, movement) become one, `heads`: the last convolution's output before the pixel
shuffle that doubles its resolution, which the agent decodes where it is laid out (`decodeCenterNetHeads`), so
onnxruntime does not shuffle, slice, sigmoid and rectify every cell of it for the few cells that hold a bee.
"""

import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantized_tensors(graph):
    """Tensors that get a quantize/dequantize pair: every input of a convolution, addition or upsampling but the
    network's input (its range is known). Those are Relu outputs (onnxruntime folds the Relu into the quantizer's
    range), the lateral convolutions' outputs and the additions' and upsamplings' outputs; nothing after the last
    convolution, so the outputs stay float."""
    producers = {out: node for node in graph.node for out in node.output}
    names = []
    for node in graph.node:
        if node.op_type == "Conv":
            inputs = [node.input[0]]
        elif node.op_type == "Add":
            inputs = list(node.input)
        elif node.op_type == "Resize":
            inputs = [node.input[0]]
        else:
            continue
        for name in inputs:
            if name != graph.input[0].name and name not in names and name in producers:
                names.append(name)
    return names


def expose(model_path, out_path):
    model = onnx.load(model_path)
    names = quantized_tensors(model.graph)
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    onnx.save(model, out_path)
    print(json.dumps(names))


def activation_scale(low, high):
    """uint8 scale and zero point for [low, high], widened to include 0 (ONNX needs 0 to be exact)."""
    low, high = min(low, 0.0), max(high, 0.0)
    if high - low < 1e-6:
        high = low + 1e-6
    scale = (high - low) / 255.0
    zero_point = int(np.clip(round(-low / scale), 0, 255))
    return np.float32(scale), np.uint8(zero_point)


def quantize(model_path, ranges_path, out_path, weight_bits=8):
    if weight_bits not in (7, 8):
        sys.exit(f"--weight-bits takes 7 or 8, got {weight_bits}")
    # The largest weight step: 127 for 8 bits, 63 for 7 (see the module's notes on x86 without VNNI).
    weight_max = 2 ** (weight_bits - 1) - 1
    model = onnx.load(model_path)
    graph = model.graph
    with open(ranges_path) as f:
        ranges = json.load(f)
    initializers = {init.name: init for init in graph.initializer}
    input_name = graph.input[0].name
    added = []
    nodes = []
    dequantized = {}
    scales = {}

    def constant(array, name):
        added.append(numpy_helper.from_array(array, name))
        return name

    def dequantize(name):
        """The name of `name` after a quantize/dequantize round trip (made once per tensor)."""
        if name in dequantized:
            return dequantized[name]
        if name == input_name:
            scale, zero_point = np.float32(1.0 / 255.0), np.uint8(0)
        else:
            if name not in ranges:
                sys.exit(f"no range for tensor {name}: calibrate with the model this rewrite reads")
            scale, zero_point = activation_scale(*ranges[name])
        scales[name] = float(scale)
        s = constant(np.array(scale, np.float32), f"{name}/scale")
        z = constant(np.array(zero_point, np.uint8), f"{name}/zero_point")
        nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [f"{name}/q"]))
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}/q", s, z], [f"{name}/dq"]))
        dequantized[name] = f"{name}/dq"
        return dequantized[name]

    convs = [node for node in graph.node if node.op_type == "Conv"]
    for node in graph.node:
        node = onnx.NodeProto.FromString(node.SerializeToString())
        if node.op_type == "Conv":
            x, w_name = node.input[0], node.input[1]
            x_dq = dequantize(x)
            weight = numpy_helper.to_array(initializers[w_name]).astype(np.float32)
            w_scale = np.maximum(np.abs(weight.reshape(weight.shape[0], -1)).max(axis=1), 1e-12) / weight_max
            w_int8 = np.clip(np.round(weight / w_scale.reshape(-1, 1, 1, 1)), -weight_max, weight_max).astype(np.int8)
            w_s = constant(w_scale.astype(np.float32), f"{w_name}/scale")
            w_z = constant(np.zeros(len(w_scale), np.int8), f"{w_name}/zero_point")
            nodes.append(helper.make_node("DequantizeLinear", [constant(w_int8, f"{w_name}/int8"), w_s, w_z], [f"{w_name}/dq"], axis=0))
            inputs = [x_dq, f"{w_name}/dq"]
            if len(node.input) > 2 and node.input[2]:
                b_name = node.input[2]
                bias = numpy_helper.to_array(initializers[b_name]).astype(np.float32)
                b_scale = (scales[x] * w_scale).astype(np.float32)
                b_int32 = np.round(bias / b_scale).astype(np.int32)
                b_s = constant(b_scale, f"{b_name}/scale")
                b_z = constant(np.zeros(len(b_scale), np.int32), f"{b_name}/zero_point")
                nodes.append(helper.make_node("DequantizeLinear", [constant(b_int32, f"{b_name}/int32"), b_s, b_z], [f"{b_name}/dq"], axis=0))
                inputs.append(f"{b_name}/dq")
            del node.input[:]
            node.input.extend(inputs)
        elif node.op_type == "Add":
            inputs = [dequantize(name) for name in node.input]
            del node.input[:]
            node.input.extend(inputs)
        elif node.op_type == "Resize":
            node.input[0] = dequantize(node.input[0])
        nodes.append(node)
    # A quantizer must follow the node that makes its tensor: order the nodes so that every input exists first.
    available = {input_name} | set(initializers) | {init.name for init in added}
    ordered = []
    while nodes:
        ready = [node for node in nodes if all(not name or name in available for name in node.input)]
        if not ready:
            sys.exit("the graph has a cycle or an input that nothing makes")
        for node in ready:
            ordered.append(node)
            available.update(node.output)
        nodes = [node for node in nodes if node not in ready]
    del graph.node[:]
    graph.node.extend(ordered)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in list(graph.initializer) + added if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    model.producer_name = "hivegate qdq.py"
    byte_input(model)
    blocks_input(model)
    heads_output(model)
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    print(f"{len(convs)} convolutions quantized -> {out_path}", file=sys.stderr)


def byte_input(model):
    """Makes the network's input the bytes its quantizer would make: the float input [1, C, H, W] in 0..1, whose
    only consumer quantizes it at a step of 1/255 from 0, becomes a uint8 input [1, H, W, C] and a transpose to the
    quantizer's output. Every value after that is as before (up to how a byte/255 that lies exactly halfway between
    two steps would have rounded)."""
    graph = model.graph
    source = graph.input[0]
    name = source.name
    consumers = [node for node in graph.node if name in node.input]
    initializers = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    quantizer = consumers[0] if len(consumers) == 1 else None
    if quantizer is None or quantizer.op_type != "QuantizeLinear" or quantizer.input[0] != name:
        sys.exit(f"input {name} must feed one QuantizeLinear and nothing else (a model made by qdq.py quantize)")
    scale = initializers.get(quantizer.input[1])
    zero_point = initializers.get(quantizer.input[2]) if len(quantizer.input) > 2 else None
    if scale is None or zero_point is None or zero_point.dtype != np.uint8 or int(zero_point) != 0 or scale.astype(np.float32) != np.float32(1.0 / 255.0):
        sys.exit(f"input {name} is not quantized to bytes (step 1/255 from 0): it cannot take bytes directly")
    batch, channels, height, width = source.type.tensor_type.shape.dim
    transpose = helper.make_node("Transpose", [name], [quantizer.output[0]], name=f"{name}/channels_first", perm=[0, 3, 1, 2])
    nodes = [transpose] + [node for node in graph.node if node is not quantizer]
    del graph.node[:]
    graph.node.extend(nodes)
    byte_source = helper.make_tensor_value_info(name, TensorProto.UINT8, [dim.dim_value or dim.dim_param for dim in (batch, height, width, channels)])
    byte_source.doc_string = "bytes, channels last: RGB of this frame, then of the previous one"
    graph.input.remove(source)
    graph.input.insert(0, byte_source)
    used = {input_name for node in graph.node for input_name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def attribute(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return list(helper.get_attribute_value(a)) if a.type == onnx.AttributeProto.INTS else helper.get_attribute_value(a)
    return default


def blocks_input(model):
    """Makes a byte input [1, H, W, C] whose first convolution is 3×3 with stride 2 and padding 1 a block input
    [1, H/2, W/2, 4·C], each pixel holding a 2×2 block of the picture (frame by frame, C/3 of them: that frame's
    pixels, rows then columns, RGB each), and that convolution a 2×2 one with stride 1 and padding 1 above and left. The output is the same: a 3×3 window at stride 2
    starts one row above a block and covers that row's bottom half and its own block's two rows, so kernel row 0 meets
    the block above's bottom row, rows 1 and 2 its own block's top and bottom rows (likewise for columns); the other
    weights are zero."""
    graph = model.graph
    source = graph.input[0]
    transpose = next(node for node in graph.node if source.name in node.input)
    dequantizers = [node for node in graph.node if transpose.output[0] in node.input]
    dequantizer = dequantizers[0] if len(dequantizers) == 1 else None
    convs = [node for node in graph.node if dequantizer is not None and dequantizer.output[0] in node.input]
    conv = convs[0] if len(convs) == 1 and convs[0].op_type == "Conv" and convs[0].input[0] == dequantizer.output[0] else None
    if dequantizer is None or dequantizer.op_type != "DequantizeLinear" or conv is None:
        sys.exit(f"input {source.name} must feed one convolution through its dequantizer (a model made by qdq.py quantize)")
    if (attribute(conv, "kernel_shape", None), attribute(conv, "strides", None), attribute(conv, "pads", [0, 0, 0, 0]), attribute(conv, "group", 1), attribute(conv, "dilations", [1, 1])) != ([3, 3], [2, 2], [1, 1, 1, 1], 1, [1, 1]):
        sys.exit("the first convolution must be 3x3 with stride 2 and padding 1 to read 2x2 blocks")
    weight_producer = next(node for node in graph.node if node.output[0] == conv.input[1])
    initializers = {init.name: init for init in graph.initializer}
    weight = numpy_helper.to_array(initializers[weight_producer.input[0]])
    outputs, channels = weight.shape[:2]
    if channels % 3 != 0:
        sys.exit(f"the first convolution must read RGB frames (a multiple of 3 channels), got {channels}")
    blocks = np.zeros((outputs, 4 * channels, 2, 2), weight.dtype)
    # (kernel position over blocks, row or column within the block) -> the 3x3 kernel's row or column
    taps = {(0, 1): 0, (1, 0): 1, (1, 1): 2}
    for (block_row, dy), ky in taps.items():
        for (block_column, dx), kx in taps.items():
            for frame in range(channels // 3):
                # Frame by frame, then the pixel's place in the block, then RGB: one frame's block is 12 bytes in a row.
                first = frame * 12 + (dy * 2 + dx) * 3
                blocks[:, first:first + 3, block_row, block_column] = weight[:, frame * 3:frame * 3 + 3, ky, kx]
    initializers[weight_producer.input[0]].CopyFrom(numpy_helper.from_array(blocks, weight_producer.input[0]))
    for a in [a for a in conv.attribute if a.name in ("kernel_shape", "strides", "pads")]:
        conv.attribute.remove(a)
    conv.attribute.extend([helper.make_attribute("kernel_shape", [2, 2]), helper.make_attribute("strides", [1, 1]), helper.make_attribute("pads", [1, 1, 0, 0])])
    batch, height, width, _ = source.type.tensor_type.shape.dim
    half = lambda dim: dim.dim_value // 2 if dim.dim_value else f"{dim.dim_param}/2"
    block_source = helper.make_tensor_value_info(source.name, TensorProto.UINT8, [batch.dim_value or batch.dim_param, half(height), half(width), 4 * channels])
    block_source.doc_string = "bytes, channels last, in 2x2 blocks: each block's top-left, top-right, bottom-left, bottom-right pixel, RGB each, of this frame, then the same of the previous one"
    graph.input.remove(source)
    graph.input.insert(0, block_source)


# The float model's outputs as slices of the pixel-shuffled last convolution: channels [start, end) and the
# function applied to them (train-detector's export; `HEAD_PLANES` in the agent's decode.ts).
HEADS = {"heatmap": (0, 1, "Sigmoid"), "size": (1, 3, "Relu"), "offset": (3, 5, None), "movement": (5, 7, None)}
HEAD_PLANES = 7


def heads_output(model):
    """Replaces the outputs heatmap, size, offset and movement, which are channel slices of a DepthToSpace (CRD,
    block 2) of the last convolution (the heatmap through a sigmoid, the size through a ReLU), by that convolution's
    output itself, named `heads`. Checks the pattern first: a graph that differs is refused, not guessed at."""
    graph = model.graph
    producers = {out: node for node in graph.node for out in node.output}
    constants = {node.output[0]: numpy_helper.to_array(node.attribute[0].t) for node in graph.node if node.op_type == "Constant"}
    initializers = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    value = lambda name: constants[name] if name in constants else initializers.get(name)
    if sorted(output.name for output in graph.output) != sorted(HEADS):
        sys.exit(f"the outputs must be {', '.join(HEADS)} to become one heads output")
    removed = []
    shuffle = None
    for output in graph.output:
        start, end, activation = HEADS[output.name]
        node = producers[output.name]
        if activation:
            if node.op_type != activation:
                sys.exit(f"output {output.name} must come from a {activation}")
            removed.append(node)
            node = producers[node.input[0]]
        # starts, ends, axes and (when given) steps
        ranges = [value(name) for name in node.input[1:5]] if node.op_type == "Slice" and len(node.input) >= 4 else None
        if ranges is None or any(r is None for r in ranges) or [int(r[0]) for r in ranges] not in ([start, end, 1], [start, end, 1, 1]):
            sys.exit(f"output {output.name} must be channels {start}..{end} of the shuffled last convolution")
        removed.append(node)
        source = producers[node.input[0]]
        if source.op_type != "DepthToSpace" or attribute(source, "blocksize", 0) != 2 or attribute(source, "mode", b"DCR") != b"CRD" or (shuffle and source is not shuffle):
            sys.exit(f"output {output.name} must come from one DepthToSpace (CRD, block 2)")
        shuffle = source
    removed.append(shuffle)
    used_elsewhere = {name for node in graph.node if node not in removed for name in node.input}
    if set(shuffle.output) & used_elsewhere:
        sys.exit("the shuffled last convolution feeds something besides the outputs")
    last = producers[shuffle.input[0]]
    batch, _, height, width = next(o for o in graph.output if o.name == "heatmap").type.tensor_type.shape.dim
    half = lambda dim, name: dim.dim_value // 2 if dim.dim_value else name
    last.output[0] = "heads"
    kept = [node for node in graph.node if node not in removed]
    still_used = {name for node in kept for name in node.input} | {"heads"}
    kept = [node for node in kept if node.op_type != "Constant" or node.output[0] in still_used]
    del graph.node[:]
    graph.node.extend(kept)
    # The slices' bounds, when they were initializers rather than Constant nodes.
    used = {name for node in kept for name in node.input}
    kept_initializers = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept_initializers)
    del graph.output[:]
    heads = helper.make_tensor_value_info("heads", TensorProto.FLOAT, [batch.dim_value or batch.dim_param, 4 * HEAD_PLANES, half(height, "heads_height"), half(width, "heads_width")])
    heads.doc_string = "heatmap logits, size before its ReLU, offset, movement: 7 planes at twice this resolution, in DepthToSpace CRD order (4 channels each)"
    graph.output.append(heads)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "expose":
        expose(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "quantize":
        quantize(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 7 and sys.argv[1] == "quantize" and sys.argv[5] == "--weight-bits" and sys.argv[6].isdigit():
        quantize(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[6]))
    else:
        sys.exit(__doc__)
