"""ONNX's integer products on ferrum's int8 tiles (issue 51): MatMulInteger and
QLinearMatMul by a constant int8 weight run on the packed int8 product
(uint8 inputs), exactly as ONNX's reference evaluator computes them; other
type combinations keep the general path, also exact. Models quantized by
onnxruntime's own tools (``quantize_dynamic``, ``quantize_static``; made by
scripts/make_quantized_onnx_fixtures.py) import and give onnxruntime's outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum._ferrum import Int8Matrix
from ferrum.backend import NdArray
from ferrum.onnx import load
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops import linear
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tests.support.onnx_graphs import typed_model
from tests.support.onnx_models import import_generated, mypy_strict

DEVICE = NdArray.device()
RNG = np.random.default_rng(51)
FIXTURES = Path(__file__).parent / "fixtures" / "quantized"


def _check(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    got = FerrumBackend.run_model(model, list(inputs.values()))[0]
    outputs: Any = ReferenceEvaluator(model).run(None, inputs)
    want = outputs[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    return np.asarray(got)


def _packed_count() -> int:
    return sum(packed is not None for _, packed in linear._PACKED.values())


@pytest.mark.parametrize("a_zero", [None, np.array(131, np.uint8), "per-row"])
@pytest.mark.parametrize("b_zero", [None, np.array(-7, np.int8), "per-column"])
@pytest.mark.parametrize("shape", [(5, 37), (2, 3, 64)])
def test_matmul_integer_by_an_int8_constant_runs_on_the_int8_tiles(
    a_zero: np.ndarray | str | None, b_zero: np.ndarray | str | None, shape: tuple[int, ...]
) -> None:
    if a_zero == "per-row" and len(shape) != 2:
        pytest.skip("a per-row zero point takes a matrix")
    k, n = shape[-1], 45
    a = RNG.integers(0, 256, shape).astype(np.uint8)
    a[..., 0] = 255
    b = RNG.integers(-128, 128, (k, n)).astype(np.int8)
    b[0, :3] = -128
    inits: dict[str, np.ndarray] = {"b": b}
    if isinstance(a_zero, np.ndarray):
        inits["az"] = a_zero
    elif a_zero == "per-row":
        inits["az"] = RNG.integers(0, 256, (shape[0],)).astype(np.uint8)
    if isinstance(b_zero, np.ndarray):
        inits["bz"] = b_zero
    elif b_zero == "per-column":
        inits["bz"] = RNG.integers(-128, 128, (n,)).astype(np.int8)
    names = ["a", "b", "az" if "az" in inits else "", "bz" if "bz" in inits else ""]
    while not names[-1]:
        names.pop()
    node = helper.make_node("MatMulInteger", names, ["y"])
    model = typed_model([node], {"a": a}, [("y", TensorProto.INT32)], inits)
    linear._PACKED.clear()
    if a_zero == "per-row":
        # ONNX's reference evaluator does not broadcast a per-row zero point: NumPy alone below.
        y = FerrumBackend.run_model(model, [a])[0]
    else:
        y = _check(model, {"a": a})
    assert _packed_count() == 1, "the constant int8 weight was not packed for the int8 tiles"
    # Independently: the product in int64.
    az = inits.get("az", np.zeros(1, np.uint8)).astype(np.int64)
    az = az.reshape(-1, 1) if az.size > 1 else az
    bz = inits.get("bz", np.zeros(1, np.int8)).astype(np.int64)
    want = (a.astype(np.int64) - az) @ (b.astype(np.int64) - bz)
    np.testing.assert_array_equal(y, want)


def test_other_operand_types_keep_the_general_path() -> None:
    # uint8 weights, int8 inputs with negative values, a weight computed at run time: exact, not packed.
    a8 = RNG.integers(-128, 128, (4, 6)).astype(np.int8)
    b8 = RNG.integers(-128, 128, (6, 5)).astype(np.int8)
    bu = RNG.integers(0, 256, (6, 5)).astype(np.uint8)
    linear._PACKED.clear()
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    _check(typed_model([node], {"a": a8}, [("y", TensorProto.INT32)], {"b": b8}), {"a": a8})
    au = RNG.integers(0, 256, (4, 6)).astype(np.uint8)
    _check(typed_model([node], {"a": au}, [("y", TensorProto.INT32)], {"b": bu}), {"a": au})
    _check(typed_model([node], {"a": au, "b": b8}, [("y", TensorProto.INT32)], {}), {"a": au, "b": b8})
    # Only the int8 constant is packed; its product with negative inputs took the general path.
    assert _packed_count() == 1


def test_qlinear_matmul_by_an_int8_constant_per_column() -> None:
    a = RNG.integers(0, 256, (7, 33)).astype(np.uint8)
    b = RNG.integers(-128, 128, (33, 20)).astype(np.int8)
    outputs = ((TensorProto.UINT8, np.array(121, np.uint8)), (TensorProto.INT8, np.array(-5, np.int8)))
    for y_type, zy in outputs:
        inits: dict[str, np.ndarray] = {
            "b": b,
            "sa": np.array(0.02, np.float32),
            "za": np.array(130, np.uint8),
            "sb": np.linspace(0.001, 0.01, 20).astype(np.float32),
            "zb": np.zeros(20, np.int8),
            "sy": np.array(0.7, np.float32),
            "zy": zy,
        }
        node = helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
        linear._PACKED.clear()
        y = _check(typed_model([node], {"a": a}, [("y", y_type)], inits), {"a": a})
        assert _packed_count() == 1
        assert len(np.unique(y)) > 20, "a degenerate test: the outputs saturate"


def test_int8_matrix_binding() -> None:
    b = Tensor.from_data(np.array([[1, 4], [2, 5], [3, 6]], np.int64), DEVICE)
    packed = Int8Matrix.pack(b, [0])
    assert packed is not None and packed.dims() == (3, 2)
    a = Tensor.from_data(np.array([[11, 7, 3], [10, 6, 2], [9, 5, 1], [8, 4, 0]], np.int64), DEVICE)
    # ONNX's MatMulInteger example (a zero point 12).
    out = packed.matmul(a, [12])
    assert out is not None
    assert out.to_numpy().tolist() == [[-38, -83], [-44, -98], [-50, -113], [-56, -128]]
    assert Int8Matrix.pack(Tensor.from_data(np.array([[200]], np.int64), DEVICE), [0]) is None
    assert packed.matmul(Tensor.from_data(np.array([[-1, 0, 0]], np.int64), DEVICE), [0]) is None
    with pytest.raises(ValueError, match="1 or 2 zero points"):
        Int8Matrix.pack(b, [0, 0, 0])


def test_a_model_quantized_by_onnxruntime_dynamically_imports() -> None:
    ref = np.load(FIXTURES / "outputs.npz")
    ops = {n.op_type for n in onnx.load(FIXTURES / "mlp_dynamic.onnx").graph.node}
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= ops
    model = load(FIXTURES / "mlp_dynamic.onnx", DEVICE)
    linear._PACKED.clear()
    y = model.forward(Tensor.from_data(ref["mlp_dynamic_x"], DEVICE)).to_numpy()
    assert _packed_count() == 2  # both weights on the int8 tiles
    # The integer sums are exact; the float rescaling after them rounds as onnxruntime's does, to f32.
    np.testing.assert_allclose(y, ref["mlp_dynamic_y"], rtol=1e-5, atol=1e-5)


def test_a_model_quantized_by_onnxruntime_statically_imports() -> None:
    ref = np.load(FIXTURES / "outputs.npz")
    ops = {n.op_type for n in onnx.load(FIXTURES / "cnn_static.onnx").graph.node}
    assert {"QLinearConv", "QLinearMatMul", "QuantizeLinear"} <= ops
    model = load(FIXTURES / "cnn_static.onnx", DEVICE)
    linear._PACKED.clear()
    y = model.forward(Tensor.from_data(ref["cnn_static_x"], DEVICE)).to_numpy()
    assert _packed_count() == 1
    # uint8 outputs dequantized: equal to onnxruntime's, which rounds half to even as ONNX specifies.
    np.testing.assert_array_equal(y, ref["cnn_static_y"])


def test_generated_code_of_a_dynamically_quantized_model(tmp_path: Path) -> None:
    # Generated code writes the int8 weights inline, a new array at each call: packed once by content.
    ref = np.load(FIXTURES / "outputs.npz")
    files = generate(FIXTURES / "mlp_dynamic.onnx", tmp_path / "out", "mlp_dynamic")
    module = import_generated(files.source, "int8")
    model = module.load(files.weights, DEVICE)
    linear._PACKED.clear()
    for _ in range(2):
        y = model.forward(Tensor.from_data(ref["mlp_dynamic_x"], DEVICE)).to_numpy()
        np.testing.assert_allclose(y, ref["mlp_dynamic_y"], rtol=1e-5, atol=1e-5)
    assert _packed_count() == 4  # two arrays a call, two calls ...
    assert len({id(packed) for _, packed in linear._PACKED.values()}) == 2  # ... packed once each
    status, report = mypy_strict([files.source], tmp_path)
    assert status == 0, report
