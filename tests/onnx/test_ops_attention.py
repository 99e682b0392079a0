"""ferrum.onnx's attention family beyond the node suite: Attention (windows, external KV cache, soft cap),
LinearAttention, CausalConvWithState and FlexAttention.

Results are checked against onnx's reference evaluator (``onnx.reference``) and against NumPy written
here, for gradients on the autodiff backend, for clear errors on bad input, and through the code
``python -m ferrum.onnx`` generates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.onnx import OnnxError
from ferrum.onnx.codegen import generate
from ferrum.onnx.ops import attention, flex_attention
from onnx import helper

from tests.support.onnx_graphs import check_against_reference, ferrum_outputs, graph_model, reference_outputs
from tests.support.onnx_models import import_generated, mypy_strict

Arrays = dict[str, np.ndarray]
DEVICE = NdArray.device()
AD = Autodiff[NdArray].device()
RNG = np.random.default_rng(7)


def _model(
    nodes: list[onnx.NodeProto], inputs: Arrays, outputs: list[str], opset: int = 27
) -> onnx.ModelProto:
    return graph_model(nodes, inputs, outputs, {"": opset})


def _check(model: onnx.ModelProto, inputs: Arrays, tol: float = 1e-5) -> None:
    check_against_reference(model, inputs, tol)


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _t(array: np.ndarray, device: Any = DEVICE) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(array, device)


# --- Attention


def _attention(inputs: list[str], outputs: int = 1, **attrs: Any) -> onnx.NodeProto:
    names = ["y", "present_key", "present_value", "qk"][:outputs]
    return helper.make_node("Attention", inputs, names, **attrs)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize(("left", "right", "causal"), [(2, -1, 1), (1, 2, 0), (-1, 0, 0), (0, 0, 0)])
def test_attention_windows_with_an_external_cache_match_onnx(
    mode: int, left: int, right: int, causal: int
) -> None:
    # GQA (4 query heads on 2 KV heads), a boolean mask, valid lengths per batch and a soft cap together
    inputs = {
        "q": _rand(2, 4, 3, 8),
        "k": _rand(2, 2, 7, 8),
        "v": _rand(2, 2, 7, 5),
        "mask": RNG.random((2, 1, 3, 7)) > 0.2,
        "lengths": np.array([7, 4], np.int64),
    }
    attrs = {"left_window_size": left, "right_window_size": right, "is_causal": causal}
    node = _attention(
        ["q", "k", "v", "mask", "", "", "lengths"], 4, qk_matmul_output_mode=mode, softcap=3.0, **attrs
    )
    model = _model([node], inputs, ["y", "qk"][: 1 + (mode > 0)])
    _check(model, inputs)


def test_attention_window_with_past_and_float_mask_matches_onnx() -> None:
    inputs = {
        "q": _rand(1, 2, 3, 4),
        "k": _rand(1, 2, 3, 4),
        "v": _rand(1, 2, 3, 4),
        "mask": _rand(3, 8),
        "past_key": _rand(1, 2, 5, 4),
        "past_value": _rand(1, 2, 5, 4),
    }
    node = _attention(["q", "k", "v", "mask", "past_key", "past_value"], 4, is_causal=1, left_window_size=3)
    _check(_model([node], inputs, ["y", "present_key", "present_value", "qk"]), inputs)


def test_bidirectional_window_matches_numpy() -> None:
    # query i sees keys i - 1 .. i + 2: a banded softmax, written out here
    q, k, v = _rand(1, 1, 5, 3), _rand(1, 1, 5, 3), _rand(1, 1, 5, 2)
    scores = q[0, 0] @ k[0, 0].T / np.sqrt(3)
    i, j = np.indices((5, 5))
    scores = np.where((i - j <= 1) & (j - i <= 2), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    y = attention.attention(_t(q), _t(k), _t(v), left_window_size=1, right_window_size=2)[0]
    np.testing.assert_allclose(y.to_numpy()[0, 0], weights @ v[0, 0], rtol=1e-5, atol=1e-6)


def test_attention_rows_with_no_key_are_zero_not_nan() -> None:
    # nonpad_kv_seqlen 1 with 3 causal queries: the first two rows' frontiers are before key 0
    q, k, v = _rand(1, 1, 3, 4), _rand(1, 1, 4, 4), _rand(1, 1, 4, 4)
    lengths = _t(np.array([1], np.int64))
    y, _, _, probs = attention.attention(
        _t(q), _t(k), _t(v), nonpad_kv_seqlen=lengths, is_causal=1, qk_matmul_output_mode=3
    )
    np.testing.assert_array_equal(y.to_numpy()[0, 0, :2], 0.0)
    np.testing.assert_array_equal(probs.to_numpy()[0, 0, :2], 0.0)
    np.testing.assert_allclose(y.to_numpy()[0, 0, 2], v[0, 0, 0], rtol=1e-6)


def test_attention_windows_and_soft_cap_keep_gradients() -> None:
    q = _t(_rand(1, 2, 3, 4), AD).require_grad()
    k = _t(_rand(1, 2, 5, 4), AD).require_grad()
    v = _t(_rand(1, 2, 5, 4), AD).require_grad()
    lengths = _t(np.array([4], np.int64), AD)
    y = attention.attention(q, k, v, nonpad_kv_seqlen=lengths, is_causal=1, left_window_size=1, softcap=2.0)[
        0
    ]
    grads = y.sum().backward()
    for t in (q, k, v):
        g = t.grad(grads)
        assert g is not None and np.isfinite(g.to_numpy()).all()
    # the padded key (index 4) gets no gradient
    gk = k.grad(grads)
    assert gk is not None
    np.testing.assert_array_equal(gk.to_numpy()[0, :, 4], 0.0)


# --- LinearAttention


def _linear_inputs(rule: str, t: int, h_q: int = 4, h_kv: int = 2, past: bool = True) -> Arrays:
    d_k, d_v = 3, 5
    key = _rand(2, t, h_kv * d_k)
    key /= np.linalg.norm(key.reshape(2, t, h_kv, d_k), axis=-1).repeat(d_k, -1)  # L2-normalised per head
    inputs = {"query": _rand(2, t, h_q * d_k), "key": key, "value": _rand(2, t, h_kv * d_v)}
    if past:
        inputs["past_state"] = _rand(2, h_kv, d_k, d_v)
    if rule in ("gated", "gated_delta"):
        inputs["decay"] = -RNG.random((2, t, h_kv * d_k if rule == "gated" else h_kv)).astype(np.float32)
    if rule in ("delta", "gated_delta"):
        inputs["beta"] = RNG.random((2, t, 1 if rule == "delta" else h_kv)).astype(np.float32)
    return inputs


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("t", [1, 6])
def test_linear_attention_rules_match_onnx(rule: str, t: int) -> None:
    inputs = _linear_inputs(rule, t)
    names = [
        "query",
        "key",
        "value",
        "past_state",
        "decay" if "decay" in inputs else "",
        "beta" if "beta" in inputs else "",
    ]
    node = helper.make_node(
        "LinearAttention", names, ["out", "state"], update_rule=rule, q_num_heads=4, kv_num_heads=2
    )
    _check(_model([node], inputs, ["out", "state"]), inputs)


def test_linear_attention_matches_a_numpy_recurrence() -> None:
    # plain linear attention, one head, no past state: o_t = q_t^T (sum_{s<=t} k_s v_s^T) / sqrt(d_k)
    q, k, v = _rand(1, 4, 3), _rand(1, 4, 3), _rand(1, 4, 2)
    inputs = {"query": q, "key": k, "value": v}
    node = helper.make_node(
        "LinearAttention",
        ["query", "key", "value"],
        ["out", "state"],
        update_rule="linear",
        q_num_heads=1,
        kv_num_heads=1,
    )
    out, state = ferrum_outputs(_model([node], inputs, ["out", "state"]), inputs)
    prefix = np.cumsum(k[0][:, :, None] * v[0][:, None, :], axis=0)
    want = np.einsum("td,tdm->tm", q[0], prefix) / np.sqrt(3)
    np.testing.assert_allclose(out[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state[0, 0], prefix[-1], rtol=1e-5, atol=1e-6)


# --- CausalConvWithState


def _causal_conv_numpy(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, past: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    k = w.shape[2]
    full = np.concatenate([past, x], axis=2)
    length = x.shape[2]
    y = (
        np.stack([(full[:, :, t : t + k] * w[None, :, 0, :]).sum(-1) for t in range(length)], axis=2)
        + b[None, :, None]
    )
    return y, full[:, :, length:]


@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv_with_state_matches_numpy(activation: str) -> None:
    x, w, b, past = _rand(2, 3, 5), _rand(3, 1, 4), _rand(3), _rand(2, 3, 3)
    inputs = {"x": x, "w": w, "b": b, "past": past}
    node = helper.make_node("CausalConvWithState", list(inputs), ["y", "state"], activation=activation)
    y, state = ferrum_outputs(_model([node], inputs, ["y", "state"]), inputs)
    want_y, want_state = _causal_conv_numpy(x, w, b, past)
    if activation == "silu":
        want_y = want_y / (1.0 + np.exp(-want_y))
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(state, want_state)
    _check(_model([node], inputs, ["y", "state"]), inputs)


def test_causal_conv_decoding_step_by_step_equals_the_whole_sequence() -> None:
    x, w = _rand(1, 2, 6), _rand(2, 1, 3)
    node = helper.make_node("CausalConvWithState", ["x", "w", "", "past"], ["y", "state"])
    past = np.zeros((1, 2, 2), np.float32)
    steps = []
    for t in range(6):
        inputs = {"x": x[:, :, t : t + 1], "w": w, "past": past}
        y, past = ferrum_outputs(_model([node], inputs, ["y", "state"]), inputs)
        steps.append(y)
    want, _ = _causal_conv_numpy(x, w, np.zeros(2, np.float32), np.zeros((1, 2, 2), np.float32))
    np.testing.assert_allclose(np.concatenate(steps, axis=2), want, rtol=1e-5, atol=1e-6)


# --- FlexAttention (called directly: the runner does not load the ai.onnx.preview domain yet)


def test_flex_attention_matches_numpy_with_gqa() -> None:
    q, k, v = _rand(1, 4, 3, 6), _rand(1, 2, 5, 6), _rand(1, 2, 5, 2)
    scores = q @ np.repeat(k, 2, axis=1).swapaxes(-1, -2) * 0.5
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    y = flex_attention.flex_attention(_t(q), _t(k), _t(v), scale=0.5)
    np.testing.assert_allclose(y.to_numpy(), weights @ np.repeat(v, 2, axis=1), rtol=1e-5, atol=1e-6)


def test_flex_attention_rejects_mismatched_heads() -> None:
    with pytest.raises(ValueError, match="not a multiple"):
        flex_attention.flex_attention(_t(_rand(1, 3, 2, 4)), _t(_rand(1, 2, 2, 4)), _t(_rand(1, 2, 2, 4)))


# --- bad input: an OnnxError naming what was expected and found


@pytest.mark.parametrize(
    ("node", "inputs", "message"),
    [
        (
            helper.make_node(
                "LinearAttention",
                ["q", "k", "v"],
                ["o", "s"],
                update_rule="gated",
                q_num_heads=1,
                kv_num_heads=1,
            ),
            {"q": _rand(1, 2, 4), "k": _rand(1, 2, 4), "v": _rand(1, 2, 4)},
            "needs the decay input",
        ),
        (
            helper.make_node(
                "LinearAttention",
                ["q", "k", "v"],
                ["o", "s"],
                update_rule="linear",
                q_num_heads=3,
                kv_num_heads=2,
            ),
            {"q": _rand(1, 2, 6), "k": _rand(1, 2, 4), "v": _rand(1, 2, 4)},
            "positive multiple",
        ),
        (
            helper.make_node("CausalConvWithState", ["x", "w"], ["y", "s"]),
            {"x": _rand(1, 3, 4), "w": _rand(2, 1, 3)},
            r"weight must be \(3, 1, k\)",
        ),
        (
            helper.make_node("CausalConvWithState", ["x", "w"], ["y", "s"], activation="gelu"),
            {"x": _rand(1, 3, 4), "w": _rand(3, 1, 3)},
            "activation must be one of",
        ),
        (
            helper.make_node("Attention", ["q", "k", "v"], ["y"], left_window_size=-2),
            {"q": _rand(1, 1, 2, 4), "k": _rand(1, 1, 2, 4), "v": _rand(1, 1, 2, 4)},
            "window sizes must be -1 or non-negative",
        ),
        (
            helper.make_node("Attention", ["q", "k", "v", "", "", "", "n"], ["y"]),
            {
                "q": _rand(2, 1, 2, 4),
                "k": _rand(2, 1, 2, 4),
                "v": _rand(2, 1, 2, 4),
                "n": np.array([2], np.int64),
            },
            "nonpad_kv_seqlen must have 2 entries",
        ),
    ],
)
def test_bad_input_raises_a_clear_onnx_error(node: onnx.NodeProto, inputs: Arrays, message: str) -> None:
    with pytest.raises(OnnxError, match=message):
        ferrum_outputs(_model([node], inputs, list(node.output)), inputs)


# --- generated code


def test_generated_code_of_the_attention_family_passes_mypy_and_runs(tmp_path: Path) -> None:
    """CausalConvWithState -> LinearAttention -> Attention (window, external cache): one generated module."""
    nodes = [
        helper.make_node(
            "CausalConvWithState", ["x", "w"], ["c", "conv_state"], name="conv", activation="silu"
        ),
        helper.make_node("Transpose", ["c"], ["ct"], name="to_tokens", perm=[0, 2, 1]),
        helper.make_node(
            "LinearAttention",
            ["ct", "ct", "ct", "", "g"],
            ["la", "la_state"],
            name="recur",
            update_rule="gated",
            q_num_heads=2,
            kv_num_heads=2,
        ),
        helper.make_node(
            "Attention",
            ["la", "ct", "ct", "", "", "", "n"],
            ["y"],
            name="attend",
            is_causal=1,
            left_window_size=2,
            q_num_heads=2,
            kv_num_heads=2,
        ),
    ]
    inputs = {
        "x": _rand(2, 4, 5),
        "w": _rand(4, 1, 3),
        "g": -RNG.random((2, 5, 2)).astype(np.float32),
        "n": np.array([5, 3], np.int64),
    }
    model = _model(nodes, inputs, ["y", "conv_state", "la_state"])
    onnx.save(model, tmp_path / "attention_family.onnx")
    files = generate(tmp_path / "attention_family.onnx", tmp_path)
    status, report = mypy_strict([files.source], tmp_path)
    assert status == 0, report
    net = import_generated(files.source, "attention_family").load(files.weights, DEVICE)
    got = net.forward(*(_t(a) for a in inputs.values()))
    for g, w in zip(got, reference_outputs(model, inputs), strict=True):
        np.testing.assert_allclose(g.to_numpy(), w, rtol=1e-5, atol=1e-5)
