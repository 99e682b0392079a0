"""ONNX signal, detection, ML-domain and training-domain ops, and the spatial cases their node tests miss.

DFT, STFT and MelWeightMatrix against NumPy's FFT and ONNX's reference;
NonMaxSuppression, GridSample (nearest, cubic, volumes), antialiased Resize,
dilated AveragePool, column-major MaxPool indices, peephole LSTM, seeded
Dropout, the ``ai.onnx.ml`` ops and the ``ai.onnx.preview.training``
optimizers against ONNX's ``ReferenceEvaluator`` or NumPy; one generated
module per domain (run, and clean under ``mypy --strict``); bad inputs give
an ``OnnxError`` that says what was expected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.onnx import OnnxError, UnsupportedOpError, load
from ferrum.onnx.backend import FerrumBackend
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops.signal import dft
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tests.support.onnx_graphs import graph_model, node_outputs
from tests.support.onnx_models import import_generated, mypy_strict

DEVICE = NdArray.device()
ML = "ai.onnx.ml"
TRAINING = "ai.onnx.preview.training"

def _model(node: onnx.NodeProto, inputs: dict[str, Any], opsets: dict[str, int]) -> onnx.ModelProto:
    return graph_model([node], inputs, node_outputs(node), opsets)


def _both(
    node: onnx.NodeProto, inputs: dict[str, Any], opsets: dict[str, int] | None = None
) -> tuple[list[np.ndarray], list[Any]]:
    """ferrum's outputs and ONNX's reference outputs for one node."""
    model = _model(node, inputs, opsets or {"": 22})
    ours = [np.asarray(o) for o in FerrumBackend.run_model(model, list(inputs.values()))]
    theirs = list(ReferenceEvaluator(model).run(None, inputs))
    return ours, theirs


def _close(ours: list[np.ndarray], theirs: list[Any], rtol: float = 1e-5, atol: float = 1e-5) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == np.asarray(b).shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# --- DFT, STFT, MelWeightMatrix ----------------------------------------------------------------------


def _numpy_dft(x: np.ndarray, axis: int, length: int, inverse: bool, onesided: bool) -> np.ndarray:
    signal = x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]
    signal = signal.astype(np.complex128)
    if inverse and onesided:
        return np.fft.irfft(signal, n=length, axis=axis)[..., None]
    spectrum = (
        np.fft.ifft(signal, n=length, axis=axis) if inverse else np.fft.fft(signal, n=length, axis=axis)
    )
    if onesided:
        spectrum = np.take(spectrum, np.arange(length // 2 + 1), axis=axis)
    return np.stack([spectrum.real, spectrum.imag], axis=-1)


# An inverse one-sided DFT reads a complex spectrum: that combination has no real-input case.
DFT_CASES = [
    (c, inv, one)
    for c in (False, True)
    for inv, one in ((0, 0), (0, 1), (1, 0), (1, 1))
    if c or not (inv and one)
]


@pytest.mark.parametrize(("complex_input", "inverse", "onesided"), DFT_CASES)
@pytest.mark.parametrize("length", [None, 5, 12])
def test_dft_matches_numpy_fft(complex_input: bool, inverse: int, onesided: int, length: int | None) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 7, 2 if complex_input else 1)).astype(np.float32)
    inputs = {"x": x, "axis": np.array(2, np.int64)}
    names = ["x", "", "axis"]
    if length is not None:
        inputs = {"x": x, "length": np.array(length, np.int64), "axis": np.array(2, np.int64)}
        names = ["x", "length", "axis"]
    node = helper.make_node("DFT", names, ["y"], inverse=inverse, onesided=onesided)
    (ours,) = FerrumBackend.run_model(_model(node, inputs, {"": 20}), list(inputs.values()))
    n = length or (2 * (7 - 1) if inverse and onesided else 7)
    expected = _numpy_dft(x, 2, n, bool(inverse), bool(onesided))
    np.testing.assert_allclose(np.asarray(ours), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("inverse", "onesided", "length"), [(0, 0, None), (0, 1, 9), (1, 0, 6), (1, 1, 10)])
def test_dft_under_autodiff_matches_numpy_and_has_gradients(
    inverse: int, onesided: int, length: int | None
) -> None:
    device = Autodiff[NdArray].device()
    x = np.random.default_rng(1).normal(size=(3, 8, 2)).astype(np.float32)
    tracked = Tensor.from_numpy(x, device).require_grad()
    out = dft(tracked, length, 1, inverse=inverse, onesided=onesided)
    n = length or (2 * (8 - 1) if inverse and onesided else 8)
    np.testing.assert_allclose(out.to_numpy(), _numpy_dft(x, 1, n, bool(inverse), bool(onesided)), atol=1e-5)
    if not inverse and not onesided and length is None:
        # d/dx_n of sum_k Re X_k = sum_k cos(2 pi k n / N): N at n = 0, 0 elsewhere (real part of x)
        grad = tracked.grad(out.narrow(2, 0, 1).sum().backward())
        assert grad is not None
        expected = np.zeros_like(x)
        expected[:, 0, 0] = 8.0
        np.testing.assert_allclose(grad.to_numpy(), expected, atol=1e-5)


def test_dft_opset_17_reads_axis_as_an_attribute() -> None:
    x = np.random.default_rng(2).normal(size=(4, 6, 1)).astype(np.float32)
    node = helper.make_node("DFT", ["x"], ["y"], axis=1)
    (ours,) = FerrumBackend.run_model(_model(node, {"x": x}, {"": 17}), [x])
    np.testing.assert_allclose(np.asarray(ours), _numpy_dft(x, 1, 6, False, False), atol=1e-5)


@pytest.mark.parametrize(("step", "window", "length", "onesided"), [(4, None, 16, 1), (3, 10, None, 0)])
def test_stft_matches_numpy_frames(step: int, window: int | None, length: int | None, onesided: int) -> None:
    rng = np.random.default_rng(3)
    signal = rng.normal(size=(2, 40, 1)).astype(np.float32)
    inputs: dict[str, np.ndarray] = {"signal": signal, "step": np.array(step, np.int64)}
    names = ["signal", "step"]
    w = np.hanning(window).astype(np.float32) if window else None
    if w is not None:
        inputs["window"] = w
        names.append("window")
    if length is not None:
        inputs["length"] = np.array(length, np.int64)
        names += [""] * (3 - len(names)) + ["length"]
    node = helper.make_node("STFT", names, ["y"], onesided=onesided)
    (ours,) = FerrumBackend.run_model(_model(node, inputs, {"": 17}), list(inputs.values()))
    size = window or length or 40
    frames = np.stack([signal[:, s : s + size, 0] for s in range(0, 40 - size + 1, step)], axis=1)
    spectrum = np.fft.fft(frames * (w if w is not None else 1.0), axis=-1)
    if onesided:
        spectrum = spectrum[..., : size // 2 + 1]
    np.testing.assert_allclose(np.asarray(ours), np.stack([spectrum.real, spectrum.imag], -1), atol=1e-4)


@pytest.mark.parametrize(
    ("mels", "n_fft", "rate", "low", "high"), [(8, 64, 8000, 0.0, 4000.0), (5, 33, 16000, 100.0, 7000.0)]
)
def test_mel_weight_matrix_matches_onnx_reference(
    mels: int, n_fft: int, rate: int, low: float, high: float
) -> None:
    inputs = {
        "m": np.array(mels, np.int64),
        "n": np.array(n_fft, np.int64),
        "r": np.array(rate, np.int64),
        "lo": np.array(low, np.float32),
        "hi": np.array(high, np.float32),
    }
    node = helper.make_node("MelWeightMatrix", list(inputs), ["y"], output_datatype=TensorProto.DOUBLE)
    ours, theirs = _both(node, inputs, {"": 17})
    assert ours[0].dtype == np.float64
    _close(ours, theirs)


# --- NonMaxSuppression ---------------------------------------------------------------------------------


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize(("limit", "iou", "score"), [(3, 0.3, None), (10, 0.5, 0.2), (0, 0.5, None)])
def test_non_max_suppression_matches_onnx_reference(
    center: int, limit: int, iou: float, score: float | None
) -> None:
    rng = np.random.default_rng(4)
    corner = rng.uniform(0, 10, size=(2, 30, 2))
    size = rng.uniform(1, 4, size=(2, 30, 2))
    if center:
        boxes = np.concatenate([corner, size], -1)
    else:
        boxes = np.concatenate([corner, corner + size], -1)[..., [2, 1, 0, 3]]  # mixed corner order
    inputs = {
        "boxes": boxes.astype(np.float32),
        "scores": rng.uniform(size=(2, 3, 30)).astype(np.float32),
        "limit": np.array([limit], np.int64),
        "iou": np.array([iou], np.float32),
    }
    if score is not None:
        inputs["score"] = np.array([score], np.float32)
    node = helper.make_node("NonMaxSuppression", list(inputs), ["y"], center_point_box=center)
    ours, theirs = _both(node, inputs)
    np.testing.assert_array_equal(ours[0], theirs[0])


def test_non_max_suppression_refuses_mismatched_boxes_and_scores() -> None:
    inputs = {"boxes": np.zeros((1, 4, 4), np.float32), "scores": np.zeros((1, 1, 5), np.float32)}
    node = helper.make_node("NonMaxSuppression", list(inputs), ["y"])
    with pytest.raises(OnnxError, match=r"boxes \[batch, boxes, 4\] and scores \[batch, classes, boxes\]"):
        FerrumBackend.run_model(_model(node, inputs, {"": 11}), list(inputs.values()))


# --- GridSample, Resize, pools, LSTM, Dropout, Reshape ----------------------------------------------


# ONNX allows cubic only over 2 spatial dims.
GRID_MODES = [
    (m, v) for m in ("nearest", "linear", "cubic") for v in (False, True) if not (v and m == "cubic")
]


@pytest.mark.parametrize(("mode", "volume"), GRID_MODES)
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_matches_onnx_reference(mode: str, padding: str, align: int, volume: bool) -> None:
    rng = np.random.default_rng(5)
    spatial = (3, 4, 5) if volume else (4, 5)
    x = rng.normal(size=(2, 3, *spatial)).astype(np.float32)
    grid = rng.uniform(-1.4, 1.4, size=(2, 3, 2, len(spatial)) if not volume else (2, 2, 3, 2, 3))
    inputs = {"x": x, "grid": grid.astype(np.float32)}
    node = helper.make_node(
        "GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding, align_corners=align
    )
    ours, theirs = _both(node, inputs)
    _close(ours, theirs, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scales", [[1.0, 1.0, 0.4, 0.7], [1.0, 1.0, 1.5, 0.5]])
@pytest.mark.parametrize("exclude_outside", [0, 1])
def test_resize_antialias_matches_onnx_reference(
    mode: str, scales: list[float], exclude_outside: int
) -> None:
    x = np.random.default_rng(6).normal(size=(1, 2, 9, 7)).astype(np.float32)
    inputs = {"x": x, "scales": np.array(scales, np.float32)}
    node = helper.make_node(
        "Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1, exclude_outside=exclude_outside
    )
    ours, theirs = _both(node, inputs, {"": 19})
    _close(ours, theirs, atol=1e-5)


def test_resize_align_corners_uses_the_unrounded_output_length() -> None:
    x = np.random.default_rng(7).normal(size=(1, 1, 5, 5)).astype(np.float32)
    inputs = {"x": x, "scales": np.array([1.0, 1.0, 0.7, 0.7], np.float32)}
    node = helper.make_node(
        "Resize", ["x", "", "scales"], ["y"], mode="linear", coordinate_transformation_mode="align_corners"
    )
    ours, theirs = _both(node, inputs, {"": 19})
    _close(ours, theirs)


@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("ceil", [0, 1])
@pytest.mark.parametrize("dims", [1, 2])
def test_dilated_average_pool_matches_onnx_reference(include_pad: int, ceil: int, dims: int) -> None:
    x = np.random.default_rng(8).normal(size=(2, 3, *([9] * dims))).astype(np.float32)
    node = helper.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        kernel_shape=[3] * dims,
        strides=[2] * dims,
        dilations=[2] * dims,
        pads=[1] * dims + [2] * dims,
        count_include_pad=include_pad,
        ceil_mode=ceil,
    )
    ours, theirs = _both(node, {"x": x})
    _close(ours, theirs)


def test_max_pool_column_major_indices_match_onnx_reference() -> None:
    x = np.random.default_rng(9).normal(size=(2, 2, 5, 6)).astype(np.float32)
    node = helper.make_node(
        "MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 3], strides=[2, 2], pads=[1, 1, 0, 1], storage_order=1
    )
    ours, theirs = _both(node, {"x": x})
    _close(ours[:1], theirs[:1])
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_with_peepholes_matches_onnx_reference(direction: str) -> None:
    rng = np.random.default_rng(10)
    dirs, hidden = (2 if direction == "bidirectional" else 1), 4
    inputs = {
        "x": rng.normal(size=(5, 2, 3)).astype(np.float32),
        "w": rng.normal(size=(dirs, 4 * hidden, 3)).astype(np.float32) * 0.5,
        "r": rng.normal(size=(dirs, 4 * hidden, hidden)).astype(np.float32) * 0.5,
        "b": rng.normal(size=(dirs, 8 * hidden)).astype(np.float32) * 0.1,
        "h0": rng.normal(size=(dirs, 2, hidden)).astype(np.float32),
        "c0": rng.normal(size=(dirs, 2, hidden)).astype(np.float32),
        "p": rng.normal(size=(dirs, 3 * hidden)).astype(np.float32),
    }
    node = helper.make_node(
        "LSTM",
        ["x", "w", "r", "b", "", "h0", "c0", "p"],
        ["y", "y_h", "y_c"],
        hidden_size=hidden,
        direction=direction,
    )
    ours, theirs = _both(node, inputs)
    _close(ours, theirs, atol=1e-5)


@pytest.mark.parametrize("peepholes", [False, True])
def test_lstm_layout_1_reads_batch_major_initial_states(peepholes: bool) -> None:
    # With layout=1 the initial states are [batch, dirs, hidden], like Y_h and Y_c.
    rng = np.random.default_rng(12)
    dirs, batch, hidden = 2, 3, 4
    inputs = {
        "x": rng.normal(size=(batch, 5, 3)).astype(np.float32),
        "w": rng.normal(size=(dirs, 4 * hidden, 3)).astype(np.float32) * 0.5,
        "r": rng.normal(size=(dirs, 4 * hidden, hidden)).astype(np.float32) * 0.5,
        "b": rng.normal(size=(dirs, 8 * hidden)).astype(np.float32) * 0.1,
        "h0": rng.normal(size=(batch, dirs, hidden)).astype(np.float32),
        "c0": rng.normal(size=(batch, dirs, hidden)).astype(np.float32),
    }
    names = ["x", "w", "r", "b", "", "h0", "c0"]
    if peepholes:
        inputs["p"] = rng.normal(size=(dirs, 3 * hidden)).astype(np.float32)
        names.append("p")
    node = helper.make_node(
        "LSTM", names, ["y", "y_h", "y_c"], hidden_size=hidden, direction="bidirectional", layout=1
    )
    ours, theirs = _both(node, inputs)
    assert ours[0].shape == (batch, 5, dirs, hidden) and ours[2].shape == (batch, dirs, hidden)
    _close(ours, theirs, atol=1e-5)


def test_seeded_dropout_draws_numpy_random_state() -> None:
    x = np.random.default_rng(11).normal(size=(4, 5)).astype(np.float32)
    inputs = {"x": x, "ratio": np.array(0.3, np.float32), "training": np.array(True)}
    node = helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"], seed=7)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5]),
            helper.make_tensor_value_info("ratio", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("training", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in ("y", "mask")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    y, mask = (np.asarray(o) for o in FerrumBackend.run_model(model, list(inputs.values())))
    keep = np.random.RandomState(7).uniform(0.0, 1.0, x.shape) >= 0.3
    np.testing.assert_array_equal(mask, keep)
    np.testing.assert_allclose(y, np.where(keep, x / 0.7, 0.0), rtol=1e-6)


def test_reshape_of_an_empty_tensor_with_allowzero() -> None:
    inputs = {"x": np.zeros((0, 3, 4), np.float32), "shape": np.array([3, 4, 0], np.int64)}
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], allowzero=1)
    ours, _ = _both(node, inputs)
    assert ours[0].shape == (3, 4, 0)


# --- ai.onnx.ml ------------------------------------------------------------------------------------


def test_binarizer_and_array_feature_extractor_match_onnx_reference() -> None:
    x = np.random.default_rng(12).normal(size=(3, 5)).astype(np.float32)
    node = helper.make_node("Binarizer", ["x"], ["y"], domain=ML, threshold=0.25)
    _close(*_both(node, {"x": x}, {ML: 1}))
    inputs = {"x": x, "i": np.array([4, 0, 4], np.int64)}
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ML)
    _close(*_both(node, inputs, {ML: 1}))


def test_array_feature_extractor_refuses_an_index_out_of_range() -> None:
    inputs = {"x": np.zeros((2, 3), np.float32), "i": np.array([3], np.int64)}
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ML)
    with pytest.raises(OnnxError, match=r"indices must be in \[0, 3\), found 3\.\.3"):
        FerrumBackend.run_model(_model(node, inputs, {ML: 1}), list(inputs.values()))


def test_label_encoder_maps_numbers_and_refuses_string_keys_on_numbers() -> None:
    x = np.array([[1, 5, 7], [3, 1, 2]], np.int64)
    node = helper.make_node(
        "LabelEncoder",
        ["x"],
        ["y"],
        domain=ML,
        keys_int64s=[1, 2, 3],
        values_floats=[0.5, 1.5, 2.5],
        default_float=-1.0,
    )
    (ours,) = FerrumBackend.run_model(_model(node, {"x": x}, {ML: 2}), [x])
    np.testing.assert_array_equal(np.asarray(ours), [[0.5, -1.0, -1.0], [2.5, 0.5, 1.5]])
    node = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, keys_strings=["a"], values_int64s=[1])
    with pytest.raises(OnnxError, match="string keys are not supported on a number tensor"):
        FerrumBackend.run_model(_model(node, {"x": x}, {ML: 2}), [x])


def _forest() -> dict[str, Any]:
    """Two trees over 3 features, 2 targets: tree 0 splits on f0 then f2 (member set), tree 1 on f1."""
    return {
        "tree_roots": [0, 2],
        "nodes_featureids": [0, 2, 1],
        "nodes_modes": helper.make_tensor("modes", TensorProto.UINT8, [3], [0, 6, 3]),
        "nodes_splits": helper.make_tensor("splits", TensorProto.FLOAT, [3], [0.1, 0.0, -0.2]),
        "nodes_truenodeids": [1, 0, 3],
        "nodes_trueleafs": [0, 1, 1],
        "nodes_falsenodeids": [0, 1, 2],
        "nodes_falseleafs": [1, 1, 1],
        "nodes_missing_value_tracks_true": [1, 0, 0],
        "membership_values": helper.make_tensor("members", TensorProto.FLOAT, [3], [1.0, 2.0, np.nan]),
        "leaf_targetids": [0, 1, 0, 1],
        "leaf_weights": helper.make_tensor("weights", TensorProto.FLOAT, [4], [1.5, -2.0, 0.25, 4.0]),
        "n_targets": 2,
    }


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
def test_tree_ensemble_matches_onnx_reference(aggregate: int) -> None:
    rng = np.random.default_rng(13)
    x = rng.normal(size=(12, 3)).astype(np.float32)
    x[:4, 2] = [1.0, 2.0, 3.0, 1.0]
    x[5, 0] = np.nan
    node = helper.make_node(
        "TreeEnsemble", ["x"], ["y"], domain=ML, aggregate_function=aggregate, **_forest()
    )
    _close(*_both(node, {"x": x}, {ML: 5, "": 22}))


def test_tree_ensemble_refuses_a_leaf_target_out_of_range() -> None:
    attrs = {**_forest(), "leaf_targetids": [0, 1, 0, 2]}
    node = helper.make_node("TreeEnsemble", ["x"], ["y"], domain=ML, **attrs)
    x = np.zeros((1, 3), np.float32)
    with pytest.raises(OnnxError, match=r"leaf_targetids must pair leaf_weights and lie in \[0, 2\)"):
        FerrumBackend.run_model(_model(node, {"x": x}, {ML: 5}), [x])


def test_an_unknown_op_of_another_domain_is_named_with_its_domain() -> None:
    x = np.zeros((2, 3), np.float32)
    node = helper.make_node("Scaler", ["x"], ["y"], domain=ML)
    with pytest.raises(UnsupportedOpError, match=r"ai\.onnx\.ml::Scaler"):
        load(_model(node, {"x": x}, {ML: 1}), DEVICE)


# --- ai.onnx.preview.training ----------------------------------------------------------------------


def _training_inputs(states: int, n: int, step: int) -> dict[str, Any]:
    rng = np.random.default_rng(14 + states)
    inputs = {"r": np.array(0.1, np.float32), "t": np.array(step, np.int64)}
    for group in ["x", "g", *[f"s{k}" for k in range(states)]]:
        for i in range(n):
            value = rng.normal(size=(2, 3)).astype(np.float32)
            inputs[f"{group}{i}"] = np.abs(value) if group == f"s{states - 1}" else value
    return inputs


@pytest.mark.parametrize(
    ("op_type", "states", "attrs"),
    [
        ("Adagrad", 1, {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.01}),
        ("Adam", 2, {"alpha": 0.8, "beta": 0.9, "norm_coefficient": 0.01, "norm_coefficient_post": 0.02}),
        ("Momentum", 1, {"alpha": 0.9, "beta": 0.5, "mode": "standard", "norm_coefficient": 0.01}),
        ("Momentum", 1, {"alpha": 0.9, "beta": 0.5, "mode": "nesterov", "norm_coefficient": 0.0}),
    ],
)
@pytest.mark.parametrize("step", [0, 3])
def test_optimizer_steps_match_onnx_reference(
    op_type: str, states: int, attrs: dict[str, Any], step: int
) -> None:
    inputs = _training_inputs(states, 2, step)
    outputs = [f"new_{name}" for name in inputs if name[0] in "xs"]
    node = helper.make_node(op_type, list(inputs), outputs, domain=TRAINING, **attrs)
    _close(*_both(node, inputs, {TRAINING: 1}), rtol=1e-5, atol=1e-6)


def test_optimizer_refuses_inputs_that_do_not_group() -> None:
    inputs = _training_inputs(1, 1, 1)
    del inputs["s00"]
    node = helper.make_node("Adagrad", list(inputs), ["x_new"], domain=TRAINING)
    with pytest.raises(OnnxError, match="expected R, T and 3 inputs per updated tensor"):
        FerrumBackend.run_model(_model(node, inputs, {TRAINING: 1}), list(inputs.values()))


# --- bad inputs and generated code --------------------------------------------------------------------


def test_dft_refuses_the_complex_axis() -> None:
    x = np.zeros((2, 4, 2), np.float32)
    inputs = {"x": x, "axis": np.array(-1, np.int64)}
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"])
    with pytest.raises(OnnxError, match=r"DFT: axis must be in \[-3, -2\] or \[0, 1\], found -1"):
        FerrumBackend.run_model(_model(node, inputs, {"": 20}), list(inputs.values()))


def test_stft_refuses_a_window_of_another_length() -> None:
    inputs = {
        "s": np.zeros((1, 16, 1), np.float32),
        "step": np.array(2, np.int64),
        "w": np.ones(4, np.float32),
        "n": np.array(8, np.int64),
    }
    node = helper.make_node("STFT", ["s", "step", "w", "n"], ["y"])
    with pytest.raises(OnnxError, match="window must be rank 1 of frame_length 8, found shape"):
        FerrumBackend.run_model(_model(node, inputs, {"": 17}), list(inputs.values()))


def _signal_model() -> onnx.ModelProto:
    """A real signal's magnitude spectrum through DFT, with NMS over constant boxes scored by it."""
    axis = helper.make_tensor("axis", TensorProto.INT64, [], [1])
    nodes = [
        helper.make_node("DFT", ["x", "", "axis"], ["spectrum"], name="dft", onesided=1),
        helper.make_node("ReduceL2", ["spectrum", "last"], ["magnitude"], name="mag", keepdims=0),
        helper.make_node("Reshape", ["magnitude", "score_shape"], ["scores"], name="shape"),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "limit", "iou"], ["picked"], name="nms"),
    ]
    boxes = np.array(
        [[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3], [5, 5, 6, 6], [5, 5.1, 6, 6]]], np.float32
    )
    initializers = [
        axis,
        helper.make_tensor("last", TensorProto.INT64, [1], [-1]),
        helper.make_tensor("score_shape", TensorProto.INT64, [3], [1, 1, 5]),
        onnx.numpy_helper.from_array(boxes, "boxes"),
        helper.make_tensor("limit", TensorProto.INT64, [1], [3]),
        helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.5]),
    ]
    graph = helper.make_graph(
        nodes,
        "signal",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 1])],
        [
            helper.make_tensor_value_info("spectrum", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("picked", TensorProto.INT64, None),
        ],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _forest_model() -> onnx.ModelProto:
    """TreeEnsemble scores then a Binarizer, and an Adam step on the scores: three domains in one graph."""
    nodes = [
        helper.make_node("TreeEnsemble", ["x"], ["scores"], name="forest", domain=ML, **_forest()),
        helper.make_node("Binarizer", ["scores"], ["label"], name="bin", domain=ML, threshold=0.5),
        helper.make_node(
            "Adam",
            ["r", "t", "scores", "label", "v", "h"],
            ["x_new", "v_new", "h_new"],
            name="adam",
            domain=TRAINING,
        ),
    ]
    initializers = [
        helper.make_tensor("r", TensorProto.FLOAT, [], [0.1]),
        helper.make_tensor("t", TensorProto.INT64, [], [2]),
        onnx.numpy_helper.from_array(np.zeros((4, 2), np.float32), "v"),
        onnx.numpy_helper.from_array(np.ones((4, 2), np.float32), "h"),
    ]
    graph = helper.make_graph(
        nodes,
        "forest",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("label", "x_new", "h_new")],
        initializers,
    )
    imports = [helper.make_opsetid("", 22), helper.make_opsetid(ML, 5), helper.make_opsetid(TRAINING, 1)]
    return helper.make_model(graph, opset_imports=imports)


def test_generated_modules_run_and_pass_mypy_strict(tmp_path: Path) -> None:
    sources = []
    rng = np.random.default_rng(15)
    for name, model, x in [
        ("signal", _signal_model(), rng.normal(size=(1, 8, 1)).astype(np.float32)),
        ("forest", _forest_model(), rng.normal(size=(4, 3)).astype(np.float32)),
    ]:
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
        files = generate(path, tmp_path, name)
        module = import_generated(files.source, "signal_test")
        net = module.load(files.weights, DEVICE)
        result = net.forward(Tensor.from_numpy(x, DEVICE))
        ours = [np.asarray(o.to_numpy()) for o in (result if isinstance(result, tuple) else (result,))]
        expected = ReferenceEvaluator(model).run(None, {"x": x})
        assert len(ours) == len(expected)
        for a, b in zip(ours, expected, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        sources.append(files.source)
    status, report = mypy_strict(sources, tmp_path)
    assert status == 0, report
