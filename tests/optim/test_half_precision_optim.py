"""Every optimizer of ``ferrum.optim`` stepping bf16 and f16 parameters.

A half-precision parameter is updated in f32: the parameter and its gradient are widened, the
step runs with the optimizer state kept in f32, and only the new parameter is rounded back to the
parameter's dtype. So each step must give exactly the f32 step, taken from the same (rounded)
parameter and gradient values with the same f32 state, rounded to the half dtype. The reference
runs a second optimizer of the same configuration in f32 on the half model's values at every
step, over three steps, so the state carried between steps is checked too.

A last test enumerates ``ferrum.optim``'s exports, so a new optimizer without a case here fails.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import ferrum.optim as foptim
import numpy as np
import pytest
from ferrum import D2, DType, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module, Param, ParamId
from ferrum.optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClippingConfig,
    GradientsParams,
    MomentumConfig,
    MuonConfig,
    Optimizer,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
    clip_grad_norm,
)

from tests.support.devices import AD, INNER

B = TypeVar("B", bound=Backend)
HALF = [DType.BF16, DType.F16]


class Weights(Module[B]):
    """Two matrices (Muon steps 2-D parameters only), one tall and one wide."""

    tall: Param[Tensor[B, D2]]
    wide: Param[Tensor[B, D2]]


class _Cast:
    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return tensor.cast(self.dtype)


OPTIMIZERS: dict[str, Callable[[], Optimizer[Any]]] = {
    "sgd": lambda: SgdConfig().init(),
    "sgd_momentum_decay": lambda: SgdConfig()
    .with_momentum(MomentumConfig(0.9, 0.1, nesterov=True))
    .with_weight_decay(WeightDecayConfig(0.01))
    .init(),
    "adam": lambda: AdamConfig().with_weight_decay(WeightDecayConfig(0.05)).init(),
    "adamw": lambda: AdamWConfig().with_weight_decay(0.1).init(),
    "adagrad": lambda: AdaGradConfig().with_weight_decay(WeightDecayConfig(0.02)).init(),
    "rmsprop": lambda: RmsPropConfig().with_centered(True).with_momentum(0.5).init(),
    "muon": lambda: MuonConfig().with_weight_decay(WeightDecayConfig(0.02)).init(),
}


def _model(rng: np.random.Generator, dtype: DType) -> Weights[Autodiff[NdArray]]:
    tall = Tensor.from_numpy(rng.normal(size=(5, 3)).astype(np.float32), AD).cast(dtype)
    wide = Tensor.from_numpy(rng.normal(size=(2, 4)).astype(np.float32), AD).cast(dtype)
    return Weights(tall=Param(tall), wide=Param(wide))


def _grads(
    model: Weights[Any], rng: np.random.Generator, dtype: DType
) -> tuple[GradientsParams, GradientsParams]:
    """Random gradients in ``dtype``, and the same values in f32."""
    half, wide = GradientsParams(), GradientsParams()
    for _, param in model.named_parameters():
        g = Tensor.from_numpy(rng.normal(scale=2.0, size=param.shape()).astype(np.float32), INNER).cast(dtype)
        half.register(param.id, g)
        wide.register(param.id, g.cast(DType.F32))
    return half, wide


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_half_step_is_the_f32_step_rounded(name: str, dtype: DType) -> None:
    rng = np.random.default_rng(3)
    model = _model(rng, dtype)
    half_optim, ref_optim = OPTIMIZERS[name](), OPTIMIZERS[name]()
    for step in range(1, 4):
        grads, wide_grads = _grads(model, rng, dtype)
        expected = ref_optim.step(0.05, model.map(_Cast(DType.F32)), wide_grads)
        model = half_optim.step(0.05, model, grads)
        want = dict(expected.named_parameters())
        for path, param in model.named_parameters():
            got = param.val()
            assert got.dtype == dtype, f"{path} step {step}: {got.dtype}"
            assert param.is_require_grad(), path
            np.testing.assert_array_equal(
                got.cast(DType.F32).to_numpy(),
                want[path].val().cast(dtype).cast(DType.F32).to_numpy(),
                err_msg=f"{name} {path} step {step}",
            )


def _state_tensors(value: object) -> list[Tensor[Any, Any, Any]]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _state_tensors(v)]
    return []


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_state_of_a_bf16_parameter_is_kept_in_f32(name: str) -> None:
    """The moments of a half parameter would lose most of a small gradient's contribution in bf16
    (beta_2 = 0.999 adds a thousandth per step, below bf16's resolution at 1): they stay f32."""
    rng = np.random.default_rng(5)
    model = _model(rng, DType.BF16)
    optim = OPTIMIZERS[name]()
    for _ in range(2):
        model = optim.step(0.05, model, _grads(model, rng, DType.BF16)[0])
    tensors = _state_tensors(dict(optim.to_record()))
    if name != "sgd":
        assert tensors, f"{name} kept no state"
    assert {t.dtype for t in tensors} <= {DType.F32}, name


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_clipping_a_half_gradient_is_the_f32_clipping_rounded(dtype: DType) -> None:
    """Clipping by value, by one tensor's norm and by the joint norm of two (``clip_grad_norm``):
    measured and scaled in f32, each gradient rounded back to its dtype once."""
    rng = np.random.default_rng(9)
    grads = [Tensor.from_numpy(rng.normal(scale=2.0, size=n), INNER).cast(dtype) for n in (7, 5)]
    for kind in (GradientClippingConfig.Value(1.5), GradientClippingConfig.Norm(1.5)):
        clipping = kind.init()
        got = clipping.clip_gradient(grads[0])
        want = clipping.clip_gradient(grads[0].cast(DType.F32)).cast(dtype)
        assert got.dtype == dtype, clipping
        np.testing.assert_array_equal(
            got.cast(DType.F32).to_numpy(), want.cast(DType.F32).to_numpy(), err_msg=repr(clipping)
        )
    half, wide = GradientsParams(), GradientsParams()
    for g in grads:
        id = ParamId.new()
        half.register(id, g)
        wide.register(id, g.cast(DType.F32))
    clipped, reference = clip_grad_norm(half, 2.0), clip_grad_norm(wide, 2.0)
    for id, g in clipped:
        want = reference.get(id)
        assert g.dtype == dtype and want is not None
        rounded = want.cast(dtype).cast(DType.F32)
        np.testing.assert_array_equal(g.cast(DType.F32).to_numpy(), rounded.to_numpy())


def test_every_exported_optimizer_has_a_case() -> None:
    """Every concrete ``Optimizer`` that ``ferrum.optim`` exports is stepped above."""
    stepped = {type(make()) for make in OPTIMIZERS.values()}
    exported = {
        obj
        for name in foptim.__all__
        if inspect.isclass(obj := getattr(foptim, name))
        and issubclass(obj, Optimizer)
        and not inspect.isabstract(obj)
    }
    assert exported - stepped == set()
