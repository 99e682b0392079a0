"""Gradient checkpointing: ``Autodiff[NdArray, BalancedCheckpointing]``.

Burn's spec for it is that every gradient equals the plain autodiff
backend's: its whole autodiff test suite runs again under checkpointing.
Here the gradient checks (tests/support/gradcheck.py) compare every analytic
gradient on both backends bit for bit, the engine's cargo tests run Burn's
checkpoint graphs, and the training steps below compare whole models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import Distribution, Module, Tensor
from ferrum.backend import Autodiff, BalancedCheckpointing, CheckpointStrategy, NdArray, NoCheckpointing
from ferrum.nn import (
    BatchNorm,
    BatchNormConfig,
    Conv2d,
    Conv2dConfig,
    Gelu,
    LayerNorm,
    LayerNormConfig,
    Linear,
    LinearConfig,
    Relu,
)
from ferrum.nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig
from ferrum.nn.transformer import TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput
from ferrum.optim import AdamConfig, GradientsParams

PLAIN = Autodiff[NdArray]
BALANCED = Autodiff[NdArray, BalancedCheckpointing]


def test_the_backend_is_autodiff_of_its_inner_backend_with_its_own_devices() -> None:
    assert BALANCED.name() == "Autodiff[NdArray, BalancedCheckpointing]"
    assert BALANCED.inner() is NdArray
    assert issubclass(BALANCED, Autodiff)
    assert Autodiff[NdArray, NoCheckpointing] is PLAIN
    assert Autodiff[NdArray, BalancedCheckpointing] is BALANCED
    device = BALANCED.device()
    assert device.is_autodiff and device.backend is BALANCED
    assert device.inner == NdArray.device()
    # A different backend, as Autodiff<B, BalancedCheckpointing> is in Burn.
    assert device != PLAIN.device()


def test_a_strategy_is_a_type_argument_not_a_value() -> None:
    with pytest.raises(TypeError, match="NoCheckpointing or BalancedCheckpointing"):
        Autodiff[NdArray, NdArray]  # type: ignore[type-var]
    with pytest.raises(TypeError, match="NoCheckpointing or BalancedCheckpointing"):
        Autodiff[NdArray, CheckpointStrategy]
    with pytest.raises(TypeError, match="checkpoint strategy type"):
        BalancedCheckpointing()


class _Mlp(Module[Any]):
    """Linear, LayerNorm and GELU: memory-bound chains between the products."""

    fc1: Linear[Any]
    norm: LayerNorm[Any]
    act: Gelu
    fc2: Linear[Any]

    def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
        return self.fc2.forward(self.act.forward(self.norm.forward(self.fc1.forward(x))))


def _mlp(device: Any) -> _Mlp:
    return _Mlp(
        fc1=LinearConfig(12, 32).init(device),
        norm=LayerNormConfig(32).init(device),
        act=Gelu(),
        fc2=LinearConfig(32, 5).init(device),
    )


class _Cnn(Module[Any]):
    conv: Conv2d[Any]
    norm: BatchNorm[Any]
    act: Relu
    pool: AdaptiveAvgPool2d
    fc: Linear[Any]

    def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
        y = self.pool.forward(self.act.forward(self.norm.forward(self.conv.forward(x))))
        return self.fc.forward(y.flatten(1, 3))


def _cnn(device: Any) -> _Cnn:
    return _Cnn(
        conv=Conv2dConfig((3, 8), (3, 3)).init(device),
        norm=BatchNormConfig(8).init(device),
        act=Relu(),
        pool=AdaptiveAvgPool2dConfig((2, 2)).init(),
        fc=LinearConfig(32, 4).init(device),
    )


class _Encoder(Module[Any]):
    """Two pre-norm transformer layers with dropout and a padding mask."""

    encoder: TransformerEncoder[Any]

    def forward(self, x: Tensor[Any, Any]) -> Tensor[Any, Any]:
        pad = Tensor.from_data([[False] * 7 + [True], [False] * 8], x.device())
        return self.encoder.forward(TransformerEncoderInput(x).mask_pad(pad))


def _encoder(device: Any) -> _Encoder:
    config = TransformerEncoderConfig(
        d_model=16, d_ff=32, n_heads=4, n_layers=2, dropout=0.1, norm_first=True
    )
    return _Encoder(encoder=config.init(device))


MODELS: dict[str, tuple[Callable[[Any], Module[Any]], tuple[int, ...]]] = {
    "mlp": (_mlp, (6, 12)),
    "cnn": (_cnn, (2, 3, 9, 9)),
    "transformer": (_encoder, (2, 8, 16)),
}


def _train(backend: type[Autodiff[Any, Any]], name: str) -> list[list[np.ndarray[Any, Any]]]:
    """Two Adam steps from the same seed; every gradient of each step, in parameter order."""
    make, shape = MODELS[name]
    NdArray.seed(7)
    device = backend.device()
    model: Any = make(device)
    x = Tensor.random(shape, Distribution.Normal(0.0, 1.0), device)
    optim = AdamConfig().init()
    steps = []
    for _ in range(2):
        loss = (model.forward(x).sin() * 3.0).mean()
        grads = GradientsParams.from_grads(loss.backward(), model)
        found = [grads.get(p.id) for p in model.parameters()]
        steps.append([g.to_numpy() for g in found if g is not None])
        model = optim.step(1e-2, model, grads)
    for param in model.parameters():
        assert param.val().device() == device, "the optimizer step moved a parameter off its backend"
    return steps


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_steps_give_the_plain_gradients_bit_for_bit(name: str) -> None:
    plain, balanced = _train(PLAIN, name), _train(BALANCED, name)
    for step, (p, b) in enumerate(zip(plain, balanced, strict=True)):
        assert len(p) == len(b) > 0
        for i, (gp, gb) in enumerate(zip(p, b, strict=True)):
            np.testing.assert_array_equal(gb, gp, err_msg=f"step {step}, parameter {i}")
