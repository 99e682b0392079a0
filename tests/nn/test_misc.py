"""Dropout statistics, Embedding lookups and gradients, activation layers against NumPy,
and the padding configs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import D2, D3, Int, OutOfBoundsError, ShapeError, Tensor
from ferrum.backend import NdArray
from ferrum.module import Param
from ferrum.nn import (
    Dropout,
    DropoutConfig,
    EmbeddingConfig,
    Gelu,
    HardSigmoidConfig,
    HardSwish,
    LeakyReluConfig,
    PaddingConfig1d,
    PaddingConfig2d,
    PaddingConfig3d,
    PReluConfig,
    Relu,
    Sigmoid,
    SoftplusConfig,
    SwiGluConfig,
    Tanh,
)

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr

RNG = np.random.default_rng(99)


def floats(*shape: int, scale: float = 1.0) -> Any:
    return (RNG.normal(size=shape) * scale).astype(np.float32)


# ------------------------------------------------------------------ Dropout


@pytest.mark.parametrize("prob", [0.1, 0.5, 0.8])
def test_dropout_zeroes_about_prob_and_rescales_the_rest(prob: float) -> None:
    AD.backend.seed(5)
    n = 20_000
    out = arr(DropoutConfig(prob).init().forward(Tensor.full((n,), 2.0, AD)))
    zeros = (out == 0.0).mean()
    # Binomial standard deviation is at most 0.0036 here; 5 sigma.
    assert abs(zeros - prob) < 0.02
    np.testing.assert_allclose(out[out != 0.0], 2.0 / (1.0 - prob), rtol=1e-6)
    assert abs(out.mean() - 2.0) < 0.1


def test_dropout_is_identity_off_autodiff_and_at_zero() -> None:
    x = Tensor.from_floats(floats(4, 5), DEVICE)
    assert DropoutConfig(0.9).init().forward(x) is x
    ad = Tensor.from_floats(floats(4, 5), AD)
    assert Dropout(0.0).forward(ad) is ad
    assert arr(Dropout(1.0).forward(ad)).sum() == 0.0


def test_dropout_gradient_follows_the_mask() -> None:
    x = Tensor.ones((1000,), AD).require_grad()
    out = Dropout(0.25).forward(x)
    grad = x.grad(out.sum().backward())
    assert grad is not None
    np.testing.assert_allclose(arr(grad), arr(out), rtol=1e-6)


def test_dropout_is_reproducible_with_a_seed() -> None:
    x = Tensor.ones((64,), AD)
    AD.backend.seed(17)
    a = arr(Dropout(0.5).forward(x))
    AD.backend.seed(17)
    b = arr(Dropout(0.5).forward(x))
    np.testing.assert_array_equal(a, b)


def test_dropout_rejects_bad_probabilities() -> None:
    message = r"DropoutConfig\.prob must be a probability in \[0, 1\], found 1\.5"
    with pytest.raises(ValueError, match=message):
        DropoutConfig(1.5)
    with pytest.raises(ValueError, match=r"Dropout\.prob"):
        Dropout(-0.1)
    assert repr(Dropout(0.3)) == "Dropout {prob: 0.3}"


# ------------------------------------------------------------------ Embedding


def test_embedding_looks_up_rows() -> None:
    layer = EmbeddingConfig(6, 3).init(DEVICE)
    ids = np.array([[0, 5, 2], [2, 2, 1]])
    tokens: Tensor[NdArray, D2, Int] = Tensor.from_ints(ids.tolist(), DEVICE)
    out: Tensor[NdArray, D3] = layer.forward(tokens)
    assert out.dims() == (2, 3, 3)
    np.testing.assert_array_equal(arr(out), arr(layer.weight.val())[ids])


def test_embedding_gradient_accumulates_per_row() -> None:
    layer = EmbeddingConfig(4, 2).init(AD)
    ids = np.array([[1, 1, 3]])
    c = floats(1, 3, 2)
    out = layer.forward(Tensor.from_ints(ids.tolist(), AD))
    grad = layer.weight.val().grad((out * Tensor.from_floats(c, AD)).sum().backward())
    assert grad is not None
    expected = np.zeros((4, 2))
    np.add.at(expected, ids.ravel(), c.reshape(-1, 2))
    np.testing.assert_allclose(arr(grad), expected, rtol=1e-6, atol=1e-7)


def test_embedding_default_init_is_standard_normal() -> None:
    NdArray.seed(2)
    w = arr(EmbeddingConfig(200, 100).init(DEVICE).weight.val())
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1.0) < 0.02


def test_embedding_errors_name_the_problem() -> None:
    layer = EmbeddingConfig(3, 2).init(DEVICE)
    with pytest.raises(OutOfBoundsError, match="3"):
        layer.forward(Tensor.from_ints([[0, 3]], DEVICE))
    with pytest.raises(ShapeError, match=r"Embedding\.forward: expected token ids of shape \[batch, seq\]"):
        layer.forward(Tensor.from_ints([[[0]]], DEVICE))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"EmbeddingConfig\.d_model must be a positive int, found 0"):
        EmbeddingConfig(3, 0)
    assert repr(layer) == "Embedding {n_embedding: 3, d_model: 2, params: 6}"


# ------------------------------------------------------------------ activation layers


def test_stateless_activations_match_numpy() -> None:
    x = floats(3, 4, scale=3.0).astype(np.float64)
    t = Tensor.from_floats(x.astype(np.float32), DEVICE)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(arr(Relu().forward(t)), np.maximum(x, 0), rtol=1e-6)
    gelu = 0.5 * x * (1 + erf(x / math.sqrt(2)))
    np.testing.assert_allclose(arr(Gelu().forward(t)), gelu, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arr(Sigmoid().forward(t)), 1 / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(Tanh().forward(t)), np.tanh(x), rtol=1e-5, atol=1e-6)
    hard_swish = x * np.clip(x + 3, 0, 6) / 6
    np.testing.assert_allclose(arr(HardSwish().forward(t)), hard_swish, rtol=1e-5, atol=1e-6)


def test_configured_activations_match_numpy() -> None:
    x = floats(5, 3, scale=4.0).astype(np.float64)
    t = Tensor.from_floats(x.astype(np.float32), DEVICE)
    leaky = LeakyReluConfig().with_negative_slope(0.2).init()
    np.testing.assert_allclose(arr(leaky.forward(t)), np.where(x >= 0, x, 0.2 * x), rtol=1e-5)
    hard = HardSigmoidConfig(alpha=0.3, beta=0.4).init()
    np.testing.assert_allclose(arr(hard.forward(t)), np.clip(0.3 * x + 0.4, 0, 1), rtol=1e-5, atol=1e-6)
    soft = SoftplusConfig(beta=2.0).init()
    np.testing.assert_allclose(arr(soft.forward(t)), np.logaddexp(0, 2 * x) / 2, rtol=1e-4, atol=1e-5)
    assert LeakyReluConfig().negative_slope == 0.01
    assert (HardSigmoidConfig().alpha, HardSigmoidConfig().beta, SoftplusConfig().beta) == (0.2, 0.5, 1.0)


def test_prelu_learns_one_slope_per_channel() -> None:
    layer = PReluConfig(num_parameters=3, alpha=0.1).init(AD)
    assert arr(layer.alpha.val()).tolist() == pytest.approx([0.1, 0.1, 0.1])
    x = floats(2, 3, 4)
    out = layer.forward(Tensor.from_floats(x, AD))
    np.testing.assert_allclose(arr(out), np.where(x >= 0, x, 0.1 * x), rtol=1e-5, atol=1e-7)
    grad = layer.alpha.val().grad(out.sum().backward())
    assert grad is not None
    np.testing.assert_allclose(arr(grad), np.where(x < 0, x, 0).sum(axis=(0, 2)), rtol=1e-4, atol=1e-5)
    assert PReluConfig().num_parameters == 1 and PReluConfig().alpha == 0.25


def test_swiglu_matches_numpy() -> None:
    layer = SwiGluConfig(4, 3).init(DEVICE)
    assert layer.linear_inner.bias is None and layer.linear_outer.bias is None
    x = floats(2, 5, 4).astype(np.float64)
    out = layer.forward(Tensor.from_floats(x.astype(np.float32), DEVICE))
    inner = x @ arr(layer.linear_inner.weight.val())
    outer = x @ arr(layer.linear_outer.weight.val())
    expected = inner / (1 + np.exp(-inner)) * outer
    np.testing.assert_allclose(arr(out), expected, rtol=1e-4, atol=1e-5)
    # Burn 0.20.1's default: Kaiming uniform with gain 1/sqrt(3), so |w| <= sqrt(3) / sqrt(3 * d_input).
    bound = math.sqrt(3.0) / math.sqrt(3.0 * 4)
    assert np.abs(arr(layer.linear_inner.weight.val())).max() <= bound + 1e-7


def test_parametric_activation_records_round_trip() -> None:
    layer = PReluConfig(num_parameters=2).init(DEVICE)
    layer = layer.map(type("Double", (), {"map_float": lambda self, id, t: t * 2.0})())
    loaded = PReluConfig(num_parameters=2).init(DEVICE).load_record(layer.into_record())
    assert arr(loaded.alpha.val()).tolist() == pytest.approx([0.5, 0.5])
    assert isinstance(loaded.alpha, Param)


# ------------------------------------------------------------------ padding


def test_padding_2d_variants_and_same_rule() -> None:
    assert PaddingConfig2d.Valid.calculate_padding_2d(28, 28, (3, 3), (1, 1)) == (0, 0)
    assert PaddingConfig2d.Same.calculate_padding_2d(28, 30, (3, 5), (1, 1)) == (1, 2)
    assert PaddingConfig2d.Explicit(2, 1).calculate_padding_2d(8, 8, (3, 3), (1, 1)) == (2, 1)
    # Burn's Same rule: ceil(((size - 1) * stride + kernel - size) / 2).
    assert PaddingConfig2d.Same.calculate_padding_2d(10, 10, (3, 3), (2, 2)) == (6, 6)
    assert repr(PaddingConfig2d.Same) == "PaddingConfig2d.Same"
    assert repr(PaddingConfig2d.Explicit(1, 2)) == "PaddingConfig2d.Explicit(1, 2)"
    assert PaddingConfig2d.Explicit(1, 1) == PaddingConfig2d.Explicit(1, 1) != PaddingConfig2d.Same


def test_padding_1d_variants() -> None:
    assert PaddingConfig1d.Valid.calculate_padding_1d(10, 3, 1) == 0
    assert PaddingConfig1d.Same.calculate_padding_1d(10, 5, 1) == 2
    assert PaddingConfig1d.Explicit(4).calculate_padding_1d(10, 5, 1) == 4
    assert repr(PaddingConfig1d.Explicit(4)) == "PaddingConfig1d.Explicit(4)"


def test_padding_configs_save_and_load(tmp_path: Path) -> None:
    for padding in (PaddingConfig2d.Same, PaddingConfig2d.Valid, PaddingConfig2d.Explicit(3, 1)):
        padding.save(tmp_path / "p2.json")
        assert PaddingConfig2d.load(tmp_path / "p2.json") == padding
    PaddingConfig1d.Explicit(2).save(tmp_path / "p1.json")
    assert PaddingConfig1d.load(tmp_path / "p1.json") == PaddingConfig1d.Explicit(2)


def test_padding_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match=r"padding must be ints >= 0, found -1"):
        PaddingConfig2d.Explicit(-1, 0)
    with pytest.raises(ValueError, match=r"PaddingConfig1d\.Same takes no padding amount"):
        PaddingConfig1d("Same", 3)
    with pytest.raises(ValueError, match=r"kind: expected Same, Valid or Explicit, found 'Full'"):
        PaddingConfig2d("Full")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"PaddingConfig3d\.padding: expected \(depth, height, width\)"):
        PaddingConfig3d("Explicit", (1, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"PaddingConfig2d\.Valid takes no padding amount, found \(0, 1\)"):
        PaddingConfig2d("Valid", (0, 1))
    with pytest.raises(ValueError, match=r"PaddingConfig1d: padding must be ints >= 0, found \(1,\)"):
        PaddingConfig1d("Explicit", (1,))  # type: ignore[arg-type]
    assert repr(PaddingConfig3d.Explicit(1, 2, 3)) == "PaddingConfig3d.Explicit(1, 2, 3)"
    assert repr(PaddingConfig3d.Valid) == "PaddingConfig3d.Valid"
