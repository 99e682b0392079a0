"""Losses against NumPy references: values, gradients, options (padding, weights, smoothing), errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, KindError, OutOfBoundsError, ShapeError, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.nn.loss import (
    BinaryCrossEntropyLossConfig,
    CrossEntropyLossConfig,
    HuberLossConfig,
    MseLoss,
    Reduction,
    cross_entropy_with_logits,
)

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr

Array = npt.NDArray[Any]


def scalar(t: Tensor[Any, Any, Any]) -> float:
    assert t.dims() == (1,)
    return float(t.into_scalar())


def log_softmax(x: Array) -> Array:
    shifted = x - x.max(axis=1, keepdims=True)
    out: Array = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return out


def sample(batch: int = 6, classes: int = 4, seed: int = 0) -> tuple[Array, Array]:
    rng = np.random.default_rng(seed)
    return rng.normal(scale=2.0, size=(batch, classes)), rng.integers(0, classes, size=batch)


def ints(values: Array, device: Any = DEVICE) -> Any:
    return Tensor.from_data([int(v) for v in values], device)


# --------------------------------------------------------------------------- cross entropy


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
def test_cross_entropy_matches_numpy(dtype: DType) -> None:
    x, t = sample()
    got = CrossEntropyLossConfig().init(DEVICE).forward(Tensor.from_numpy(x, DEVICE, dtype=dtype), ints(t))
    expected = -log_softmax(x)[np.arange(len(t)), t].mean()
    assert scalar(got) == pytest.approx(expected, rel=1e-5 if dtype == DType.F32 else 1e-12)


def test_cross_entropy_gradient_is_softmax_minus_one_hot() -> None:
    x, t = sample()
    logits = Tensor.from_numpy(x, AD, dtype=DType.F64).require_grad()
    loss = CrossEntropyLossConfig().init(AD).forward(logits, ints(t, AD))
    grad = logits.grad(loss.backward())
    assert grad is not None
    expected = (np.exp(log_softmax(x)) - np.eye(x.shape[1])[t]) / len(t)
    np.testing.assert_allclose(arr(grad), expected, atol=1e-12)


def np_cross_entropy_with_logits(x: Array, p: Array) -> float:
    """Burn's formula in NumPy: -mean over samples of sum over the last dim of p * log_softmax(x)."""
    shifted = x - x.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return float(-(p * log_p).sum(axis=-1).mean())


@pytest.mark.parametrize("shape", [(6, 4), (3, 5, 7), (9,)])
def test_cross_entropy_with_logits_matches_numpy(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape))
    x = rng.normal(scale=3.0, size=shape)
    p = rng.random(shape)
    p /= p.sum(axis=-1, keepdims=True)
    for dtype, rel in ((DType.F64, 1e-12), (DType.F32, 1e-5)):
        got = cross_entropy_with_logits(
            Tensor.from_numpy(x, DEVICE, dtype=dtype), Tensor.from_numpy(p, DEVICE, dtype=dtype)
        )
        assert scalar(got) == pytest.approx(np_cross_entropy_with_logits(x, p), rel=rel)


def test_cross_entropy_with_logits_of_one_hot_targets_is_cross_entropy() -> None:
    x, t = sample(seed=4)
    one_hot = np.eye(x.shape[1])[t]
    soft = cross_entropy_with_logits(
        Tensor.from_numpy(x, DEVICE, dtype=DType.F64), Tensor.from_numpy(one_hot, DEVICE, dtype=DType.F64)
    )
    hard = (
        CrossEntropyLossConfig().init(DEVICE).forward(Tensor.from_numpy(x, DEVICE, dtype=DType.F64), ints(t))
    )
    assert scalar(soft) == pytest.approx(scalar(hard), rel=1e-12)


