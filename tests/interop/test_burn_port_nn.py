"""Burn 0.20.1's burn-nn tests of module display and of the cross-entropy loss, ported.

The ``display`` test of every module ferrum has (crates/burn-nn/src:
activation/*.rs, loss/*.rs, modules/**/*.rs), and the tests of
loss/cross_entropy.rs (class weights, label smoothing, pad tokens), whose
reference is Burn's ``cross_entropy_with_logits`` (computed here with NumPy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import Tensor
from ferrum.module import Module
from ferrum.nn import (
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    BatchNormConfig,
    DropoutConfig,
    EmbeddingConfig,
    Gelu,
    GroupNormConfig,
    HardSigmoidConfig,
    HardSwish,
    InstanceNormConfig,
    LayerNormConfig,
    LeakyReluConfig,
    LinearConfig,
    MaxPool1dConfig,
    MaxPool2dConfig,
    PReluConfig,
    Relu,
    RmsNormConfig,
    Sigmoid,
    SoftplusConfig,
    SwiGluConfig,
    Tanh,
)
from ferrum.nn.conv import Conv1dConfig, Conv2dConfig, ConvTranspose1dConfig, ConvTranspose2dConfig
from ferrum.nn.loss import BinaryCrossEntropyLossConfig, CrossEntropyLossConfig, HuberLossConfig, MseLoss

from tests.support.burn_port import DEVICE, assert_approx
from tests.support.tensors import Array

# --------------------------------------------------------------------------- display tests

DISPLAYS: dict[str, tuple[Callable[[], Module[Any]], str]] = {
    "gelu": (Gelu, "Gelu"),
    "hard_swish": (HardSwish, "HardSwish"),
    "relu": (Relu, "Relu"),
    "sigmoid": (Sigmoid, "Sigmoid"),
    "tanh": (Tanh, "Tanh"),
    "hard_sigmoid": (lambda: HardSigmoidConfig().init(), "HardSigmoid {alpha: 0.2, beta: 0.5}"),
    "leaky_relu": (lambda: LeakyReluConfig().init(), "LeakyRelu {negative_slope: 0.01}"),
    "prelu": (lambda: PReluConfig().init(DEVICE), "PRelu {num_parameters: 1, alpha_value: 0.25, params: 1}"),
    "softplus": (lambda: SoftplusConfig().init(), "Softplus {beta: 1}"),
    "swiglu": (
        lambda: SwiGluConfig(3, 5).init(DEVICE),
        "SwiGlu {d_input: 3, d_output: 5, bias: false, params: 30}",
    ),
    "binary_cross_entropy": (
        lambda: BinaryCrossEntropyLossConfig().with_weights((3.0, 7.0, 0.9)).init(DEVICE),
        "BinaryCrossEntropyLoss {weights: Tensor {rank: 1, shape: [3]}, smoothing: None, logits: false}",
    ),
    "cross_entropy": (
        lambda: CrossEntropyLossConfig().with_weights((3.0, 7.0, 0.9)).with_smoothing(0.5).init(DEVICE),
        "CrossEntropyLoss {pad_tokens: None, weights: Tensor {rank: 1, shape: [3]}, smoothing: 0.5,"
        " logits: true}",
    ),
    "huber": (lambda: HuberLossConfig(0.5).init(), "HuberLoss {delta: 0.5, lin_bias: 0.125}"),
    "mse": (MseLoss, "MseLoss"),
    "conv1d": (
        lambda: Conv1dConfig(5, 5, 5).init(DEVICE),
        "Conv1d {ch_in: 5, ch_out: 5, stride: 1, kernel_size: 5, dilation: 1, groups: 1, padding: Valid,"
        " params: 130}",
    ),
    "conv2d": (
        lambda: Conv2dConfig((5, 1), (5, 5)).init(DEVICE),
        "Conv2d {ch_in: 5, ch_out: 1, stride: [1, 1], kernel_size: [5, 5], dilation: [1, 1], groups: 1,"
        " padding: Valid, params: 126}",
    ),
    "conv_transpose1d": (
        lambda: ConvTranspose1dConfig((5, 2), 5).init(DEVICE),
        "ConvTranspose1d {channels: [5, 2], stride: 1, kernel_size: 5, dilation: 1, groups: 1, padding: 0,"
        " padding_out: 0, params: 52}",
    ),
    "conv_transpose2d": (
        lambda: ConvTranspose2dConfig((5, 2), (5, 5)).init(DEVICE),
        "ConvTranspose2d {channels: [5, 2], stride: [1, 1], kernel_size: [5, 5], dilation: [1, 1], groups: 1,"
        " padding: [0, 0], padding_out: [0, 0], params: 252}",
    ),
    "dropout": (lambda: DropoutConfig(0.5).init(), "Dropout {prob: 0.5}"),
    "embedding": (
        lambda: EmbeddingConfig(100, 10).init(DEVICE),
        "Embedding {n_embedding: 100, d_model: 10, params: 1000}",
    ),
    "linear": (
        lambda: LinearConfig(3, 5).init(DEVICE),
        "Linear {d_input: 3, d_output: 5, bias: true, params: 20}",
    ),
    "batch_norm": (
        lambda: BatchNormConfig(3).init(DEVICE),
        "BatchNorm {num_features: 3, momentum: 0.1, epsilon: 0.00001, params: 12}",
    ),
    "group_norm": (
        lambda: GroupNormConfig(3, 6).init(DEVICE),
        "GroupNorm {num_groups: 3, num_channels: 6, epsilon: 0.00001, affine: true, params: 12}",
    ),
    "instance_norm": (
        lambda: InstanceNormConfig(6).init(DEVICE),
        "InstanceNorm {num_channels: 6, epsilon: 0.00001, affine: true, params: 12}",
    ),
    "layer_norm": (
        lambda: LayerNormConfig(6).init(DEVICE),
        "LayerNorm {d_model: 6, epsilon: 0.00001, bias: true, params: 12}",
    ),
    "layer_norm_without_bias": (
        lambda: LayerNormConfig(6).with_bias(False).init(DEVICE),
        "LayerNorm {d_model: 6, epsilon: 0.00001, bias: false, params: 6}",
    ),
    "rms_norm": (lambda: RmsNormConfig(6).init(DEVICE), "RmsNorm {d_model: 6, epsilon: 0.00001, params: 6}"),
    "adaptive_avg_pool1d": (lambda: AdaptiveAvgPool1dConfig(3).init(), "AdaptiveAvgPool1d {output_size: 3}"),
    "adaptive_avg_pool2d": (
        lambda: AdaptiveAvgPool2dConfig((3, 3)).init(),
        "AdaptiveAvgPool2d {output_size: [3, 3]}",
    ),
    "avg_pool1d": (
        lambda: AvgPool1dConfig(3).init(),
        "AvgPool1d {kernel_size: 3, stride: 3, padding: Valid, count_include_pad: true, ceil_mode: false}",
    ),
    "avg_pool2d": (
        lambda: AvgPool2dConfig((3, 3)).init(),
        "AvgPool2d {kernel_size: [3, 3], stride: [3, 3], padding: Valid, count_include_pad: true,"
        " ceil_mode: false}",
    ),
    "max_pool1d": (
        lambda: MaxPool1dConfig(3).init(),
        "MaxPool1d {kernel_size: 3, stride: 3, padding: Valid, dilation: 1, ceil_mode: false}",
    ),
    "max_pool2d": (
        lambda: MaxPool2dConfig((3, 3)).init(),
        "MaxPool2d {kernel_size: [3, 3], stride: [3, 3], padding: Valid, dilation: [1, 1], ceil_mode: false}",
    ),
}


@pytest.mark.parametrize("name", sorted(DISPLAYS))
def test_display(name: str) -> None:
    make, expected = DISPLAYS[name]
    module = make()
    assert str(module) == expected == repr(module)


# --------------------------------------------------------------------------- loss/cross_entropy.rs


def log_softmax(x: Array) -> Array:
    shifted = x - x.max(axis=1, keepdims=True)
    out: Array = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return out


def cross_entropy_with_logits(logits: Array, targets: Array) -> float:
    """Burn's ``cross_entropy_with_logits``: the batch mean of -sum(targets * log_softmax(logits))."""
    return float(-(targets * log_softmax(logits)).sum(axis=1).mean())


