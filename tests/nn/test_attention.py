"""MultiHeadAttention, CrossAttention, the masks, the transformer encoder and decoder and the
positional encodings against NumPy written here from Burn's equations (on the layers' own
weights), the autoregressive caches against full recomputation, Burn's config defaults,
record layout and input errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import ShapeError, Tensor
from ferrum.backend import NdArray
from ferrum.nn import Linear, PositionalEncodingConfig, RotaryEncodingConfig, generate_sinusoids
from ferrum.nn.attention import (
    MhaInput,
    MultiHeadAttention,
    MultiHeadAttentionConfig,
    SeqLengthOption,
    generate_autoregressive_mask,
    generate_padding_mask,
)
from ferrum.nn.transformer import (
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)

Array = npt.NDArray[Any]
DEVICE = NdArray.device()


def t32(a: Array) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(np.asarray(a, dtype=np.float32), DEVICE)


def lin(layer: Linear[Any], x: Array) -> Array:
    w = layer.weight.val().to_numpy().astype(np.float64)
    return x @ w + (0.0 if layer.bias is None else layer.bias.val().to_numpy().astype(np.float64))


def np_mha(
    mha: MultiHeadAttention[Any],
    q: Array,
    k: Array,
    v: Array,
    pad: Array | None = None,
    attn: Array | None = None,
    quiet: bool = False,
) -> tuple[Array, Array]:
    """Burn's multi-head attention: (weights [b, h, s_q, s_k], context [b, s_q, d_model])."""
    b, s_q, d = q.shape
    h = mha.n_heads
    dk = d // h

    def heads(x: Array, layer: Linear[Any]) -> Array:
        return lin(layer, x).reshape(x.shape[0], x.shape[1], h, dk).transpose(0, 2, 1, 3)

    scores = heads(q, mha.query) @ heads(k, mha.key).transpose(0, 1, 3, 2) / math.sqrt(dk)
    if pad is not None:
        scores = np.where(pad[:, None, None, :], -1.0e4, scores)
    if attn is not None:
        scores = np.where(attn[:, None, :, :], -1.0e4, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    if quiet:
        e = np.exp(scores) / (1.0 + np.exp(scores).sum(-1, keepdims=True))
        weights = e
    else:
        weights = e / e.sum(-1, keepdims=True)
    context = (weights @ heads(v, mha.value)).transpose(0, 2, 1, 3).reshape(b, s_q, d)
    return weights, lin(mha.output, context)


def test_mha_config_defaults_match_burn() -> None:
    c = MultiHeadAttentionConfig(8, 2)
    assert (c.dropout, c.min_float, c.quiet_softmax) == (0.1, -1.0e4, False)
    mha = c.init(DEVICE)
    assert mha.query.weight.shape() == (8, 8)
    assert list(mha.into_record())[:4] == ["query", "key", "value", "output"]
    with pytest.raises(ValueError, match="n_heads"):
        MultiHeadAttentionConfig(6, 4)


@pytest.mark.parametrize("quiet", [False, True])
def test_mha_matches_numpy_with_masks(quiet: bool) -> None:
    rng = np.random.default_rng(0)
    mha = MultiHeadAttentionConfig(8, 2, quiet_softmax=quiet).init(DEVICE)
    q, k, v = rng.uniform(-1, 1, (2, 3, 8)), rng.uniform(-1, 1, (2, 5, 8)), rng.uniform(-1, 1, (2, 5, 8))
    pad = np.zeros((2, 5), dtype=bool)
    pad[1, 3:] = True
    attn = rng.uniform(size=(2, 3, 5)) < 0.2
    inp = MhaInput(t32(q), t32(k), t32(v)).mask_pad(Tensor.from_numpy(pad, DEVICE))
    inp = inp.mask_attn(Tensor.from_numpy(attn, DEVICE))
    out = mha.forward(inp)
    weights, context = np_mha(mha, q, k, v, pad, attn, quiet)
    np.testing.assert_allclose(out.weights.to_numpy(), weights, atol=2e-6)
    np.testing.assert_allclose(out.context.to_numpy(), context, atol=2e-6)


def test_mha_errors_name_the_problem() -> None:
    mha = MultiHeadAttentionConfig(8, 2).init(DEVICE)
    with pytest.raises(ShapeError):
        mha.forward(MhaInput.self_attn(t32(np.zeros((2, 3, 6)))))
    with pytest.raises(ShapeError):
        mha.forward(
            MhaInput.self_attn(t32(np.zeros((2, 3, 8)))).mask_pad(
                Tensor.from_numpy(np.zeros((2, 4), bool), DEVICE)
            )
        )


def test_masks_match_burn() -> None:
    mask = generate_autoregressive_mask(2, 3, DEVICE).to_numpy()
    np.testing.assert_array_equal(mask, np.broadcast_to(np.triu(np.ones((3, 3), bool), 1), (2, 3, 3)))
    out = generate_padding_mask(0, [[1, 2, 3, 4], [5]], SeqLengthOption.Max(3), DEVICE)
    assert out.tensor.to_data().to_list() == [[1, 2, 3], [5, 0, 0]]
    assert out.mask.to_data().to_list() == [[False, False, False], [False, True, True]]
    fixed = generate_padding_mask(9, [[1]], SeqLengthOption.Fixed(3), DEVICE)
    assert fixed.tensor.to_data().to_list() == [[1, 9, 9]]
    assert generate_padding_mask(0, [[1, 2], [3]], None, DEVICE).tensor.dims() == (2, 2)


def np_encoder_layer(layer: Any, x: Array, norm_first: bool) -> Array:
    def norm(n: Any, a: Array) -> Array:
        mean, var = a.mean(-1, keepdims=True), a.var(-1, keepdims=True)
        g, b = n.gamma.val().to_numpy(), n.beta.val().to_numpy() if n.beta is not None else 0.0
        out: Array = (a - mean) / np.sqrt(var + n.epsilon) * g + b
        return out

    def pwff(a: Array) -> Array:
        hidden = lin(layer.pwff.linear_inner, a)
        gelu = 0.5 * hidden * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
        return lin(layer.pwff.linear_outer, gelu)

    residual = norm(layer.norm_2, x) if norm_first else x
    x = x + np_mha(layer.mha, residual, residual, residual)[1]
    if norm_first:
        residual = norm(layer.norm_1, x)
    else:
        x = norm(layer.norm_1, x)
        residual = x
    x = x + pwff(residual)
    return x if norm_first else norm(layer.norm_2, x)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_matches_numpy(norm_first: bool) -> None:
    config = TransformerEncoderConfig(8, 16, 2, 2, norm_first=norm_first)
    assert (
        TransformerEncoderConfig(8, 16, 2, 2).dropout,
        TransformerEncoderConfig(8, 16, 2, 2).norm_first,
    ) == (
        0.1,
        False,
    )
    encoder = config.init(DEVICE)
    x = np.random.default_rng(1).uniform(-1, 1, (2, 4, 8))
    ref = x
    for layer in encoder.layers:
        ref = np_encoder_layer(layer, ref, norm_first)
    got = encoder.forward(TransformerEncoderInput(t32(x))).to_numpy()
    np.testing.assert_allclose(got, ref, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_autoregressive_cache_equals_the_masked_forward(norm_first: bool) -> None:
    encoder = TransformerEncoderConfig(8, 16, 2, 2, norm_first=norm_first).init(DEVICE)
    x = t32(np.random.default_rng(2).uniform(-1, 1, (2, 5, 8)))
    mask = generate_autoregressive_mask(2, 5, DEVICE)
    full = encoder.forward(TransformerEncoderInput(x).mask_attn(mask)).to_numpy()
    cache = encoder.new_autoregressive_cache()
    for i in range(1, 6):
        step_mask = generate_autoregressive_mask(2, i, DEVICE)
        inp = TransformerEncoderInput(x.narrow(1, 0, i)).mask_attn(step_mask)
        step = encoder.forward_autoregressive_inference(inp, cache).to_numpy()
        np.testing.assert_allclose(step[:, -1], full[:, i - 1], atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_autoregressive_cache_equals_the_masked_forward(norm_first: bool) -> None:
    decoder = TransformerDecoderConfig(8, 16, 2, 2, norm_first=norm_first).init(DEVICE)
    rng = np.random.default_rng(3)
    target, memory = t32(rng.uniform(-1, 1, (2, 4, 8))), t32(rng.uniform(-1, 1, (2, 6, 8)))
    mask = generate_autoregressive_mask(2, 4, DEVICE)
    full = decoder.forward(TransformerDecoderInput(target, memory).target_mask_attn(mask)).to_numpy()
    cache = decoder.new_autoregressive_cache()
    for i in range(1, 5):
        inp = TransformerDecoderInput(target.narrow(1, 0, i), memory).target_mask_attn(
            generate_autoregressive_mask(2, i, DEVICE)
        )
        step = decoder.forward_autoregressive_inference(inp, cache).to_numpy()
        np.testing.assert_allclose(step[:, -1], full[:, i - 1], atol=1e-5)


def test_positional_encoding_matches_the_formula() -> None:
    config = PositionalEncodingConfig(6)
    assert (config.max_sequence_size, config.max_timescale) == (5000, 10000)
    table = generate_sinusoids(7, 6, 10000, DEVICE).to_numpy()
    pos, i = np.arange(7)[:, None], np.arange(0, 6, 2)[None, :]
    angle = pos / 10000 ** (i / 6)
    np.testing.assert_allclose(table[:, 0::2], np.sin(angle), atol=1e-6)
    np.testing.assert_allclose(table[:, 1::2], np.cos(angle), atol=1e-6)
    layer = config.with_max_sequence_size(7).init(DEVICE)
    x = np.random.default_rng(4).uniform(-1, 1, (2, 5, 6))
    np.testing.assert_allclose(layer.forward(t32(x)).to_numpy(), x + table[:5], atol=1e-6)
    with pytest.raises(ShapeError):
        layer.forward(t32(np.zeros((1, 8, 6))))


def test_rotary_encoding_rotates_pairs() -> None:
    config = RotaryEncodingConfig(16, 4)
    assert config.theta == 10000.0
    rope = config.init(DEVICE)
    x = np.random.default_rng(5).uniform(-1, 1, (1, 2, 3, 4))
    got = rope.apply(t32(x), 2).to_numpy()
    freqs = 1.0 / 10000 ** (np.arange(0, 4, 2) / 4)
    pos = np.arange(2, 5)[:, None]
    cos, sin = np.cos(pos * freqs), np.sin(pos * freqs)
    even, odd = x[..., 0::2], x[..., 1::2]
    ref = np.empty_like(x)
    ref[..., 0::2] = even * cos - odd * sin
    ref[..., 1::2] = even * sin + odd * cos
    np.testing.assert_allclose(got, ref, atol=1e-5)
    np.testing.assert_allclose(rope.forward(t32(x)).to_numpy(), rope.apply(t32(x), 0).to_numpy())
    with pytest.raises(ShapeError, match="outside the 16"):
        rope.apply(t32(x), 15)