def test_cross_entropy_with_logits_gradient_and_errors() -> None:
    rng = np.random.default_rng(7)
    x, p = rng.normal(size=(5, 3)), rng.dirichlet(np.ones(3), size=5)
    logits = Tensor.from_numpy(x, AD, dtype=DType.F64).require_grad()
    loss = cross_entropy_with_logits(logits, Tensor.from_numpy(p, AD, dtype=DType.F64))
    grad = logits.grad(loss.backward())
    assert grad is not None
    # d/dx of -sum(p * log_softmax(x)) / n is (softmax(x) * sum(p) - p) / n.
    expected = (np.exp(log_softmax(x)) * p.sum(axis=1, keepdims=True) - p) / 5
    np.testing.assert_allclose(arr(grad), expected, atol=1e-12)
    with pytest.raises(ShapeError, match=r"logits \[5, 3\] and target_probs \[5, 4\]"):
        cross_entropy_with_logits(Tensor.zeros((5, 3), DEVICE), Tensor.zeros((5, 4), DEVICE))
    with pytest.raises(KindError, match="Float"):
        cross_entropy_with_logits(Tensor.zeros((2, 3), DEVICE), Tensor.ones((2, 3), DEVICE).int())  # type: ignore[arg-type]


def test_class_weights_normalise_by_the_picked_weights() -> None:
    x, t = sample(batch=8, classes=5, seed=1)
    weights = (1.0, 2.0, 3.0, 4.0, 5.0)
    got = CrossEntropyLossConfig().with_weights(weights).init(DEVICE)
    value = scalar(got.forward(Tensor.from_numpy(x, DEVICE, dtype=DType.F64), ints(t)))
    w = np.array(weights)[t]
    expected = -(w * log_softmax(x)[np.arange(len(t)), t]).sum() / w.sum()
    assert value == pytest.approx(expected, rel=1e-12)


def test_pad_tokens_add_nothing_but_count_in_the_batch() -> None:
    # Burn's normalisation: the sum over the non-pad targets divided by the batch size.
    x, _ = sample(batch=5, classes=4, seed=2)
    t = np.array([2, 0, 3, 1, 1])
    loss = CrossEntropyLossConfig().with_pad_tokens((1, 2)).init(DEVICE)
    value = scalar(loss.forward(Tensor.from_numpy(x, DEVICE, dtype=DType.F64), ints(t)))
    keep = np.isin(t, [1, 2], invert=True)
    expected = -log_softmax(x)[np.arange(5), t][keep].sum() / 5
    assert value == pytest.approx(expected, rel=1e-12)


def test_padding_half_the_batch_halves_the_loss() -> None:
    x = np.tile(sample(batch=1, classes=3, seed=8)[0], (2, 1))
    plain = CrossEntropyLossConfig().init(DEVICE)
    full = plain.forward(Tensor.from_numpy(x, DEVICE), ints(np.array([1, 1])))
    padded = CrossEntropyLossConfig().with_pad_tokens((0,)).init(DEVICE)
    half = padded.forward(Tensor.from_numpy(x, DEVICE), ints(np.array([1, 0])))
    assert scalar(half) == pytest.approx(scalar(full) / 2, rel=1e-6)


def test_an_all_padded_batch_is_zero() -> None:
    loss = CrossEntropyLossConfig().with_pad_tokens((0,)).init(DEVICE)
    assert scalar(loss.forward(Tensor.zeros((2, 3), DEVICE), Tensor.from_data([0, 0], DEVICE))) == 0.0


def test_label_smoothing_spreads_alpha_over_the_classes() -> None:
    x, t = sample(batch=4, classes=5, seed=3)
    alpha = 0.1
    smoothed = np.eye(5)[t] * (1 - alpha) + alpha / 5
    loss = CrossEntropyLossConfig().with_smoothing(alpha).init(DEVICE)
    value = scalar(loss.forward(Tensor.from_numpy(x, DEVICE, dtype=DType.F64), ints(t)))
    assert value == pytest.approx(-(log_softmax(x) * smoothed).sum(axis=1).mean(), rel=1e-12)


def test_smoothing_with_weights_and_padding() -> None:
    x, _ = sample(batch=5, classes=3, seed=4)
    t = np.array([0, 2, 1, 2, 0])
    weights, alpha = (0.5, 1.0, 2.0), 0.2
    loss = (
        CrossEntropyLossConfig()
        .with_smoothing(alpha)
        .with_weights(weights)
        .with_pad_tokens((0,))
        .init(DEVICE)
    )
    value = scalar(loss.forward(Tensor.from_numpy(x, DEVICE, dtype=DType.F64), ints(t)))
    w = np.array(weights)
    per_sample = (log_softmax(x) * (np.eye(3)[t] * (1 - alpha) + alpha / 3) * w).sum(axis=1)
    # Burn divides by the weights of every target, pad ones included.
    keep = t != 0
    expected = -per_sample[keep].sum() / w[t].sum()
    assert value == pytest.approx(expected, rel=1e-12)


