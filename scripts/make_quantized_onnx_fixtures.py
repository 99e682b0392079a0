"""Make the fixtures of tests/onnx/test_int8_products.py: small models quantized by onnxruntime's
own tools, with onnxruntime's outputs.

Run in the torch venv (it has onnxruntime; ferrum is not needed):

    /work/torch-venv/bin/python scripts/make_quantized_onnx_fixtures.py

Writes tests/onnx/fixtures/quantized/:
- ``mlp_dynamic.onnx``: an MLP 48-64-10 (MatMul + Add + Relu) through ``quantize_dynamic`` with
  int8 weights: DynamicQuantizeLinear, MatMulInteger (uint8 x int8), Mul and Add.
- ``cnn_static.onnx``: a CNN (Conv 1->4 3x3, Relu, Flatten, MatMul 4*6*6->10) through
  ``quantize_static`` in the QOperator format (uint8 activations, int8 weights):
  QuantizeLinear, QLinearConv, QLinearMatMul, DequantizeLinear.
- ``outputs.npz``: the inputs each model runs on and onnxruntime's outputs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)

OUT = Path(__file__).resolve().parent.parent / "tests" / "onnx" / "fixtures" / "quantized"
RNG = np.random.default_rng(51)


def _float_model(
    nodes: list[onnx.NodeProto], inits: dict[str, np.ndarray], x_shape: list[int], y: int
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [x_shape[0], y])],
        [numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def mlp() -> onnx.ModelProto:
    inits = {
        "w1": RNG.normal(0, 0.2, (48, 64)),
        "b1": RNG.normal(0, 0.1, (64,)),
        "w2": RNG.normal(0, 0.2, (64, 10)),
        "b2": RNG.normal(0, 0.1, (10,)),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
        helper.make_node("Add", ["h3", "b2"], ["y"]),
    ]
    return _float_model(nodes, inits, [4, 48], 10)


def cnn() -> onnx.ModelProto:
    inits = {
        "wc": RNG.normal(0, 0.3, (4, 1, 3, 3)),
        "bc": RNG.normal(0, 0.1, (4,)),
        "wf": RNG.normal(0, 0.1, (144, 10)),
    }
    nodes = [
        helper.make_node("Conv", ["x", "wc", "bc"], ["c"], pads=[0, 0, 0, 0]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("MatMul", ["f", "wf"], ["y"]),
    ]
    return _float_model(nodes, inits, [3, 1, 8, 8], 10)


class _Reader(CalibrationDataReader):
    def __init__(self, batches: list[np.ndarray]) -> None:
        self.batches = iter(batches)

    def get_next(self) -> dict[str, np.ndarray] | None:
        batch = next(self.batches, None)
        return None if batch is None else {"x": batch}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "mlp.onnx"
        onnx.save(mlp(), src)
        quantize_dynamic(src, OUT / "mlp_dynamic.onnx", weight_type=QuantType.QInt8)
        src = Path(tmp) / "cnn.onnx"
        onnx.save(cnn(), src)
        calibration = [RNG.normal(0, 1, (3, 1, 8, 8)).astype(np.float32) for _ in range(4)]
        quantize_static(
            src,
            OUT / "cnn_static.onnx",
            _Reader(calibration),
            quant_format=QuantFormat.QOperator,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
    inputs = {"mlp_dynamic": RNG.normal(0, 1, (4, 48)), "cnn_static": RNG.normal(0, 1, (3, 1, 8, 8))}
    for name, x in inputs.items():
        x = x.astype(np.float32)
        session = ort.InferenceSession(str(OUT / f"{name}.onnx"), providers=["CPUExecutionProvider"])
        ops = sorted({n.op_type for n in onnx.load(OUT / f"{name}.onnx").graph.node})
        print(name, ops)
        arrays[f"{name}_x"] = x
        arrays[f"{name}_y"] = session.run(None, {"x": x})[0]
    np.savez(OUT / "outputs.npz", **arrays)


if __name__ == "__main__":
    main()
