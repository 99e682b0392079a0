"""QLinearConv and ConvInteger on the int8 product: uint8 inputs by int8 weights
(per-tensor and per-channel zero points and scales, groups, strides, pads,
dilations, 1-d) against a NumPy integer evaluation of the definition and
ONNX's reference evaluator, exactly; other operand types keep the f64 path."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum._ferrum import int8_conv2d
from ferrum.backend import NdArray
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.ops import quantize
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

DEVICE = NdArray.device()
RNG = np.random.default_rng(51)


def conv_reference(
    x: np.ndarray,
    x_zero: int,
    w: np.ndarray,
    w_zero: np.ndarray,
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilations: tuple[int, int],
    groups: int,
) -> np.ndarray:
    """``conv(x - x_zero, w - w_zero)`` in int64, padding (top, left, bottom, right) adding zeros."""
    xs = np.pad(x.astype(np.int64) - x_zero, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    ws = w.astype(np.int64) - np.asarray(w_zero, np.int64).reshape(-1, 1, 1, 1)
    n, _, h, wd = xs.shape
    c_out, cg, kh, kw = ws.shape
    oh = (h - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    og = c_out // groups
    out = np.zeros((n, c_out, oh, ow), np.int64)
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                y0, x0 = ky * dilations[0], kx * dilations[1]
                patch = xs[
                    :,
                    g * cg : (g + 1) * cg,
                    y0 : y0 + strides[0] * (oh - 1) + 1 : strides[0],
                    x0 : x0 + strides[1] * (ow - 1) + 1 : strides[1],
                ]
                taps = ws[g * og : (g + 1) * og, :, ky, kx]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, taps)
    return out


def _case(
    x: tuple[int, ...],
    w: tuple[int, ...],
    strides: tuple[int, int],
    pads: tuple[int, ...],
    dil: tuple[int, int],
    group: int,
) -> dict[str, Any]:
    return {"x": x, "w": w, "strides": strides, "pads": pads, "dil": dil, "group": group}


CASES: list[dict[str, Any]] = [
    _case((2, 3, 9, 8), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    _case((1, 4, 10, 9), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 2),  # groups, asymmetric pads
    _case((1, 6, 7, 7), (6, 1, 3, 3), (1, 2), (1, 1, 1, 1), (2, 1), 6),  # depthwise
    _case((2, 40, 6, 5), (35, 40, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # several tiles of channels
]


def _values(case: dict[str, Any], per_channel: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = RNG.integers(0, 256, case["x"]).astype(np.uint8)
    w = RNG.integers(-128, 128, case["w"]).astype(np.int8)
    c_out = case["w"][0]
    wz = RNG.integers(-128, 128, c_out).astype(np.int8) if per_channel else np.array(-3, np.int8)
    return x, w, wz


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_binding_matches_the_integer_definition(case: int, per_channel: bool) -> None:
    c = CASES[case]
    x, w, wz = _values(c, per_channel)
    zeros = [int(v) for v in wz.reshape(-1)]
    out = int8_conv2d(
        Tensor.from_numpy(x.astype(np.int64), DEVICE),
        200,
        Tensor.from_numpy(w.astype(np.int64), DEVICE),
        zeros,
        c["strides"],
        c["pads"],
        c["dil"],
        c["group"],
    )
    assert out is not None
    want = conv_reference(x, 200, w, np.asarray(zeros), c["strides"], c["pads"], c["dil"], c["group"])
    np.testing.assert_array_equal(out.to_numpy(), want)


def test_binding_declines_values_outside_the_types_and_names_bad_shapes() -> None:
    x = Tensor.from_numpy(np.full((1, 2, 4, 4), 3, np.int64), DEVICE)
    w = Tensor.from_numpy(np.ones((2, 2, 3, 3), np.int64), DEVICE)
    geometry = ((1, 1), (0, 0, 0, 0), (1, 1), 1)
    too_big = Tensor.from_numpy(np.full((2, 2, 3, 3), 200, np.int64), DEVICE)
    assert int8_conv2d(x, 0, too_big, [0], *geometry) is None
    assert int8_conv2d(x, 300, w, [0], *geometry) is None
    with pytest.raises(Exception, match="3 groups"):
        int8_conv2d(x, 0, w, [0], (1, 1), (0, 0, 0, 0), (1, 1), 3)
    with pytest.raises(Exception, match="1 or 2 zero points"):
        int8_conv2d(x, 0, w, [0, 0, 0], *geometry)


def _model(
    node: onnx.NodeProto, x: np.ndarray, out_type: int, inits: list[onnx.TensorProto]
) -> onnx.ModelProto:
    """A one-node graph of input ``x`` (uint8) and output ``y``, at opset 10."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)]
    outputs = [helper.make_tensor_value_info("y", out_type, None)]
    graph = helper.make_graph([node], "g", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])


