"""Optimizers, as in Burn's ``burn::optim``: functional steps over immutable modules.

``loss.backward()`` gives raw gradients; ``GradientsParams.from_grads`` keys
them by parameter id; ``optim.step(lr, model, grads)`` returns the updated
model (each parameter through one fused engine update). There is no
``zero_grad``: gradients are values, consumed by the step.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.optim import AdamConfig, GradientsParams
    >>> device = Autodiff[NdArray].device()
    >>> model = LinearConfig(2, 1).init(device)
    >>> optim = AdamConfig().init()
    >>> loss = model.forward(Tensor.ones((4, 2), device)).sum()
    >>> model = optim.step(1e-3, model, GradientsParams.from_grads(loss.backward(), model))
    >>> state = optim.to_record()[str(model.bias.id)]  # Burn's {"V1": {"Rank<N>": ...}}
    >>> sorted(state["V1"]["Rank1"]["momentum"])
    ['moment_1', 'moment_2', 'time']
"""

from ferrum.optim.accumulator import GradientsAccumulator
from ferrum.optim.adagrad import AdaGrad, AdaGradConfig
from ferrum.optim.adam import Adam, AdamConfig
from ferrum.optim.adamw import AdamW, AdamWConfig
from ferrum.optim.base import Optimizer
from ferrum.optim.clipping import GradientClipping, GradientClippingConfig, clip_grad_norm
from ferrum.optim.decay import WeightDecayConfig
from ferrum.optim.grads import GradientsParams
from ferrum.optim.momentum import MomentumConfig
from ferrum.optim.muon import AdjustLrFn, Muon, MuonConfig
from ferrum.optim.rmsprop import RmsProp, RmsPropConfig
from ferrum.optim.sgd import Sgd, SgdConfig

__all__ = [
    "AdaGrad",
    "AdaGradConfig",
    "Adam",
    "AdamConfig",
    "AdamW",
    "AdamWConfig",
    "AdjustLrFn",
    "GradientClipping",
    "GradientClippingConfig",
    "GradientsAccumulator",
    "GradientsParams",
    "MomentumConfig",
    "Muon",
    "MuonConfig",
    "Optimizer",
    "RmsProp",
    "RmsPropConfig",
    "Sgd",
    "SgdConfig",
    "WeightDecayConfig",
    "clip_grad_norm",
]
