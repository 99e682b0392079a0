"""ONNX recurrent and spatial ops beyond what their node tests cover, against NumPy references.

RNN and GRU with ``sequence_lens``, ``clip``, other activations and ``linear_before_reset=1`` (the
node tests cover none of these), RotaryEmbedding, and the spatial ops (AffineGrid, CenterCropPad,
Col2Im, DeformConv, MaxUnpool, RoiAlign, MaxRoiPool) on cases of their own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from ferrum.onnx.backend import FerrumBackend
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tests.support.onnx_graphs import graph_model, node_outputs


def _model(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int) -> onnx.ModelProto:
    return graph_model([node], inputs, node_outputs(node), {"": opset})


def _run(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int = 22) -> list[np.ndarray]:
    return [
        np.asarray(o) for o in FerrumBackend.run_model(_model(node, inputs, opset), list(inputs.values()))
    ]


def _reference(node: onnx.NodeProto, inputs: dict[str, np.ndarray], opset: int = 22) -> list[Any]:
    return list(ReferenceEvaluator(_model(node, inputs, opset)).run(None, inputs))


# --- RNN and GRU -----------------------------------------------------------------------------------


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-x)))


def _recurrent_reference(
    cell: Any, x: np.ndarray, h0: np.ndarray, lens: list[int], reverse: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Y ``[seq, batch, hidden]`` and Y_h of one direction, each batch entry walked over its length."""
    seq, batch, _ = x.shape
    y = np.zeros((seq, batch, h0.shape[-1]), x.dtype)
    h_last = h0.copy()
    for b in range(batch):
        h = h0[b : b + 1]
        steps = range(lens[b])
        for t in reversed(steps) if reverse else steps:
            h = cell(x[t, b : b + 1], h)
            y[t, b] = h[0]
        h_last[b] = h[0]
    return y, h_last


def _rnn_case(gates: int, bidirectional: bool, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    seq, batch, size, hidden = 5, 3, 4, 6
    dirs = 2 if bidirectional else 1
    return {
        "x": rng.normal(size=(seq, batch, size)).astype(np.float32),
        "w": rng.normal(scale=0.5, size=(dirs, gates * hidden, size)).astype(np.float32),
        "r": rng.normal(scale=0.5, size=(dirs, gates * hidden, hidden)).astype(np.float32),
        "b": rng.normal(scale=0.5, size=(dirs, 2 * gates * hidden)).astype(np.float32),
        "lens": np.array([5, 2, 4], np.int32),
        "h0": rng.normal(size=(dirs, batch, hidden)).astype(np.float32),
    }


def _gru_cell(w: np.ndarray, r: np.ndarray, b: np.ndarray, lbr: int, clip: float | None) -> Any:
    n = r.shape[-1]
    wb, rb = b[: 3 * n], b[3 * n :]

    def clamp(v: np.ndarray) -> np.ndarray:
        return v if clip is None else np.clip(v, -clip, clip)

    def cell(x: np.ndarray, h: np.ndarray) -> np.ndarray:
        xw = x @ w.T + wb
        z = _sigmoid(clamp(xw[:, :n] + h @ r[:n].T + rb[:n]))
        rr = _sigmoid(clamp(xw[:, n : 2 * n] + h @ r[n : 2 * n].T + rb[n : 2 * n]))
        if lbr:
            hn = rr * (h @ r[2 * n :].T + rb[2 * n :])
        else:
            hn = (rr * h) @ r[2 * n :].T + rb[2 * n :]
        cand = np.tanh(clamp(xw[:, 2 * n :] + hn))
        return np.asarray((1 - z) * cand + z * h)

    return cell


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("with_lens", [False, True])
def test_gru_against_a_stepwise_reference(direction: str, lbr: int, with_lens: bool) -> None:
    case = _rnn_case(3, direction == "bidirectional", seed=lbr)
    lens = [int(v) for v in case["lens"]] if with_lens else [5, 5, 5]
    inputs = case if with_lens else {k: v for k, v in case.items() if k != "lens"}
    node = helper.make_node(
        "GRU",
        ["x", "w", "r", "b", "lens" if with_lens else "", "h0"],
        ["y", "y_h"],
        hidden_size=6,
        direction=direction,
        linear_before_reset=lbr,
    )
    y, y_h = _run(node, inputs)
    reverse_of = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]
    for d, reverse in enumerate(reverse_of):
        cell = _gru_cell(case["w"][d], case["r"][d], case["b"][d], lbr, None)
        ey, eh = _recurrent_reference(cell, case["x"], case["h0"][d], lens, reverse)
        np.testing.assert_allclose(y[:, d], ey, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y_h[d], eh, rtol=1e-4, atol=1e-5)