def setup(padded: bool = False) -> tuple[Array, Tensor[Any, Any, Any], Tensor[Any, Any, Any], Array]:
    rng = np.random.default_rng(4 if padded else 3)
    logits = rng.normal(size=(4, 5)).astype(np.float32)
    targets = [2, 0, 4, 1]
    one_hot = np.eye(5, dtype=np.float32)[targets]
    if padded:
        # The pad tokens (1 and 2) have an all-zero target row.
        one_hot[[0, 3]] = 0.0
    x = Tensor.from_numpy(logits, DEVICE)
    return logits, x, Tensor.from_ints(targets, DEVICE), one_hot


def loss_value(t: Tensor[Any, Any, Any]) -> float:
    return float(t.into_scalar())


def test_cross_entropy_loss() -> None:
    logits, x, t, one_hot = setup()
    value = loss_value(CrossEntropyLossConfig().init(DEVICE).forward(x, t))
    assert value == pytest.approx(cross_entropy_with_logits(logits, one_hot), rel=1e-5)


def test_cross_entropy_loss_with_weights() -> None:
    logits, x, t, one_hot = setup()
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    value = loss_value(CrossEntropyLossConfig().with_weights(tuple(weights)).init(DEVICE).forward(x, t))
    expected = -(log_softmax(logits) * one_hot * weights).sum() / (1.0 + 2.0 + 3.0 + 5.0)
    assert value == pytest.approx(expected, rel=1e-5)


