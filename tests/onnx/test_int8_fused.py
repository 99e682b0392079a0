"""The int8 graphs' fast paths (issue 51): onnxruntime's dynamically quantized linear
(DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> [Add] -> [Relu]) fused into one
engine call that equals its nodes exactly (ONNX's reference evaluator), and QLinearConv on a
weight packed once, from a uint8 input to a uint8 output in one pass (a NumPy integer reference).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum._ferrum import DType
from ferrum.backend import NdArray
from ferrum.onnx import fuse_quant, load
from ferrum.onnx.fuse_quant import FusedDynamicLinear
from ferrum.onnx.ops import int8_conv, quantize
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from tests.onnx.test_int8_conv import conv_reference

DEVICE = NdArray.device()
RNG = np.random.default_rng(5151)
FIXTURES = Path(__file__).parent / "fixtures" / "quantized"


def _layer(i: int, x: str, out: str, relu: bool, bias_shape: tuple[int, ...] | None) -> list[onnx.NodeProto]:
    """One dynamically quantized linear as ``quantize_dynamic`` writes it."""
    nodes = [
        helper.make_node("DynamicQuantizeLinear", [x], [f"q{i}", f"s{i}", f"z{i}"]),
        helper.make_node("Mul", [f"s{i}", f"ws{i}"], [f"sc{i}"]),
        helper.make_node("MatMulInteger", [f"q{i}", f"w{i}", f"z{i}", f"wz{i}"], [f"mm{i}"]),
        helper.make_node("Cast", [f"mm{i}"], [f"c{i}"], to=TensorProto.FLOAT),
        helper.make_node("Mul", [f"c{i}", f"sc{i}"], [f"m{i}" if bias_shape or relu else out]),
    ]
    if bias_shape is not None:
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}" if relu else out]))
    if relu:
        nodes.append(helper.make_node("Relu", [f"a{i}" if bias_shape is not None else f"m{i}"], [out]))
    return nodes


def _mlp(sizes: list[int], batch: int, per_channel: bool, bias_shape: str = "vector") -> onnx.ModelProto:
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    h = "x"
    for i, (d_in, d_out) in enumerate(itertools.pairwise(sizes)):
        last = i == len(sizes) - 2
        out = "y" if last else f"h{i}"
        shape = (d_out,) if bias_shape == "vector" else (1, d_out)
        nodes += _layer(i, h, out, relu=not last, bias_shape=shape)
        w = RNG.integers(-127, 128, (d_in, d_out)).astype(np.int8)
        ws = RNG.uniform(0.001, 0.01, d_out if per_channel else ()).astype(np.float32)
        inits += [
            numpy_helper.from_array(w, f"w{i}"),
            numpy_helper.from_array(np.asarray(ws, np.float32), f"ws{i}"),
            numpy_helper.from_array(np.array(0, np.int8), f"wz{i}"),
            numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), f"b{i}"),
        ]
        h = out
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any) -> None:
        raise AssertionError("a fused group fell back to its steps")

    monkeypatch.setattr(fuse_quant, "run_group_steps", fail)


def _reference(proto: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    outputs: Any = ReferenceEvaluator(proto).run(None, {"x": x})
    return np.asarray(outputs[0])


def _groups(model: Any) -> list[FusedDynamicLinear]:
    return [a for a in model.schedule.actions if isinstance(a, FusedDynamicLinear)]


@pytest.mark.parametrize("per_channel", [False, True])
def test_dynamic_linear_groups_equal_their_nodes(
    per_channel: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proto = _mlp([70, 130, 33], 9, per_channel)
    onnx.save(proto, tmp_path / "mlp.onnx")
    model = load(tmp_path / "mlp.onnx", DEVICE)
    groups = _groups(model)
    assert [(g.relu, g.bias is not None, len(g.steps)) for g in groups] == [(True, True, 7), (False, True, 6)]
    x = (RNG.standard_normal((9, 70)) * 2).astype(np.float32)
    want = _reference(proto, x)
    _no_fallback(monkeypatch)
    for _ in range(2):  # the plan compiled on the first call runs the groups between its segments
        got = model.forward(Tensor.from_data(x, DEVICE)).to_numpy()
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


def test_a_bias_that_is_not_a_vector_runs_the_nodes(tmp_path: Path) -> None:
    proto = _mlp([40, 20], 3, False, bias_shape="row")
    onnx.save(proto, tmp_path / "mlp.onnx")
    model = load(tmp_path / "mlp.onnx", DEVICE)
    assert len(_groups(model)) == 1
    x = RNG.standard_normal((3, 40)).astype(np.float32)
    got = model.forward(Tensor.from_data(x, DEVICE)).to_numpy()
    np.testing.assert_array_equal(got, _reference(proto, x))


def test_onnxruntimes_dynamically_quantized_fixture_runs_fused(monkeypatch: pytest.MonkeyPatch) -> None:
    ref = np.load(FIXTURES / "outputs.npz")
    model = load(FIXTURES / "mlp_dynamic.onnx", DEVICE)
    assert len(_groups(model)) == 2
    _no_fallback(monkeypatch)
    y = model.forward(Tensor.from_data(ref["mlp_dynamic_x"], DEVICE)).to_numpy()
    # onnxruntime's own kernel rounds its scaling differently from its graph's nodes
    np.testing.assert_allclose(y, ref["mlp_dynamic_y"], rtol=1e-5, atol=1e-5)


# QLinearConv's inputs' declared types: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
# y_zero_point, bias
T = TensorProto
TYPES = (T.UINT8, T.FLOAT, T.UINT8, T.INT8, T.FLOAT, T.INT8, T.FLOAT, T.UINT8, T.INT32)


def test_qlinear_conv_on_a_packed_weight_gives_uint8() -> None:
    x = RNG.integers(0, 256, (2, 5, 9, 7)).astype(np.uint8)
    w = RNG.integers(-128, 128, (11, 5, 3, 3)).astype(np.int8)
    bias = RNG.integers(-3000, 3000, 11).astype(np.int32)
    w_scale = RNG.uniform(0.002, 0.02, 11).astype(np.float32)

    def t(a: np.ndarray) -> Any:
        return Tensor.from_numpy(a, DEVICE)

    got = quantize.q_linear_conv(
        t(x),
        t(np.array(0.02, np.float32)),
        t(np.array(100, np.int64)),
        t(w_scale),
        t(np.zeros(11, np.int64)),
        t(np.array(0.3, np.float32)),
        t(np.array(7, np.int64)),
        t(bias.astype(np.int64)),
        pads=(1, 0, 1, 2),
        strides=(2, 1),
        input_types=TYPES,
        w=w,
    )
    assert got.dtype == DType.U8
    sums = conv_reference(x, 100, w, np.zeros(11, np.int64), (2, 1), (1, 0, 1, 2), (1, 1), 1)
    factor = (np.float32(0.02) * w_scale / np.float32(0.3)).astype(np.float64).reshape(1, -1, 1, 1)
    want = np.clip(np.rint((sums + bias.reshape(1, -1, 1, 1)) * factor + 7), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(got.to_numpy(), want)
    assert 0 < np.count_nonzero((want > 0) & (want < 255))
    # packed once: a second call finds it
    assert int8_conv.packed_conv(w, t(np.zeros(11, np.int64)), 1, DEVICE) is int8_conv.packed_conv(
        w, t(np.zeros(11, np.int64)), 1, DEVICE
    )