def test_zero_smoothing_equals_plain_cross_entropy() -> None:
    x, t = sample(seed=5)
    logits = Tensor.from_numpy(x, DEVICE, dtype=DType.F64)
    plain = CrossEntropyLossConfig().init(DEVICE).forward(logits, ints(t))
    smoothed = CrossEntropyLossConfig().with_smoothing(0.0).init(DEVICE).forward(logits, ints(t))
    assert scalar(smoothed) == pytest.approx(scalar(plain), rel=1e-12)


def test_probabilities_instead_of_logits() -> None:
    x, t = sample(seed=6)
    probs = np.exp(log_softmax(x))
    loss = CrossEntropyLossConfig().with_logits(False).init(DEVICE)
    value = scalar(loss.forward(Tensor.from_numpy(probs, DEVICE, dtype=DType.F64), ints(t)))
    assert value == pytest.approx(-np.log(probs[np.arange(len(t)), t]).mean(), rel=1e-12)
    # A zero probability is clamped, so the loss stays finite.
    zero = loss.forward(Tensor.from_data([[0.0, 1.0]], DEVICE), Tensor.from_data([0], DEVICE))
    assert np.isfinite(scalar(zero)) and scalar(zero) > 40


def test_cross_entropy_shape_and_config_errors() -> None:
    loss = CrossEntropyLossConfig().init(DEVICE)
    with pytest.raises(ShapeError, match=r"\[4, 3\] and \[3\]"):
        loss.forward(Tensor.zeros((4, 3), DEVICE), Tensor.from_data([0, 1, 2], DEVICE))
    with pytest.raises(ShapeError, match="2 class weights"):
        CrossEntropyLossConfig().with_weights((1.0, 2.0)).init(DEVICE).forward(
            Tensor.zeros((1, 3), DEVICE), Tensor.from_data([0], DEVICE)
        )
    with pytest.raises(ValueError, match=r"CrossEntropyLossConfig\.smoothing"):
        CrossEntropyLossConfig(smoothing=1.5)
    with pytest.raises(ValueError, match=r"CrossEntropyLossConfig\.weights"):
        CrossEntropyLossConfig(weights=(1.0, -1.0))
    with pytest.raises(ValueError, match=r"CrossEntropyLossConfig\.pad_tokens"):
        CrossEntropyLossConfig(pad_tokens=(-1,))


def test_cross_entropy_is_a_parameter_free_module_with_a_repr() -> None:
    loss = CrossEntropyLossConfig().with_pad_tokens((0, 1)).init(DEVICE)
    assert loss.num_params() == 0
    assert (
        repr(loss)
        == "CrossEntropyLoss {pad_tokens: Vec<0..2>, weights: None, smoothing: None, logits: true}"
    )


# --------------------------------------------------------------------------- binary cross entropy


def bce_reference(p: Array, y: Array) -> Array:
    out: Array = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log1p(-p), -100))
    return out


def test_binary_cross_entropy_on_probabilities() -> None:
    rng = np.random.default_rng(7)
    p, y = rng.uniform(0.01, 0.99, size=10), rng.integers(0, 2, size=10)
    loss = BinaryCrossEntropyLossConfig().init(DEVICE)
    value = scalar(loss.forward(Tensor.from_numpy(p, DEVICE, dtype=DType.F64), ints(y)))
    assert value == pytest.approx(bce_reference(p, y).mean(), rel=1e-12)


def test_binary_cross_entropy_with_logits_matches_burns_number() -> None:
    # Burn's test (from PyTorch's BCELoss(sigmoid(x), y)): 0.7491.
    x = Tensor.from_data([0.8271, 0.9626, 0.3796, 0.2355], DEVICE)
    y = Tensor.from_data([0, 1, 0, 1], DEVICE)
    assert scalar(
        BinaryCrossEntropyLossConfig().with_logits(True).init(DEVICE).forward(x, y)
    ) == pytest.approx(0.7491, rel=1e-4)


