"""ferrum.jit.trace: ferrum's own modules run as compiled plans give their eager results.

Where the plan runs the kernels the eager call runs (convolutions, element-wise
ops, views), results are compared bit for bit; where it fuses a chain
(Linear, LayerNorm, attention) within 1e-5. GPT-2 and Llama are also checked
against transformers' logits stored with examples/llm_generation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import D3, BackendError, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.jit import Traced, TraceError, trace
from ferrum.nn import Conv2dConfig, LayerNormConfig, LinearConfig, PaddingConfig2d
from ferrum.nn.attention import MhaInput, MultiHeadAttentionConfig
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput

from examples.llm_generation.weights import load_gpt2, load_llama

DEVICE = NdArray.device()
LLM = Path(__file__).resolve().parents[2] / "examples" / "llm_generation"


def rand(*shape: int, seed: int = 0) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), DEVICE)


def plan_ops(traced: Traced[Any, Any], *inputs: Tensor[Any, Any, Any]) -> list[str]:
    """The instructions of the traced function's last plan, by op name."""
    _, rows = traced.plans()[-1].profile(list(inputs))
    return [op for op, _, _ in rows]


def test_linear_matches_eager_and_fuses() -> None:
    layer = LinearConfig(8, 5).init(DEVICE)
    x = rand(2, 3, 8)
    fast = trace(layer, x)
    np.testing.assert_allclose(fast(x).to_numpy(), layer(x).to_numpy(), rtol=0, atol=1e-5)
    assert plan_ops(fast, x) == ["linear"]


def test_conv2d_is_bit_exact() -> None:
    conv = Conv2dConfig((3, 4), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 1)).init(DEVICE)
    x = rand(2, 3, 9, 7)
    fast = trace(conv, x)
    np.testing.assert_array_equal(fast(x).to_numpy(), conv(x).to_numpy())
    assert plan_ops(fast, x) == ["conv2d"]


