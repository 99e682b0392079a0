"""Plan instructions for the ops that used to split a compiled plan (GatherND, GatherElements,
ScatterND, CumSum, Pad, Conv on rank-3 input, float-to-int Cast) and the fused attention and
RMSNorm patterns, each against NumPy through the plan, with the plan's instructions checked."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.onnx import OnnxError
from ferrum.onnx.model import OnnxModel
from onnx import TensorProto, helper

from tests.support.onnx_plan import only_engine, plan_model, run_planned

Array = npt.NDArray[Any]
DEVICE = NdArray.device()
F, I64 = TensorProto.FLOAT, TensorProto.INT64
RNG = np.random.default_rng(11)


# a graph that cannot compile warns and runs step by step: here that is a failure
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def _f32(*shape: int) -> Array:
    return RNG.normal(size=shape).astype(np.float32)


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_against_numpy(batch_dims: int) -> None:
    x = _f32(2, 3, 4)
    if batch_dims == 0:
        idx = np.array([[[1, -1], [0, 2]], [[-2, 0], [1, 1]]], np.int64)  # [2, 2, k=2]
        want = np.stack([x[tuple(t)] for t in idx.reshape(-1, 2)]).reshape(2, 2, 4)
    else:
        idx = np.array([[[2], [0]], [[-1], [1]]], np.int64)  # batch [2], M [2], k=1
        want = np.stack([np.stack([x[b, t[0]] for t in idx[b]]) for b in range(2)])
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)
    model = plan_model([node], [("x", F, x.shape), ("i", I64, idx.shape)], [("y", F)])
    (y,), compiled = run_planned(model, x, idx)
    only_engine(compiled)
    assert compiled.instructions == ("gather_nd",)
    np.testing.assert_array_equal(y, want)
    # an index out of range raises at run time, naming it
    bad = idx.copy()
    bad.reshape(-1)[0] = 7
    with pytest.raises(OnnxError, match="7"):
        model.forward(Tensor.from_numpy(x, DEVICE), Tensor.from_numpy(bad, DEVICE))


def test_gather_elements_and_scatter_nd_against_numpy() -> None:
    x = _f32(3, 4)
    idx = RNG.integers(-4, 4, size=(3, 5)).astype(np.int64)
    rows = np.array([[2], [0]], np.int64)
    upd = _f32(2, 4)
    nodes = [
        helper.make_node("GatherElements", ["x", "i"], ["g"], axis=1),
        helper.make_node("ScatterND", ["x", "r", "u"], ["s"]),
    ]
    inputs = [("x", F, x.shape), ("i", I64, idx.shape), ("r", I64, rows.shape), ("u", F, upd.shape)]
    model = plan_model(nodes, inputs, [("g", F), ("s", F)])
    (g, s), compiled = run_planned(model, x, idx, rows, upd)
    only_engine(compiled)
    np.testing.assert_array_equal(g, np.take_along_axis(x, np.where(idx < 0, idx + 4, idx), axis=1))
    want = x.copy()
    want[2], want[0] = upd[0], upd[1]
    np.testing.assert_array_equal(s, want)


def test_scatter_nd_with_a_reduction_runs_from_python() -> None:
    x, rows, upd = _f32(3, 2), np.array([[1], [1]], np.int64), _f32(2, 2)
    node = helper.make_node("ScatterND", ["x", "r", "u"], ["s"], reduction="add")
    nodes = [node, helper.make_node("Relu", ["s"], ["y"])]
    inputs = [("x", F, x.shape), ("r", I64, rows.shape), ("u", F, upd.shape)]
    model = plan_model(nodes, inputs, [("y", F)], opset=18)
    (y,), compiled = run_planned(model, x, rows, upd)
    assert compiled.python_ops == ("ScatterND",)
    want = x.copy()
    want[1] += upd[0] + upd[1]
    np.testing.assert_allclose(y, np.maximum(want, 0), rtol=1e-6)


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_against_numpy(exclusive: int, reverse: int) -> None:
    x = RNG.integers(-5, 5, size=(3, 4)).astype(np.int64)
    node = helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)
    model = plan_model([node], [("x", I64, x.shape)], [("y", I64)], {"axis": np.array(-1, np.int64)})
    (y,), compiled = run_planned(model, x)
    only_engine(compiled)
    assert compiled.instructions == ("cumsum",)
    src = x[:, ::-1] if reverse else x
    want = np.cumsum(src, axis=1) - (src if exclusive else 0)
    np.testing.assert_array_equal(y, want[:, ::-1] if reverse else want)


def test_constant_pad_in_the_plan_and_a_crop_from_python() -> None:
    x = _f32(2, 3, 4)
    nodes = [helper.make_node("Pad", ["x", "pads", "v"], ["y"], mode="constant")]
    inits: dict[str, Array] = {"pads": np.array([0, 1, 2, 0, 0, 1], np.int64)}
    inits["v"] = np.array(-3.5, np.float32)
    model = plan_model(nodes, [("x", F, x.shape)], [("y", F)], inits)
    (y,), compiled = run_planned(model, x)
    only_engine(compiled)
    np.testing.assert_array_equal(y, np.pad(x, [(0, 0), (1, 0), (2, 1)], constant_values=-3.5))
    # negative pads crop: the op's own path, still right
    crop: dict[str, Array] = {"pads": np.array([0, -1, 0, 0, 0, 1], np.int64), "v": np.array(0.0, np.float32)}
    model = plan_model([*nodes, helper.make_node("Neg", ["y"], ["z"])], [("x", F, x.shape)], [("z", F)], crop)
    (z,), compiled = run_planned(model, x)
    assert compiled.python_ops == ("Pad",)
    np.testing.assert_array_equal(z, -np.pad(x[:, 1:], [(0, 0), (0, 0), (0, 1)]))


def test_conv_on_rank3_input_against_numpy() -> None:
    x, w, b = _f32(2, 3, 10), _f32(4, 3, 3), _f32(4)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1], strides=[2], dilations=[1])
    model = plan_model([node], [("x", F, x.shape)], [("y", F)], {"w": w, "b": b})
    (y,), compiled = run_planned(model, x)
    only_engine(compiled)
    assert compiled.instructions == ("conv1d",)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 1)])
    want = np.stack(
        [np.einsum("nck,ock->no", padded[:, :, t : t + 3], w) for t in range(0, 10, 2)], axis=-1
    ) + b[None, :, None]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("to", "fill"), [(TensorProto.INT64, -(2**63)), (TensorProto.INT32, -(2**31))])
def test_float_to_int_cast_as_onnxruntime(to: int, fill: int) -> None:
    # truncation toward zero; NaN, infinities and values out of the target's range give its lowest value
    x = np.array([2.7, -2.7, -np.inf, np.inf, np.nan, 3e9, -1e20, 0.0], np.float32)
    node = helper.make_node("Cast", ["x"], ["y"], to=to)
    model = plan_model([node], [("x", F, x.shape)], [("y", to)])
    (y,), compiled = run_planned(model, x)
    only_engine(compiled)
    assert compiled.instructions == ("cast_int",)
    big = 3_000_000_000 if to == TensorProto.INT64 else fill
    np.testing.assert_array_equal(y.astype(np.int64), [2, -2, fill, fill, fill, big, fill, 0])


def _attention_graph(div: bool, mask: bool, guard: bool, keep_scores: bool = False) -> OnnxModel:
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"])]
    last = "s"
    if div:
        nodes.append(helper.make_node("Div", [last, "d"], ["sd"]))
        last = "sd"
    if mask:
        nodes.append(helper.make_node("Add", [last, "m"], ["sm"]))
        last = "sm"
    nodes.append(helper.make_node("Softmax", [last], ["p"], axis=-1))
    weights = "p"
    if guard:
        nodes += [
            helper.make_node("IsNaN", ["p"], ["nan"]),
            helper.make_node("Where", ["nan", "zero", "p"], ["pw"]),
        ]
        weights = "pw"
    nodes.append(helper.make_node("MatMul", [weights, "v"], ["y"]))
    inits = {"d": np.array(math.sqrt(8.0), np.float32), "zero": np.array(0.0, np.float32)}
    inputs = [("q", F, (2, 3, 5, 8)), ("kt", F, (2, 3, 8, 5)), ("v", F, (2, 3, 5, 4)), ("m", F, (2, 1, 1, 5))]
    outputs = [("y", F)] + ([("s", F)] if keep_scores else [])
    return plan_model(nodes, inputs, outputs, inits)


def _softmax(s: Array) -> Array:
    e = np.exp(s - s.max(-1, keepdims=True))
    out: Array = e / e.sum(-1, keepdims=True)
    return out


@pytest.mark.parametrize(
    ("div", "mask", "guard"), [(True, True, True), (True, True, False), (False, False, False)]
)
def test_attention_pattern_runs_as_one_instruction(div: bool, mask: bool, guard: bool) -> None:
    q, kt, v = _f32(2, 3, 5, 8), _f32(2, 3, 8, 5), _f32(2, 3, 5, 4)
    m = np.zeros((2, 1, 1, 5), np.float32)
    m[1, ..., 3:] = np.finfo(np.float32).min  # HF's padding mask
    (y,), compiled = run_planned(_attention_graph(div, mask, guard), q, kt, v, m)
    assert compiled.python_ops == () and compiled.instructions == ("attention",)
    s = q.astype(np.float64) @ kt
    s = s / math.sqrt(8.0) if div else s
    s = s + m if mask else s
    np.testing.assert_allclose(y, _softmax(s) @ v, rtol=1e-5, atol=1e-6)


def test_attention_whose_scores_are_a_graph_output_is_not_fused() -> None:
    q, kt, v, m = _f32(2, 3, 5, 8), _f32(2, 3, 8, 5), _f32(2, 3, 5, 4), np.zeros((2, 1, 1, 5), np.float32)
    (y, s), compiled = run_planned(_attention_graph(True, True, True, keep_scores=True), q, kt, v, m)
    assert "attention" not in compiled.instructions and "softmax" in compiled.instructions
    np.testing.assert_allclose(s, q @ kt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, _softmax((q @ kt) / math.sqrt(8.0)) @ v, rtol=1e-5, atol=1e-6)


def test_a_fully_masked_row_gives_zeros_through_the_guard() -> None:
    q, kt, v = _f32(2, 3, 5, 8), _f32(2, 3, 8, 5), _f32(2, 3, 5, 4)
    m = np.zeros((2, 1, 1, 5), np.float32)
    m[0] = -np.inf
    (y,), compiled = run_planned(_attention_graph(True, True, True), q, kt, v, m)
    assert compiled.instructions == ("attention",)
    assert np.all(y[0] == 0.0)
    np.testing.assert_allclose(y[1], _softmax((q[1] @ kt[1]) / math.sqrt(8.0)) @ v[1], rtol=1e-5, atol=1e-6)


RMS_WEIGHT = RNG.normal(size=16).astype(np.float32)


def _rms_graph(inverse: str, weight: bool, extra_reader: bool = False) -> OnnxModel:
    nodes = [
        helper.make_node("Pow", ["x", "two"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["ms", "eps"], ["mse"]),
        helper.make_node("Sqrt", ["mse"], ["rms"]),
    ]
    if inverse == "reciprocal":
        nodes.append(helper.make_node("Reciprocal", ["rms"], ["inv"]))
        nodes.append(helper.make_node("Mul", ["x", "inv"], ["n"]))
    elif inverse == "one_over":
        nodes.append(helper.make_node("Div", ["one", "rms"], ["inv"]))
        nodes.append(helper.make_node("Mul", ["inv", "x"], ["n"]))
    else:
        nodes.append(helper.make_node("Div", ["x", "rms"], ["n"]))
    out = "n"
    if weight:
        nodes.append(helper.make_node("Mul", ["w", "n"], ["y"]))
        out = "y"
    outputs = [(out, F)] + ([("mse", F)] if extra_reader else [])
    inits = {
        "two": np.array(2.0, np.float32),
        "eps": np.array(1e-6, np.float32),
        "one": np.array(1.0, np.float32),
        "w": RMS_WEIGHT,
    }
    return plan_model(nodes, [("x", F, (2, 5, 16))], outputs, inits, opset=17)


@pytest.mark.parametrize("inverse", ["reciprocal", "one_over", "divide"])
@pytest.mark.parametrize("weight", [True, False])
def test_rms_norm_pattern_runs_as_one_instruction(inverse: str, weight: bool) -> None:
    model = _rms_graph(inverse, weight)
    x = _f32(2, 5, 16)
    (y,), compiled = run_planned(model, x)
    only_engine(compiled)
    assert compiled.instructions == ("rms_norm",)
    wide = x.astype(np.float64)
    want = wide / np.sqrt((wide**2).mean(-1, keepdims=True) + 1e-6)
    if weight:
        want = want * RMS_WEIGHT
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_rms_norm_with_an_intermediate_read_elsewhere_is_not_fused() -> None:
    x = _f32(2, 5, 16)
    (y, mse), compiled = run_planned(_rms_graph("reciprocal", True, extra_reader=True), x)
    assert "rms_norm" not in compiled.instructions
    wide = x.astype(np.float64)
    want = wide / np.sqrt((wide**2).mean(-1, keepdims=True) + 1e-6) * RMS_WEIGHT
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mse, (x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6, rtol=1e-5)


def test_the_rms_normalization_op_runs_as_one_instruction() -> None:
    x, w = _f32(3, 4, 6), _f32(4, 6)
    node = helper.make_node("RMSNormalization", ["x", "w"], ["y"], axis=-2, epsilon=1e-3)
    model = plan_model([node], [("x", F, x.shape)], [("y", F)], {"w": w}, opset=23)
    (y,), compiled = run_planned(model, x)
    only_engine(compiled)
    assert compiled.instructions == ("rms_norm",)
    wide = x.astype(np.float64)
    want = wide / np.sqrt((wide**2).mean((-2, -1), keepdims=True) + 1e-3) * w
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