def test_binary_cross_entropy_logits_gradient() -> None:
    rng = np.random.default_rng(8)
    xs, ys = rng.normal(size=(3, 4)), rng.integers(0, 2, size=(3, 4))
    x = Tensor.from_numpy(xs, AD, dtype=DType.F64).require_grad()
    y = Tensor.from_data([[int(v) for v in row] for row in ys], AD)
    loss = BinaryCrossEntropyLossConfig().with_logits(True).init(AD).forward(x, y)
    sig = 1 / (1 + np.exp(-xs))
    assert scalar(loss) == pytest.approx(bce_reference(sig, ys).mean(), rel=1e-10)
    grad = x.grad(loss.backward())
    assert grad is not None
    np.testing.assert_allclose(arr(grad), (sig - ys) / ys.size, atol=1e-12)


def test_binary_weights_pick_by_target_and_multilabel_weights_by_class() -> None:
    p = np.array([0.7, 0.2, 0.6, 0.4])
    y = np.array([0, 1, 0, 1])
    binary = BinaryCrossEntropyLossConfig().with_weights((3.0, 7.0)).init(DEVICE)
    value = scalar(binary.forward(Tensor.from_numpy(p, DEVICE, dtype=DType.F64), ints(y)))
    assert value == pytest.approx((bce_reference(p, y) * np.array([3.0, 7.0])[y]).mean(), rel=1e-12)
    pm = np.array([[0.6, 0.3, 0.8], [0.5, 0.9, 0.2]])
    ym = np.array([[1, 0, 1], [1, 0, 0]])
    multi = BinaryCrossEntropyLossConfig().with_weights((3.0, 7.0, 0.9)).init(DEVICE)
    targets = Tensor.from_data([[int(v) for v in row] for row in ym], DEVICE)
    value = scalar(multi.forward(Tensor.from_numpy(pm, DEVICE, dtype=DType.F64), targets))
    assert value == pytest.approx((bce_reference(pm, ym) * np.array([3.0, 7.0, 0.9])).mean(), rel=1e-12)


def test_binary_smoothing_and_clamping() -> None:
    p = np.array([0.3, 0.8, 0.6])
    y = np.array([0, 1, 1])
    loss = BinaryCrossEntropyLossConfig().with_smoothing(0.1).init(DEVICE)
    value = scalar(loss.forward(Tensor.from_numpy(p, DEVICE, dtype=DType.F64), ints(y)))
    assert value == pytest.approx(bce_reference(p, y * 0.9 + 0.05).mean(), rel=1e-12)
    wrong = (
        BinaryCrossEntropyLossConfig()
        .init(DEVICE)
        .forward(Tensor.from_data([0.0, 1.0], DEVICE), Tensor.from_data([1, 0], DEVICE))
    )
    assert scalar(wrong) == pytest.approx(100.0)


def test_binary_errors() -> None:
    loss = BinaryCrossEntropyLossConfig().with_weights((1.0, 2.0)).init(DEVICE)
    with pytest.raises(ShapeError, match="same shape"):
        loss.forward(Tensor.zeros((3,), DEVICE), Tensor.from_data([0, 1], DEVICE))
    with pytest.raises(ShapeError, match="number of classes"):
        loss.forward(Tensor.zeros((2, 3), DEVICE), Tensor.from_data([[0, 1, 0], [1, 0, 0]], DEVICE))


# --------------------------------------------------------------------------- regression


def test_mse_reductions_and_gradient() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    x = Tensor.from_numpy(a, AD, dtype=DType.F64).require_grad()
    y = Tensor.from_numpy(b, AD, dtype=DType.F64)
    mse = MseLoss()
    assert scalar(mse.forward(x, y, Reduction.Sum)) == pytest.approx(((a - b) ** 2).sum(), rel=1e-12)
    assert scalar(mse.forward(x, y, Reduction.Auto)) == pytest.approx(((a - b) ** 2).mean(), rel=1e-12)
    np.testing.assert_allclose(arr(mse.forward_no_reduction(x, y)), (a - b) ** 2, rtol=1e-12)
    grad = x.grad(mse.forward(x, y, Reduction.Mean).backward())
    assert grad is not None
    np.testing.assert_allclose(arr(grad), 2 * (a - b) / a.size, atol=1e-12)
    with pytest.raises(ShapeError, match="same shape"):
        mse.forward(Tensor.zeros((2, 2), DEVICE), Tensor.zeros((2, 1), DEVICE))
    with pytest.raises(TypeError, match="Reduction"):
        mse.forward(x, y, "mean")  # type: ignore[arg-type]