def test_gru_linear_before_reset_matches_onnx_reference() -> None:
    case = _rnn_case(3, True, seed=3)
    inputs = {k: case[k] for k in ("x", "w", "r", "b")}
    node = helper.make_node(
        "GRU",
        ["x", "w", "r", "b"],
        ["y", "y_h"],
        hidden_size=6,
        direction="bidirectional",
        linear_before_reset=1,
    )
    for got, want in zip(_run(node, inputs), _reference(node, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_gru_clip_bounds_the_activations_inputs() -> None:
    case = _rnn_case(3, False, seed=4)
    case["x"] *= 10
    inputs = {k: case[k] for k in ("x", "w", "r", "b")}
    node = helper.make_node("GRU", ["x", "w", "r", "b"], ["y", "y_h"], hidden_size=6, clip=0.5)
    y, y_h = _run(node, inputs)
    cell = _gru_cell(case["w"][0], case["r"][0], case["b"][0], 0, 0.5)
    ey, eh = _recurrent_reference(cell, case["x"], np.zeros((3, 6), np.float32), [5, 5, 5], False)
    np.testing.assert_allclose(y[:, 0], ey, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(y_h[0], eh, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("activation", ["Tanh", "Relu"])
def test_rnn_with_sequence_lens(direction: str, activation: str) -> None:
    case = _rnn_case(1, direction == "bidirectional", seed=5)
    dirs = 2 if direction == "bidirectional" else 1
    node = helper.make_node(
        "RNN",
        ["x", "w", "r", "b", "lens", "h0"],
        ["y", "y_h"],
        hidden_size=6,
        direction=direction,
        activations=[activation] * dirs,
    )
    y, y_h = _run(node, case)
    f: Any = np.tanh if activation == "Tanh" else (lambda v: np.maximum(v, 0))
    for d, reverse in enumerate([False, True] if dirs == 2 else [direction == "reverse"]):
        w, r, b = case["w"][d], case["r"][d], case["b"][d]

        def cell(x: np.ndarray, h: np.ndarray, w: Any = w, r: Any = r, b: Any = b) -> np.ndarray:
            return np.asarray(f(x @ w.T + h @ r.T + b[:6] + b[6:]))

        ey, eh = _recurrent_reference(cell, case["x"], case["h0"][d], [5, 2, 4], reverse)
        np.testing.assert_allclose(y[:, d], ey, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y_h[d], eh, rtol=1e-4, atol=1e-5)


def test_rnn_layout_1_matches_onnx_reference() -> None:
    case = _rnn_case(1, True, seed=6)
    inputs = {
        "x": case["x"].swapaxes(0, 1).copy(),
        "w": case["w"],
        "r": case["r"],
        "b": case["b"],
        "h0": case["h0"].swapaxes(0, 1).copy(),
    }
    node = helper.make_node(
        "RNN",
        ["x", "w", "r", "b", "", "h0"],
        ["y", "y_h"],
        hidden_size=6,
        direction="bidirectional",
        layout=1,
    )
    for got, want in zip(_run(node, inputs), _reference(node, inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_rnn_refuses_an_unknown_activation() -> None:
    case = _rnn_case(1, False, seed=7)
    inputs = {k: case[k] for k in ("x", "w", "r")}
    node = helper.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=6, activations=["Gelu"])
    with pytest.raises(Exception, match="Gelu"):
        _run(node, inputs)


# --- RotaryEmbedding -------------------------------------------------------------------------------


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 4])
@pytest.mark.parametrize("three_d", [False, True])
def test_rotary_embedding_matches_onnx_reference(interleaved: int, rotary_dim: int, three_d: bool) -> None:
    rng = np.random.default_rng(8)
    batch, heads, seq, size = 2, 3, 5, 8
    half = (rotary_dim or size) // 2
    x = rng.normal(size=(batch, heads, seq, size)).astype(np.float32)
    if three_d:
        x = x.transpose(0, 2, 1, 3).reshape(batch, seq, heads * size).copy()
    angles = rng.uniform(0, 6, size=(16, half))
    inputs: dict[str, np.ndarray] = {
        "x": x,
        "cos": np.cos(angles).astype(np.float32),
        "sin": np.sin(angles).astype(np.float32),
        "pos": rng.integers(0, 16, size=(batch, seq)).astype(np.int64),
    }
    attrs: dict[str, Any] = {"interleaved": interleaved, "rotary_embedding_dim": rotary_dim}
    if three_d:
        attrs["num_heads"] = heads
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], **attrs)
    (got,) = _run(node, inputs, opset=23)
    (want,) = _reference(node, inputs, opset=23)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_rotary_embedding_checks_the_cache_width() -> None:
    x = np.zeros((1, 2, 3, 8), np.float32)
    cache = np.zeros((1, 3, 3), np.float32)  # 3 angles per position, 4 needed
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"])
    with pytest.raises(Exception, match="cache"):
        _run(node, {"x": x, "cos": cache, "sin": cache}, opset=23)


# --- spatial ops -----------------------------------------------------------------------------------


def _constant(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(value, name))


def _run_graph(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], output: str, opset: int) -> Any:
    model = graph_model(nodes, inputs, [output], {"": opset})
    got = FerrumBackend.run_model(model, list(inputs.values()))[0]
    (want, *_) = ReferenceEvaluator(model).run(None, inputs)
    return np.asarray(got), want


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 3, 2, 6], [2, 1, 3, 4, 5]])
@pytest.mark.parametrize("align_corners", [0, 1])
@pytest.mark.parametrize("constant_size", [False, True])
def test_affine_grid_matches_onnx_reference(size: list[int], align_corners: int, constant_size: bool) -> None:
    n = len(size) - 2
    theta = np.random.default_rng(9).normal(size=(2, n, n + 1)).astype(np.float32)
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align_corners)
    size_a = np.array(size, np.int64)
    if constant_size:
        got, want = _run_graph([_constant("size", size_a), node], {"theta": theta}, "grid", 20)
    else:
        got, want = _run_graph([node], {"theta": theta, "size": size_a}, "grid", 20)
    assert got.shape == (2, *size[2:], n)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("shape", "axes"), [([3, 8], None), ([5, 2], [1, 2]), ([7], [-1]), ([1, 1], [0, 2]), ([6, 9], [1, 2])]
)
def test_center_crop_pad_matches_onnx_reference(shape: list[int], axes: list[int] | None) -> None:
    x = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    if axes is None:
        shape = [3, 8, 6]
    attrs: dict[str, Any] = {} if axes is None else {"axes": axes}
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], **attrs)
    got, want = _run_graph([_constant("shape", np.array(shape, np.int64)), node], {"x": x}, "y", 18)
    np.testing.assert_array_equal(got, want)


