"""Burn 0.20.1's AdamW tests with numbers, ported (crates/burn-optim/src/optim/adamw.rs).

A 6x6 Linear with Burn's weights takes two AdamW steps (lr 0.01) on Burn's
inputs; the updated weights must match Burn's numbers (Burn's tolerance:
absolute 1e-2), with and without cautious weight decay, whose only visible
difference there is one weight. The cautious rule is also checked exactly
against a NumPy version of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor
from ferrum.module import Param
from ferrum.nn import Linear, LinearConfig
from ferrum.optim import AdamWConfig, GradientsParams

from tests.support.burn_port import AD, BURN_LINEAR_BIAS, BURN_LINEAR_WEIGHT, BURN_X1, BURN_X2, DEVICE

LR = 0.01
WEIGHT, BIAS, X1, X2 = BURN_LINEAR_WEIGHT, BURN_LINEAR_BIAS, BURN_X1, BURN_X2
EXPECTED_WEIGHT = [
    [-0.337295, 0.117827, 0.380358, 0.296868, 0.065232, 0.046534],
    [0.057032, -0.036518, -0.382951, 0.232516, 0.173738, -0.309182],
    [-0.038703, 0.016052, -0.313155, 0.225982, -0.295039, 0.289981],
    [-0.314920, -0.237394, -0.387704, -0.315067, -0.095153, 0.141081],
    [0.306815, -0.234226, 0.348083, -0.191115, 0.356002, -0.049993],
    [-0.035634, -0.030083, 0.104636, 0.170244, 0.009196, 0.359580],
]
EXPECTED_BIAS = [-0.406555, 0.067568, -0.115982, 0.096477, 0.115287, -0.007080]


def linear() -> Linear[Any]:
    # Burn's given_linear_layer: a LinearConfig(6, 6) layer holding Burn's weights.
    layer = LinearConfig(6, 6).init(AD)
    weight, bias = Tensor.from_floats(WEIGHT, AD), Tensor.from_floats(BIAS, AD)
    return Linear(weight=layer.weight.with_value(weight), bias=Param(bias))


def two_steps(config: AdamWConfig, x2: list[list[float]]) -> Linear[Any]:
    layer, optim = linear(), config.init()
    for x in (X1, x2):
        loss = layer.forward(Tensor.from_floats(x, AD).require_grad())
        grads = GradientsParams.from_grads(loss.backward(), layer)
        layer = optim.step(LR, layer, grads)
    return layer


def config(cautious: bool) -> AdamWConfig:
    return AdamWConfig(
        beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.5, cautious_weight_decay=cautious
    )


def test_adamw_optimizer_with_numbers() -> None:
    layer = two_steps(config(False), X2)
    np.testing.assert_allclose(layer.weight.val().to_numpy(), EXPECTED_WEIGHT, atol=1e-2)
    assert layer.bias is not None
    np.testing.assert_allclose(layer.bias.val().to_numpy(), EXPECTED_BIAS, atol=1e-2)


def test_adamw_optimizer_with_numbers_cautious() -> None:
    # Burn's inputs differ in one sign; only weight [5, 5] moves away from the plain run.
    x2 = [row[:] for row in X2]
    x2[1][5] = -0.9085
    layer = two_steps(config(True), x2)
    expected = [row[:] for row in EXPECTED_WEIGHT]
    expected[5][5] = 0.37061332
    np.testing.assert_allclose(layer.weight.val().to_numpy(), expected, atol=1e-2)
    assert layer.bias is not None
    np.testing.assert_allclose(layer.bias.val().to_numpy(), EXPECTED_BIAS, atol=1e-2)


@pytest.mark.parametrize("steps", [1, 3])
def test_cautious_weight_decay_follows_the_rule(steps: int) -> None:
    # NumPy: Adam's moments, bias-corrected update, then decay only where sign(w) == sign(m1).
    rng = np.random.default_rng(5)
    w = rng.normal(size=(4, 3))
    grads = [rng.normal(size=(4, 3)) for _ in range(steps)]
    beta_1, beta_2, eps, wd, lr = 0.9, 0.999, 1e-8, 0.3, 0.05
    m1, m2, expected = np.zeros_like(w), np.zeros_like(w), w.copy()
    for t, g in enumerate(grads, start=1):
        m1 = beta_1 * m1 + (1 - beta_1) * g
        m2 = beta_2 * m2 + (1 - beta_2) * g * g
        update = (m1 / (1 - beta_1**t)) / (np.sqrt(m2 / (1 - beta_2**t)) + eps)
        keep = (expected >= 0) == (m1 >= 0)
        expected = expected - np.where(keep, lr * wd * expected, 0.0) - lr * update
    optim = AdamWConfig(epsilon=eps, weight_decay=wd, cautious_weight_decay=True).init()
    state = None
    tensor = Tensor.from_numpy(w, DEVICE, dtype=DType.F64)
    for g in grads:
        tensor, state = optim._update(lr, tensor, Tensor.from_numpy(g, DEVICE, dtype=DType.F64), state)
    np.testing.assert_allclose(tensor.to_numpy(), expected, rtol=1e-12, atol=1e-14)