def test_huber_matches_burns_numbers_and_gradient() -> None:
    huber = HuberLossConfig(0.5).init()
    x = Tensor.from_data([-2.0, -0.5, 0.0, 0.3, 1.0], AD).require_grad()
    zeros = Tensor.zeros((5,), AD)
    np.testing.assert_allclose(
        arr(huber.forward_no_reduction(x, zeros)), [0.875, 0.125, 0.0, 0.045, 0.375], atol=1e-6
    )
    assert scalar(huber.forward(x, zeros, Reduction.Auto)) == pytest.approx(0.284, rel=1e-5)
    assert scalar(huber.forward(x, zeros, Reduction.Sum)) == pytest.approx(1.42, rel=1e-5)
    grad = x.grad(huber.forward_no_reduction(x, zeros).sum().backward())
    assert grad is not None
    np.testing.assert_allclose(arr(grad), [-0.5, -0.5, 0.0, 0.3, 0.5], atol=1e-6)


def test_huber_against_numpy() -> None:
    rng = np.random.default_rng(10)
    p, t = rng.normal(scale=2, size=20), rng.normal(scale=2, size=20)
    delta = 1.3
    r = t - p
    expected = np.where(np.abs(r) <= delta, 0.5 * r * r, delta * np.abs(r) - 0.5 * delta * delta)
    huber = HuberLossConfig(delta).init()
    got = huber.forward_no_reduction(
        Tensor.from_numpy(p, DEVICE, dtype=DType.F64), Tensor.from_numpy(t, DEVICE, dtype=DType.F64)
    )
    np.testing.assert_allclose(arr(got), expected, rtol=1e-12)
    assert repr(HuberLossConfig(0.5).init()) == "HuberLoss {delta: 0.5, lin_bias: 0.125}"
    with pytest.raises(ValueError, match=r"HuberLossConfig\.delta"):
        HuberLossConfig(-1.0)


# --------------------------------------------------------------------------- Burn 0.20's losses


def test_poisson_nll_matches_burns_numbers() -> None:
    from ferrum.nn.loss import PoissonNllLossConfig, Reduction

    config = PoissonNllLossConfig()
    assert (config.log_input, config.full, config.eps) == (True, False, 1e-8)
    # Burn's test_poisson_nll_loss_full (burn-nn/src/loss/poisson.rs).
    p = Tensor.from_floats([0.0, 0.0, -40.0, 1.0, 2.0, 3.0], DEVICE)
    t = Tensor.from_floats([1.0, 4.5, 2.5, 0.0, 0.0, 2.0], DEVICE)
    loss = config.with_full(True).init()
    expected = [1.0000, 4.9393, 101.1678, 2.7183, 7.3891, 14.7373]
    np.testing.assert_allclose(arr(loss.forward_no_reduction(p, t)), expected, atol=1e-4)
    np.testing.assert_allclose(scalar(loss.forward(p, t, Reduction.Sum)), 131.9518, atol=1e-3)
    np.testing.assert_allclose(scalar(loss.forward(p, t, Reduction.Auto)), 21.9920, atol=1e-4)
    # Rates instead of log-rates: p - t log(p + eps), against NumPy.
    rates, counts = np.array([0.5, 2.0, 3.0]), np.array([1.0, 0.0, 4.0])
    got = (
        PoissonNllLossConfig(log_input=False)
        .init()
        .forward_no_reduction(Tensor.from_floats(rates, DEVICE), Tensor.from_floats(counts, DEVICE))
    )
    np.testing.assert_allclose(arr(got), rates - counts * np.log(rates + 1e-8), rtol=1e-6)


