"""ferrum.onnx's quantization ops and narrow types beyond ONNX's node tests (issue 50).

QuantizeLinear, DequantizeLinear, QLinearMatMul, ConvInteger, BitCast and the
float8 Cast, checked against ONNX's reference evaluator (``onnx.reference``)
and NumPy formulas: zero points held in initializers (their declared type
picks the saturation range), values inside a graph (float8 rounding is not
left to the output conversion), generated code under ``mypy --strict``, and
bad input raising ``OnnxError``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import OnnxError
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops.quantize import quantize_linear
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from tests.support.onnx_graphs import typed_model
from tests.support.onnx_models import import_generated, mypy_strict

DEVICE = NdArray.device()
RNG = np.random.default_rng(0)


def _check(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` on ferrum and on ONNX's reference evaluator; the outputs must match exactly."""
    got = FerrumBackend.run_model(model, list(inputs.values()))
    want = ReferenceEvaluator(model).run(None, inputs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64))
    return list(got)


def test_quantize_int8_per_axis_zero_point_from_an_initializer() -> None:
    x = (RNG.standard_normal((2, 3, 4)) * 100).astype(np.float32)
    inits: dict[str, np.ndarray] = {
        "s": np.array([0.5, 1.0, 2.0], np.float32),
        "zp": np.array([-3, 0, 5], np.int8),
    }
    node = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1)
    (y,) = _check(typed_model([node], {"x": x}, [("y", TensorProto.INT8)], inits), {"x": x})
    assert y.min() == -128 and y.max() == 127  # saturated to int8, not uint8 or wrapped


def test_blocked_int4_quantize_then_dequantize_inside_a_graph() -> None:
    x = (RNG.standard_normal((3, 5)) * 4).astype(np.float32)
    inits: dict[str, np.ndarray] = {
        "s": np.array([[0.5, 1.0], [0.25, 2.0], [1.0, 1.0]], np.float32),
        "zp": np.zeros((3, 2), np.int8),
    }
    inits["zp"] = inits["zp"].astype(helper.tensor_dtype_to_np_dtype(TensorProto.INT4))
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=1, block_size=3),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], axis=1, block_size=3),
    ]
    (y,) = _check(typed_model(nodes, {"x": x}, [("y", TensorProto.FLOAT)], inits), {"x": x})
    # NumPy: each row's blocks of 3 columns share a scale; int4 clamps to [-8, 7]
    scale = np.repeat(inits["s"], 3, axis=1)[:, :5]
    np.testing.assert_array_equal(y, np.clip(np.rint(x / scale), -8, 7) * scale)


def test_float8_cast_rounds_inside_the_graph() -> None:
    x = np.array([0.3, 1e6, -1e6, 17.0, np.inf, 0.0136], np.float32)
    nodes = [
        helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Cast", ["h"], ["y"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["x"], ["n"], to=TensorProto.FLOAT8E5M2, saturate=0),
    ]
    y, n = _check(
        typed_model(nodes, {"x": x}, [("y", TensorProto.FLOAT), ("n", TensorProto.FLOAT8E5M2)]), {"x": x}
    )
    np.testing.assert_array_equal(y, [0.3125, 448, -448, 16, 448, 0.013671875])
    assert np.isinf(n.astype(np.float32)[1:3]).all()  # not saturated: E5M2 overflows to infinity


def test_castlike_takes_the_declared_type_of_like() -> None:
    x = np.array([1.7, -2.5, 300.0], np.float32)
    node = helper.make_node("CastLike", ["x", "like"], ["y"])
    like = {"like": np.zeros(1, np.float32)}
    model = typed_model([node], {"x": x}, [("y", TensorProto.FLOAT8E4M3FN)], like)
    model.graph.initializer[0].CopyFrom(
        numpy_helper.from_array(
            np.zeros(1, helper.tensor_dtype_to_np_dtype(TensorProto.FLOAT8E4M3FN)), "like"
        )
    )
    (y,) = _check(model, {"x": x})
    np.testing.assert_array_equal(y.astype(np.float32), [1.75, -2.5, 288.0])


