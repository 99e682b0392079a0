"""A CNN quantized by onnxruntime's ``quantize_static`` (QOperator: QLinearConv), run by ferrum.onnx
and by onnxruntime: ``PYTHONPATH=python /path/to/torch-venv/bin/python benches/onnx_int8_cnn.py``.

The model: ``3 -> 32`` 3x3 conv, ReLU, ``32 -> 64`` 3x3 stride 2, ReLU,
``64 -> 64`` 3x3, ReLU (all padded by 1), then a 3x3 grouped conv (8 groups)
on 32 x 32 images at batch 16 (weights N(0, 2/fan_in)), quantized with
uint8 activations and int8 weights (per tensor) on 8 calibration batches:
QuantizeLinear, QLinearConv, DequantizeLinear. ferrum runs QLinearConv on
its int8 product (im2col of the uint8 input, exact i32 sums). Timing as in
``onnx_int8_mlp.py`` (its ``compare_with_onnxruntime``): the mean of back-to-back calls over 0.2 s, the
candidates taking turns for ``--rounds`` rounds, medians (p50) and spread.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
from harness import bench_parser
from onnx import TensorProto, helper, numpy_helper
from onnx_int8_mlp import compare_with_onnxruntime

# (c_in, c_out, stride, group) of each 3x3 convolution
LAYERS = [(3, 32, 1, 1), (32, 64, 2, 1), (64, 64, 1, 1), (64, 64, 1, 8)]


def float_cnn(batch: int, size: int) -> onnx.ModelProto:
    rng = np.random.default_rng(51)
    nodes: list[onnx.NodeProto] = []
    inits = []
    h = "x"
    for i, (c_in, c_out, stride, group) in enumerate(LAYERS):
        fan_in = c_in // group * 9
        w = (rng.standard_normal((c_out, c_in // group, 3, 3)) * np.sqrt(2 / fan_in)).astype(np.float32)
        b = (rng.standard_normal(c_out) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        conv = helper.make_node(
            "Conv", [h, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1], strides=[stride, stride], group=group
        )
        out = "y" if i == len(LAYERS) - 1 else f"r{i}"
        nodes += [conv, helper.make_node("Relu", [f"c{i}"], [out])]
        h = out
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def main() -> None:
    from onnxruntime.quantization import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    parser = bench_parser(__doc__, rounds=9)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    rounds, size = (2, 8) if args.tiny else (args.rounds, 32)
    name = f"onnx int8 CNN {size}x{size} b{args.batch}"
    rng = np.random.default_rng(7)
    x = rng.standard_normal((args.batch, 3, size, size)).astype(np.float32)

    class Reader(CalibrationDataReader):  # type: ignore[misc, unused-ignore]
        def __init__(self) -> None:
            self.left = [rng.standard_normal(x.shape).astype(np.float32) for _ in range(8)]

        def get_next(self) -> dict[str, np.ndarray] | None:
            return {"x": self.left.pop()} if self.left else None

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "cnn.onnx", Path(tmp) / "cnn_int8.onnx"
        onnx.save(float_cnn(args.batch, size), src)
        quantize_static(
            src,
            dst,
            Reader(),
            quant_format=QuantFormat.QOperator,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        compare_with_onnxruntime(dst, x, name, "onnx_int8_cnn", args, rounds)


if __name__ == "__main__":
    main()