def test_poisson_nll_gradient_and_errors() -> None:
    from ferrum import ArgumentError
    from ferrum.nn.loss import PoissonNllLossConfig, Reduction

    ad = Autodiff[NdArray].device()
    p = Tensor.from_floats([0.5, -1.0, 2.0], ad, dtype=DType.F64).require_grad()
    t = Tensor.from_floats([1.0, 3.0, 0.0], ad, dtype=DType.F64)
    loss = PoissonNllLossConfig().init().forward(p, t, Reduction.Sum)
    grad = p.grad(loss.backward())
    assert grad is not None
    np.testing.assert_allclose(arr(grad), np.exp([0.5, -1.0, 2.0]) - [1.0, 3.0, 0.0], rtol=1e-12)
    loss_fn = PoissonNllLossConfig().init()
    with pytest.raises(ArgumentError, match="every target must be >= 0"):
        loss_fn.forward(Tensor.zeros((2,), DEVICE), Tensor.from_floats([1.0, -1.0], DEVICE))
    with pytest.raises(ShapeError, match="must have the same shape"):
        loss_fn.forward(Tensor.zeros((2,), DEVICE), Tensor.zeros((3,), DEVICE))


def test_cosine_embedding_loss_matches_numpy() -> None:
    from ferrum.nn.loss import CosineEmbeddingLossConfig, Reduction

    config = CosineEmbeddingLossConfig()
    assert (config.margin, config.reduction) == (0.0, Reduction.Mean)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    labels = np.array([1, -1, -1, 1, -1])
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    expected = np.where(labels == 1, 1 - cos, np.maximum(0.0, cos - 0.2))
    loss = config.with_margin(0.2).init()
    x1, x2 = Tensor.from_floats(a, DEVICE, dtype=DType.F64), Tensor.from_floats(b, DEVICE, dtype=DType.F64)
    y = Tensor.from_ints(labels, DEVICE)
    np.testing.assert_allclose(arr(loss.forward_no_reduction(x1, x2, y)), expected, rtol=1e-12)
    np.testing.assert_allclose(scalar(loss.forward(x1, x2, y)), expected.mean(), rtol=1e-12)
    with pytest.raises(ValueError, match="must be Mean or Sum"):
        CosineEmbeddingLossConfig(reduction=Reduction.Auto)
    with pytest.raises(ShapeError, match="expected input1 and input2"):
        loss.forward(x1, x2, Tensor.from_ints([1, 1], DEVICE))


def test_cross_entropy_names_itself_for_float_targets_and_bad_labels() -> None:
    # PyTorch habits (float targets, labels past the class count) fail with the loss's name.
    logits = Tensor.from_data([[0.1, 0.2, 0.3], [0.3, 0.4, 0.5]], DEVICE)
    loss = CrossEntropyLossConfig().init(DEVICE)
    floats: Any = Tensor.from_data([0.0, 1.0], DEVICE)  # Any: mypy rejects this call already
    with pytest.raises(
        KindError, match=r"^CrossEntropyLoss: targets must be an Int tensor of class indices, found Float$"
    ):
        loss.forward(logits, floats)
    ints: Any = Tensor.from_data([[1, 2, 3], [4, 5, 6]], DEVICE)
    with pytest.raises(KindError, match=r"^CrossEntropyLoss: logits must be a Float tensor, found Int$"):
        loss.forward(ints, Tensor.from_data([0, 1], DEVICE))
    smoothed = CrossEntropyLossConfig().with_smoothing(0.1).with_weights((1.0, 2.0, 3.0)).init(DEVICE)
    for fn in (loss, smoothed):
        for label in (3, -1):
            bad = r"^CrossEntropyLoss: every target must be a class index in \[0, 3\)"
            with pytest.raises(OutOfBoundsError, match=bad):
                fn.forward(logits, Tensor.from_data([0, label], DEVICE))
    # Valid labels still give the loss: mean of -log softmax at the targets.
    x = np.array([[0.1, 0.2, 0.3], [0.3, 0.4, 0.5]])
    expected = -np.mean(np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True))[[0, 1], [2, 0]])
    assert abs(loss.forward(logits, Tensor.from_data([2, 0], DEVICE)).into_scalar() - expected) < 1e-6