def test_qlinear_matmul_int8_per_column_scale() -> None:
    a = RNG.integers(-128, 128, (2, 4, 3)).astype(np.int8)
    b = RNG.integers(-128, 128, (3, 5)).astype(np.int8)
    inits: dict[str, np.ndarray] = {
        "sa": np.array(0.05, np.float32),
        "za": np.array(2, np.int8),
        "sb": np.linspace(0.01, 0.05, 5).astype(np.float32),
        "zb": np.array(-1, np.int8),
        "sy": np.array(0.3, np.float32),
        "zy": np.array(-4, np.int8),
    }
    node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
    _check(typed_model([node], {"a": a, "b": b}, [("y", TensorProto.INT8)], inits), {"a": a, "b": b})


def test_dynamic_quantize_linear_matches_its_formula() -> None:
    x = np.array([[-1.5, 0.25, 3.0], [2.0, -0.5, 1.0]], np.float32)
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    types = [("y", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8)]
    y, s, z = FerrumBackend.run_model(typed_model([node], {"x": x}, types, opset=11), [x])
    scale = np.float32(4.5) / np.float32(255)
    zero = np.rint(np.float32(1.5) / scale)
    assert s == scale and z == zero and z.dtype == np.uint8
    np.testing.assert_array_equal(y, np.clip(np.rint(x / scale) + zero, 0, 255).astype(np.uint8))


def test_conv_integer_per_channel_weight_zero_point() -> None:
    x = RNG.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    w = RNG.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8)
    inits: dict[str, np.ndarray] = {"xz": np.array(128, np.uint8), "wz": np.array([1, 100, 255], np.uint8)}
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1], strides=[2, 1])
    model = typed_model([node], {"x": x, "w": w}, [("y", TensorProto.INT32)], inits, opset=10)
    _check(model, {"x": x, "w": w})


def test_bitcast_reads_the_declared_width() -> None:
    x = np.array([1.0, -2.0, 65504.0], np.float16)
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT16)
    (y,) = FerrumBackend.run_model(typed_model([node], {"x": x}, [("y", TensorProto.INT16)], opset=26), [x])
    np.testing.assert_array_equal(y, x.view(np.int16))


def test_generated_qdq_module_runs_and_passes_mypy_strict(tmp_path: Path) -> None:
    x = (RNG.standard_normal((2, 3)) * 50).astype(np.float32)
    inits: dict[str, np.ndarray] = {"s": np.array(0.5, np.float32), "zp": np.array(3, np.int8)}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"]),
    ]
    onnx.save(typed_model(nodes, {"x": x}, [("y", TensorProto.FLOAT)], inits), tmp_path / "qdq.onnx")
    files = generate(tmp_path / "qdq.onnx", tmp_path / "out", "qdq")
    module = import_generated(files.source, "quantize")
    out = module.load(files.weights, DEVICE).forward(Tensor.from_numpy(x, DEVICE))
    np.testing.assert_array_equal(out.to_numpy(), (np.clip(np.rint(x / 0.5) + 3, -128, 127) - 3) * 0.5)
    status, report = mypy_strict([files.source], tmp_path)
    assert status == 0, report


def test_bad_inputs_raise_onnx_errors() -> None:
    x = np.ones((2, 3), np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1)
    model = typed_model([node], {"x": x}, [("y", TensorProto.UINT8)], {"s": np.ones(2, np.float32)})
    with pytest.raises(OnnxError, match=r"1-D tensor of 3 .*found shape \[2\]"):
        FerrumBackend.run_model(model, [x])
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT64)
    with pytest.raises(OnnxError, match="bit width"):
        FerrumBackend.run_model(typed_model([node], {"x": x}, [("y", TensorProto.INT64)], opset=26), [x])
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.FLOAT)
    model = typed_model([node], {"x": x}, [("y", TensorProto.FLOAT)], {"s": np.ones((), np.float32)})
    with pytest.raises(OnnxError, match="expected a quantized type"):
        FerrumBackend.run_model(model, [x])
    t = Tensor.from_numpy(x, DEVICE)
    with pytest.raises(ValueError, match="zero point's ONNX type is unknown"):
        quantize_linear(t, Tensor.from_numpy(np.ones((), np.float32), DEVICE), t.int())