def test_elementwise_chain_is_bit_exact_and_folds_constants() -> None:
    """Same kernels as the eager calls; the constant made from data inside the function is folded."""

    def fn(x: Tensor[Any, Any, Any], y: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        shift = Tensor.from_numpy(np.arange(4, dtype=np.float32), DEVICE).reshape((1, 4))
        return ((x * 2.0 - y) / (y.square() + 1.0)).exp().swap_dims(0, 1) + (1.0 - shift.transpose())

    x, y = rand(4, 4, seed=1), rand(4, 4, seed=2)
    fast = trace(fn, x, y)
    np.testing.assert_array_equal(fast(x, y).to_numpy(), fn(x, y).to_numpy())
    x2 = rand(4, 4, seed=3)
    np.testing.assert_array_equal(fast(x2, y).to_numpy(), fn(x2, y).to_numpy())
    # the shift's reshape, transpose and reflected subtraction ran once, at the trace
    assert "t_reshape" not in plan_ops(fast, x, y)


def test_layer_norm_fuses_within_1e5() -> None:
    norm = LayerNormConfig(16).init(DEVICE)
    x = rand(2, 5, 16)
    fast = trace(norm, x)
    np.testing.assert_allclose(fast(x).to_numpy(), norm(x).to_numpy(), rtol=0, atol=1e-5)
    assert plan_ops(fast, x) == ["layer_norm"]


@pytest.mark.parametrize("masks", ["pad", "attn", "both"])
def test_mha_with_masks_gives_weights_and_context(masks: str) -> None:
    mha = MultiHeadAttentionConfig(16, 4).with_dropout(0.0).init(DEVICE).valid()
    x = rand(2, 6, 16)
    rng = np.random.default_rng(4)
    pad = Tensor.from_numpy(np.array([[False] * 6, [False] * 4 + [True] * 2]), DEVICE)

    def inputs(attn: Tensor[Any, Any, Any]) -> MhaInput[NdArray]:
        made = MhaInput.self_attn(x)
        made = made.mask_pad(pad) if masks in ("pad", "both") else made
        return made.mask_attn(attn) if masks in ("attn", "both") else made

    first = inputs(Tensor.from_numpy(rng.random((2, 6, 6)) < 0.3, DEVICE))
    fast = trace(mha, first)
    got, want = fast(first), mha(first)
    np.testing.assert_allclose(got.context.to_numpy(), want.context.to_numpy(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(got.weights.to_numpy(), want.weights.to_numpy(), rtol=0, atol=1e-6)
    # other mask values, same shapes: the same plan, with the new masks read as inputs
    other = inputs(Tensor.from_numpy(rng.random((2, 6, 6)) < 0.5, DEVICE))
    np.testing.assert_allclose(fast(other).context.to_numpy(), mha(other).context.to_numpy(), atol=1e-5)
    assert len(fast.plans()) == 1


def test_comparisons_and_bool_logic_match_numpy() -> None:
    def fn(x: Tensor[Any, Any, Any], y: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        above = x.greater(y) ^ x.lower_equal_elem(0.5)
        return (above & ~x.equal(y)) | y.lower_elem(0.0)

    y = rand(1, 4, seed=6)
    xn, yn = rand(3, 4, seed=5).to_numpy().copy(), y.to_numpy()
    xn[0, :2] = yn[0, :2]  # a few equal pairs
    x = Tensor.from_numpy(xn, DEVICE)
    want = (((xn > yn) ^ (xn <= 0.5)) & ~(xn == yn)) | (yn < 0.0)
    fast = trace(fn, x, y)
    np.testing.assert_array_equal(fast(x, y).to_numpy(), want)
    assert {"t_compare", "t_compare_scalar", "t_logical", "t_bool_not"} <= set(plan_ops(fast, x, y))


def test_scans_and_reductions_along_a_dim_match_numpy() -> None:
    def fn(x: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any], ...]:
        return x.cumsum(1), x.max_dim(0), x.var(1), x.argmax(1), (x * 2.0).cummax(0)

    x = rand(3, 5, seed=7)
    xn = x.to_numpy().astype(np.float64)
    fast = trace(fn, x)
    got = [t.to_numpy() for t in fast(x)]
    np.testing.assert_allclose(got[0], np.cumsum(xn, 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got[1], xn.max(0, keepdims=True).astype(np.float32))
    np.testing.assert_allclose(got[2], xn.var(1, ddof=1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(got[3], xn.argmax(1)[:, None])
    np.testing.assert_array_equal(got[4], np.maximum.accumulate(2 * xn, 0).astype(np.float32))
    assert {"t_cumsum", "t_max_dim", "t_var", "t_argmax", "t_cummax"} <= set(plan_ops(fast, x))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder(norm_first: bool) -> None:
    config = TransformerEncoderConfig(32, 64, 4, 2, norm_first=norm_first).with_dropout(0.0)
    encoder = config.init(DEVICE).valid()
    x = rand(2, 16, 32)
    pad = Tensor.from_numpy(np.array([[False] * 16, [False] * 11 + [True] * 5]), DEVICE)
    for inputs in (TransformerEncoderInput(x), TransformerEncoderInput(x).mask_pad(pad)):
        fast = trace(encoder, inputs)
        np.testing.assert_allclose(fast(inputs).to_numpy(), encoder(inputs).to_numpy(), rtol=0, atol=1e-5)
    ops = plan_ops(trace(encoder, TransformerEncoderInput(x)), x)
    assert ops.count("attention") == 2 and ops.count("layer_norm") == 4 and "t_matmul" not in ops


def test_new_shape_traces_a_new_plan() -> None:
    encoder = TransformerEncoderConfig(32, 64, 2, 1).with_dropout(0.0).init(DEVICE).valid()

    def run(x: Tensor[NdArray, D3]) -> Tensor[NdArray, D3]:
        return encoder(TransformerEncoderInput(x))

    fast = trace(run)
    for seq in (16, 8, 16):
        x = rand(2, seq, 32, seed=seq)
        want = encoder(TransformerEncoderInput(x)).to_numpy()
        np.testing.assert_allclose(fast(x).to_numpy(), want, atol=1e-5)
    assert len(fast.plans()) == 2


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_llm_full_forward_matches_transformers(name: str) -> None:
    loader = load_gpt2 if name == "gpt2" else load_llama
    model = loader(LLM / f"{name}.config.json", LLM / f"{name}.safetensors", DEVICE)
    expected = np.load(LLM / f"{name}.expected.npz")
    ids = Tensor.from_numpy(expected["prompt"], DEVICE)
    fast = trace(model.forward, ids)
    got = fast(ids).to_numpy()
    np.testing.assert_allclose(got, model.forward(ids).to_numpy(), rtol=0, atol=1e-5)
    np.testing.assert_allclose(got, expected["logits"], rtol=0, atol=1e-4)
    # the full-sequence logits are of every position but the last continuation token
    joined = np.concatenate([expected["prompt"], expected["continuation"]], axis=1)[:, :-1]
    full = Tensor.from_numpy(joined, DEVICE)
    np.testing.assert_allclose(fast(full).to_numpy(), expected["full_logits"], rtol=0, atol=1e-4)


def test_autodiff_device_is_refused() -> None:
    ad = Autodiff[NdArray].device()
    layer = LinearConfig(4, 2).init(ad)
    with pytest.raises(BackendError, match="autodiff"):
        trace(layer, Tensor.ones((3, 4), ad))


def test_autodiff_parameters_are_refused() -> None:
    """Inputs on the plain device, but the module (not ``valid()``) holds tracked parameters."""
    layer = LinearConfig(4, 2).init(Autodiff[NdArray].device())
    with pytest.raises(BackendError, match="autodiff"):
        trace(lambda x: layer(x.to_device(Autodiff[NdArray].device())), Tensor.ones((3, 4), DEVICE))


def test_method_without_instruction_is_named() -> None:
    def fn(x: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return x.sort(1) * 2.0

    with pytest.raises(TraceError, match=r"Tensor\.sort"):
        trace(fn, rand(2, 3))


def test_untraced_operator_is_reported() -> None:
    def fn(x: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return (x << 1) * 2

    ids = Tensor.from_numpy(np.arange(6, dtype=np.int64).reshape(2, 3), DEVICE)
    with pytest.raises(TraceError, match=r"a Python operator \(such as a bitwise shift\)"):
        trace(fn, ids)


def test_result_without_tensor_and_failed_calls_leave_no_trace_running() -> None:
    with pytest.raises(TraceError, match="no tensor"):
        trace(lambda x: x.dims(), rand(2, 3))

    def boom(x: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        raise RuntimeError("inside")

    with pytest.raises(RuntimeError, match="inside"):
        trace(boom, rand(2, 3))
    # the recorder is off again: a plain call works and a new trace starts
    fast = trace(lambda x: x + 1.0, rand(2, 3))
    np.testing.assert_array_equal(fast(rand(2, 3)).to_numpy(), (rand(2, 3) + 1.0).to_numpy())


def test_value_dependent_branch_is_frozen() -> None:
    """As torch.jit.trace: the branch the example took is the plan's, whatever later values are."""

    def fn(x: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return x * 2.0 if float(x.sum().item()) > 0 else x * 3.0

    fast = trace(fn, Tensor.ones((2,), DEVICE))
    assert fast(-Tensor.ones((2,), DEVICE)).to_numpy().tolist() == [-2.0, -2.0]