def test_label_smoothing_with_weights_and_alpha_zero() -> None:
    _, x, t, _ = setup()
    config = CrossEntropyLossConfig().with_weights((1.0, 2.0, 3.0, 4.0, 5.0))
    plain = loss_value(config.init(DEVICE).forward(x, t))
    assert loss_value(config.with_smoothing(0.0).init(DEVICE).forward(x, t)) == pytest.approx(plain, rel=1e-5)


def test_label_smoothing_alpha_equal_zero() -> None:
    _, x, t, _ = setup()
    plain = loss_value(CrossEntropyLossConfig().init(DEVICE).forward(x, t))
    smoothed = CrossEntropyLossConfig().with_smoothing(0.0).init(DEVICE).forward(x, t)
    assert loss_value(smoothed) == pytest.approx(plain, rel=1e-5)


def test_cross_entropy_loss_with_pad_token() -> None:
    # The pad rows add nothing and still count in the batch mean: Burn's value.
    logits, x, t, one_hot = setup(padded=True)
    value = loss_value(CrossEntropyLossConfig().with_pad_tokens((1, 2)).init(DEVICE).forward(x, t))
    assert value == pytest.approx(cross_entropy_with_logits(logits, one_hot), rel=1e-5)


def test_label_smoothing_with_zero_alpha_and_pad_token() -> None:
    _, x, t, _ = setup(padded=True)
    config = CrossEntropyLossConfig().with_pad_tokens((1, 2))
    plain = loss_value(config.init(DEVICE).forward(x, t))
    assert loss_value(config.with_smoothing(0.0).init(DEVICE).forward(x, t)) == pytest.approx(plain, rel=1e-5)


SMOOTHED = [
    [0.01, 0.01, 0.96, 0.01, 0.01],
    [0.96, 0.01, 0.01, 0.01, 0.01],
    [0.01, 0.01, 0.01, 0.01, 0.96],
    [0.01, 0.96, 0.01, 0.01, 0.01],
]


def test_label_smoothing_target_conversion() -> None:
    _, _, t, _ = setup()
    alpha = 0.05
    smoothed = t.one_hot(5).float() * (1.0 - alpha) + alpha / 5
    assert_approx(smoothed, SMOOTHED)


def test_label_smoothing() -> None:
    logits, x, t, _ = setup()
    value = loss_value(CrossEntropyLossConfig().with_smoothing(0.05).init(DEVICE).forward(x, t))
    assert value == pytest.approx(
        float(-(log_softmax(logits) * np.array(SMOOTHED)).sum(axis=1).mean()), rel=1e-5
    )