def _init(name: str, value: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(value, name)


def _run_both(
    model: onnx.ModelProto, x: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> tuple[np.ndarray, int]:
    """ferrum's output (checked equal to the reference evaluator's) and how often it tried the int8 path:
    the packed weight (a constant) or, when that declines, the binding that packs at each call."""
    calls = 0
    packed_path = quantize._packed_conv

    def counting(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return int8_conv2d(*args)

    def counting_packed(*args: Any) -> Any:
        nonlocal calls
        out = packed_path(*args)
        calls += out is not None
        return out

    monkeypatch.setattr(quantize, "int8_conv2d", counting)
    monkeypatch.setattr(quantize, "_packed_conv", counting_packed)
    (got,) = FerrumBackend.run_model(model, [x])
    (want,) = [np.asarray(v) for v in ReferenceEvaluator(model).run(None, {"x": x})]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    return got, calls


def _attrs(c: dict[str, Any]) -> dict[str, Any]:
    p = c["pads"]
    return {"strides": list(c["strides"]), "pads": list(p), "dilations": list(c["dil"]), "group": c["group"]}


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_integer_runs_on_the_int8_product(
    case: int, per_channel: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = CASES[case]
    x, w, wz = _values(c, per_channel)
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **_attrs(c))
    inits = [_init("w", w), _init("xz", np.array(77, np.uint8)), _init("wz", wz)]
    got, calls = _run_both(_model(node, x, TensorProto.INT32, inits), x, monkeypatch)
    assert calls == 1
    zeros = wz.reshape(-1).astype(np.int64)
    want = conv_reference(x, 77, w, zeros, c["strides"], c["pads"], c["dil"], c["group"])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_qlinear_conv_runs_on_the_int8_product(
    case: int, per_channel: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = CASES[case]
    x, w, _ = _values(c, per_channel)
    c_out = c["w"][0]
    # QLinearConv's int8 weights are symmetric (zero point 0); their scales per tensor or per channel
    w_scale = (RNG.uniform(0.002, 0.02, c_out) if per_channel else np.array(0.01)).astype(np.float32)
    w_zero = np.zeros(c_out, np.int8) if per_channel else np.array(0, np.int8)
    bias = RNG.integers(-5000, 5000, c_out).astype(np.int32)
    inits = [
        _init("xs", np.array(0.02, np.float32)),
        _init("xz", np.array(128, np.uint8)),
        _init("w", w),
        _init("ws", w_scale),
        _init("wz", w_zero),
        _init("ys", np.array(0.5, np.float32)),
        _init("yz", np.array(120, np.uint8)),
        _init("b", bias),
    ]
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    node = helper.make_node("QLinearConv", names, ["y"], **_attrs(c))
    got, calls = _run_both(_model(node, x, TensorProto.UINT8, inits), x, monkeypatch)
    assert calls == 1
    # the saturated ends are not all that is tested
    assert 0 < np.count_nonzero((got > 0) & (got < 255))


def test_one_dimensional_and_auto_padded_convolutions(monkeypatch: pytest.MonkeyPatch) -> None:
    x = RNG.integers(0, 256, (2, 3, 11)).astype(np.uint8)
    w = RNG.integers(-128, 128, (4, 3, 3)).astype(np.int8)
    node = helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], strides=[2], pads=[2, 1], dilations=[2])
    inits = [_init("w", w), _init("xz", np.array(9, np.uint8))]
    got, calls = _run_both(_model(node, x, TensorProto.INT32, inits), x, monkeypatch)
    assert calls == 1 and got.shape == (2, 4, 5)
    x2 = RNG.integers(0, 256, (1, 2, 7, 6)).astype(np.uint8)
    w2 = RNG.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    node = helper.make_node("ConvInteger", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])
    got, calls = _run_both(_model(node, x2, TensorProto.INT32, [_init("w", w2)]), x2, monkeypatch)
    assert calls == 1 and got.shape == (1, 3, 4, 3)


def test_uint8_weights_keep_the_f64_path(monkeypatch: pytest.MonkeyPatch) -> None:
    x = RNG.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    w = RNG.integers(129, 256, (3, 2, 3, 3)).astype(np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    got, calls = _run_both(_model(node, x, TensorProto.INT32, [_init("w", w)]), x, monkeypatch)
    # tried, declined (values above int8), computed in f64: the same exact result
    assert calls == 1
    want = conv_reference(x, 0, w, np.zeros(3, np.int64), (1, 1), (1, 1, 1, 1), (1, 1), 1)
    np.testing.assert_array_equal(got, want)
