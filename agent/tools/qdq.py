#!/usr/bin/env python3
"""Rewrites the bee detector's float ONNX graph into an 8-bit one that onnxruntime runs with integer kernels.

Two steps, driven by `quantize-detector.ts`, which runs the float model over real frames in between:

  qdq.py expose MODEL OUT      writes MODEL with every tensor that will be quantized added as an output, and prints
                               those tensors' names as JSON (the driver records their ranges)
  qdq.py quantize MODEL RANGES OUT
                               writes the 8-bit model: RANGES is a JSON object of tensor name -> [low, high]

The 8-bit model is the float graph with QuantizeLinear/DequantizeLinear pairs ("QDQ") around every convolution,
addition and upsampling; onnxruntime fuses each such group into one integer operator (QLinearConv, QLinearAdd),
and a Relu followed by a quantizer into the quantizer's range. Weights are int8, symmetric, one scale per output
channel; biases int32 at the product of the input's and the weight's scales (what QLinearConv expects); activations
uint8 over the range the driver saw. The input is bytes divided by 255, so its range is exactly [0, 1] at a step of
1/255: it loses nothing. The outputs stay float, so the agent reads the model as it reads the float one.
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


def quantize(model_path, ranges_path, out_path):
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
            w_scale = np.maximum(np.abs(weight.reshape(weight.shape[0], -1)).max(axis=1), 1e-12) / 127.0
            w_int8 = np.clip(np.round(weight / w_scale.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
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
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    print(f"{len(convs)} convolutions quantized -> {out_path}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "expose":
        expose(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "quantize":
        quantize(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