def test_center_crop_pad_keeps_integer_data() -> None:
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"])
    got, want = _run_graph([_constant("shape", np.array([5, 2], np.int64)), node], {"x": x}, "y", 18)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("image", "block", "attrs"),
    [
        ([5, 5], [2, 3], {}),
        ([6, 7], [3, 2], {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2]}),
        ([4, 5, 3], [2, 2, 1], {"strides": [1, 2, 1]}),
    ],
)
def test_col2im_matches_onnx_reference(image: list[int], block: list[int], attrs: dict[str, Any]) -> None:
    n = len(image)
    s = attrs.get("strides", [1] * n)
    d = attrs.get("dilations", [1] * n)
    p = attrs.get("pads", [0] * 2 * n)
    blocks = [(image[i] + p[i] + p[i + n] - d[i] * (block[i] - 1) - 1) // s[i] + 1 for i in range(n)]
    x = (
        np.random.default_rng(10)
        .normal(size=(2, 3 * int(np.prod(block)), int(np.prod(blocks))))
        .astype(np.float32)
    )
    nodes = [
        _constant("image", np.array(image, np.int64)),
        _constant("block", np.array(block, np.int64)),
        helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs),
    ]
    got, want = _run_graph(nodes, {"x": x}, "y", 18)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_deform_conv_with_asymmetric_pads_and_groups_matches_onnx_reference() -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(size=(2, 4, 6, 7)).astype(np.float32)
    w = rng.normal(size=(6, 2, 3, 2)).astype(np.float32)
    pads, strides, dilations = [1, 0, 2, 1], [2, 1], [1, 2]
    oh = (6 + 1 + 2 - 3) // 2 + 1
    ow = (7 + 0 + 1 - (2 - 1) * 2 - 1) // 1 + 1
    offset = rng.normal(size=(2, 2 * 3 * 2 * 2, oh, ow)).astype(np.float32)
    mask = rng.uniform(size=(2, 2 * 3 * 2, oh, ow)).astype(np.float32)
    bias = rng.normal(size=(6,)).astype(np.float32)
    inputs = {"x": x, "w": w, "offset": offset, "b": bias, "mask": mask}
    node = helper.make_node(
        "DeformConv",
        ["x", "w", "offset", "b", "mask"],
        ["y"],
        group=2,
        offset_group=2,
        pads=pads,
        strides=strides,
        dilations=dilations,
    )
    (got,) = _run(node, inputs)
    (want,) = _reference(node, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_max_unpool_inverts_max_pool_with_overlapping_windows() -> None:
    x = np.random.default_rng(12).normal(size=(2, 3, 5, 6)).astype(np.float32)
    pool = helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=[3, 3], strides=[1, 1])
    unpool = helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[3, 3], strides=[1, 1])
    graph = helper.make_graph(
        [pool, unpool],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    (got,) = FerrumBackend.run_model(model, [x])
    # every window's maximum is back in place, each once, however many windows chose it
    want = np.zeros_like(x)
    for b in range(2):
        for c in range(3):
            for i in range(3):
                for j in range(4):
                    win = x[b, c, i : i + 3, j : j + 3]
                    r, s = np.unravel_index(np.argmax(win), win.shape)
                    want[b, c, i + r, j + s] = win[r, s]
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_roi_align_matches_onnx_reference(mode: str, transform: str, sampling_ratio: int) -> None:
    rng = np.random.default_rng(13)
    x = rng.normal(size=(2, 3, 10, 12)).astype(np.float32)
    rois = np.array(
        [[0, 0, 9, 9], [1.5, 2.5, 7.2, 4.1], [-3, -2, 4, 30], [5, 5, 5, 5], [10, 8, 22, 19]], np.float32
    )
    batch = np.array([0, 1, 1, 0, 1], np.int64)
    node = helper.make_node(
        "RoiAlign",
        ["x", "rois", "batch"],
        ["y"],
        mode=mode,
        coordinate_transformation_mode=transform,
        output_height=3,
        output_width=4,
        sampling_ratio=sampling_ratio,
        spatial_scale=0.5,
    )
    inputs: dict[str, np.ndarray] = {"x": x, "rois": rois, "batch": batch}
    (got,) = _run(node, inputs)
    (want,) = _reference(node, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _max_roi_pool_reference(
    x: np.ndarray, rois: np.ndarray, pooled: tuple[int, int], scale: float
) -> np.ndarray:
    """Caffe's RoI pooling, loop by loop."""
    out = np.zeros((len(rois), x.shape[1], *pooled), x.dtype)
    height, width = x.shape[2:]
    for r, (b, *box) in enumerate(rois):
        x1, y1, x2, y2 = (int(np.floor(abs(v * scale) + 0.5) * np.sign(v)) for v in box)
        bin_h = max(y2 - y1 + 1, 1) / pooled[0]
        bin_w = max(x2 - x1 + 1, 1) / pooled[1]
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                h0 = min(max(int(np.floor(ph * bin_h)) + y1, 0), height)
                h1 = min(max(int(np.ceil((ph + 1) * bin_h)) + y1, 0), height)
                w0 = min(max(int(np.floor(pw * bin_w)) + x1, 0), width)
                w1 = min(max(int(np.ceil((pw + 1) * bin_w)) + x1, 0), width)
                if h1 > h0 and w1 > w0:
                    out[r, :, ph, pw] = x[int(b), :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def test_max_roi_pool_against_caffe_pooling() -> None:
    rng = np.random.default_rng(14)
    x = rng.normal(size=(2, 3, 9, 11)).astype(np.float32)
    rois = np.array(
        [[0, 0, 0, 8, 8], [1, 2.4, 1.5, 9.6, 5.5], [1, -4, -4, 2, 3], [0, 20, 20, 30, 30], [0, 3, 3, 3, 3]],
        np.float32,
    )
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[2, 3], spatial_scale=0.8)
    (got,) = _run(node, {"x": x, "rois": rois})
    np.testing.assert_allclose(got, _max_roi_pool_reference(x, rois, (2, 3), 0.8), rtol=1e-6)
