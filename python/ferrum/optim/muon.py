"""Muon (Burn's ``MuonConfig``/``Muon``): momentum, then Newton-Schulz orthogonalisation.

Muon is for the 2-D weight matrices of hidden layers. Each step of a
``[rows, cols]`` parameter ``W`` with gradient ``G``:

```
v = G (first step)  or  v = momentum * v + (1 - dampening) * G
u = momentum * v + G (nesterov)  or  u = v
O = newton_schulz(u)                    # nearest semi-orthogonal matrix, [rows, cols]
W = W * (1 - lr * penalty)              # weight decay (when configured), with the plain lr
W = W - lr * adjust_lr_fn.adjustment_ratio([rows, cols]) * O
```

``newton_schulz`` transposes a tall matrix (``rows > cols``) so it works on
the short side, divides by the Frobenius norm (at least ``epsilon``), runs
``ns_steps`` quintic iterations ``X = a X + (b A + c A A) X`` with
``A = X X^T`` and ``(a, b, c) = ns_coefficients``, and transposes back.

As in Burn, a parameter that is not 2-D (a bias, a norm's scale, a
convolution kernel) cannot be stepped by Muon: ``step`` raises
``ShapeError`` naming the parameter and its shape, before any state
changes. Train those with another optimizer such as AdamW.

The update runs as a sequence of ferrum tensor operations (matmuls and
element-wise ops), not as one fused engine kernel like the other optimizers.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.optim import GradientsParams, MuonConfig
    >>> device = Autodiff[NdArray].device()
    >>> layer = LinearConfig(3, 2, bias=False).init(device)
    >>> optim = MuonConfig().init()
    >>> loss = layer.forward(Tensor.ones((4, 3), device)).sum()
    >>> layer = optim.step(0.02, layer, GradientsParams.from_grads(loss.backward(), layer))
    >>> state = optim.to_record()[str(layer.weight.id)]  # Burn's {"V1": {"Rank2": MuonState}}
    >>> state["V1"]["Rank2"]["momentum"]["velocity"].dims()
    (3, 2)
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import math
import struct
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from typing_extensions import Self

from ferrum._ferrum import Device, DType, ShapeError, Tensor
from ferrum.backend import Autodiff
from ferrum.config import config
from ferrum.config.checks import check_number
from ferrum.module import Module
from ferrum.optim import record
from ferrum.optim.base import FloatTensor, Optimizer
from ferrum.optim.clipping import GradientClipping, GradientClippingConfig
from ferrum.optim.decay import WeightDecayConfig
from ferrum.optim.grads import GradientsParams
from ferrum.optim.momentum import MomentumConfig

__all__ = ["AdjustLrFn", "Muon", "MuonConfig", "MuonState"]

M = TypeVar("M", bound="Module[Autodiff[Any]]")


class AdjustLrFn(enum.Enum):
    """How Muon scales the learning rate from a ``[A, B, ...]`` parameter's first two dims.

    ``Original`` (Keller Jordan's, the default): ``lr * sqrt(max(1, A / B))``, so
    a tall matrix gets a larger rate. ``MatchRmsAdamW`` (Moonshot's):
    ``lr * 0.2 * sqrt(max(A, B))``, which matches AdamW's update RMS so AdamW's
    learning rate and weight decay carry over. A parameter of rank below 2 keeps ``lr``.

    Example:
        >>> from ferrum.optim import AdjustLrFn
        >>> AdjustLrFn.Original.adjustment_ratio((1024, 512))
        1.4142135623730951
        >>> AdjustLrFn.MatchRmsAdamW.adjustment_ratio((1024, 512))
        6.4
    """

    Original = "Original"
    MatchRmsAdamW = "MatchRmsAdamW"

    def adjustment_ratio(self, shape: Sequence[int]) -> float:
        """The factor the learning rate is multiplied by for a parameter of ``shape``."""
        if len(shape) < 2:
            return 1.0
        a, b = float(shape[0]), float(shape[1])
        if self is AdjustLrFn.Original:
            # An empty matrix (B == 0) has nothing to update; Rust's NaN/inf max gives 1 or inf there.
            return math.sqrt(max(1.0, a / b)) if b > 0 else 1.0
        return 0.2 * math.sqrt(max(a, b))


@config
class MuonConfig:
    """Configuration of Muon (Burn's fields and defaults).

    Fields:
        weight_decay: decoupled decay ``W * (1 - lr * penalty)`` after the
            orthogonalisation, with the unadjusted ``lr``; None for none.
        momentum: always used; default ``MomentumConfig(0.95, 0.0, nesterov=True)``.
        ns_coefficients: ``(a, b, c)`` of the quintic Newton-Schulz iteration,
            default ``(3.4445, -4.775, 2.0315)``.
        epsilon: lower bound of the norm the update is divided by, default ``1e-7``.
        ns_steps: Newton-Schulz iterations, default 5.
        adjust_lr_fn: the shape-based learning-rate scaling, default ``AdjustLrFn.Original``.

    Burn's Muon config has no gradient clipping; as with Burn's
    ``OptimizerAdaptor::with_grad_clipping``, set it on the optimizer:
    ``MuonConfig().init().with_grad_clipping(GradientClippingConfig.Norm(1.0).init())``.

    Example:
        >>> from ferrum.optim import AdjustLrFn, MuonConfig, WeightDecayConfig
        >>> MuonConfig().momentum
        MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)
        >>> c = MuonConfig().with_adjust_lr_fn(AdjustLrFn.MatchRmsAdamW)
        >>> c = c.with_weight_decay(WeightDecayConfig(0.1))
        >>> c.adjust_lr_fn, c.ns_steps, c.epsilon
        (<AdjustLrFn.MatchRmsAdamW: 'MatchRmsAdamW'>, 5, 1e-07)
    """

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig = MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)
    ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315)
    epsilon: float = 1e-7
    ns_steps: int = 5
    adjust_lr_fn: AdjustLrFn = AdjustLrFn.Original

    def __post_init__(self) -> None:
        if self.weight_decay is not None and not isinstance(self.weight_decay, WeightDecayConfig):
            found = type(self.weight_decay).__name__
            raise ValueError(f"MuonConfig.weight_decay must be a WeightDecayConfig or None, found {found}")
        if not isinstance(self.momentum, MomentumConfig):
            found = type(self.momentum).__name__
            raise ValueError(f"MuonConfig.momentum must be a MomentumConfig, found {found}")
        coefficients = self.ns_coefficients
        if not isinstance(coefficients, tuple) or len(coefficients) != 3:
            raise ValueError(f"MuonConfig.ns_coefficients must be a tuple (a, b, c), found {coefficients!r}")
        for i, value in enumerate(coefficients):
            check_number("MuonConfig", f"ns_coefficients[{i}]", value)
        check_number("MuonConfig", "epsilon", self.epsilon, low=0.0, low_open=True)
        steps = self.ns_steps
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ValueError(f"MuonConfig.ns_steps must be an int >= 0, found {steps!r}")
        if not isinstance(self.adjust_lr_fn, AdjustLrFn):
            raise ValueError(
                f"MuonConfig.adjust_lr_fn must be AdjustLrFn.Original or AdjustLrFn.MatchRmsAdamW,"
                f" found {self.adjust_lr_fn!r}"
            )

    def init(self) -> Muon:
        """A fresh optimizer (no state yet)."""
        return Muon(self)


@dataclasses.dataclass(frozen=True)
class MuonState:
    """Muon's state per parameter (Burn's ``MuonState``): the momentum velocity, ``[rows, cols]``."""

    velocity: FloatTensor


_HALF = (DType.F16, DType.BF16)


def _f32(value: float) -> float:
    """``value`` rounded to f32, the type Burn keeps Muon's coefficients, epsilon and penalty in."""
    rounded: float = struct.unpack("f", struct.pack("f", value))[0]
    return rounded


class Muon(Optimizer[MuonState]):
    """Muon; build it with ``MuonConfig(...).init()``. Steps 2-D parameters only.

    Example:
        >>> from ferrum.optim import GradientClippingConfig, MuonConfig
        >>> optim = MuonConfig().init().with_grad_clipping(GradientClippingConfig.Norm(1.0).init())
        >>> type(optim).__name__, optim.has_gradient_clipping()
        ('Muon', True)
    """

    def __init__(self, config: MuonConfig) -> None:
        super().__init__(None)
        self.config = config
        a, b, c = config.ns_coefficients
        self._coefficients = (_f32(a), _f32(b), _f32(c))
        self._epsilon = _f32(config.epsilon)
        decay = config.weight_decay
        self._penalty = None if decay is None else _f32(decay.penalty)

    def with_grad_clipping(self, clipping: GradientClipping | GradientClippingConfig) -> Self:
        """A copy of this optimizer (with its state) that clips each gradient before its update.

        Burn's ``OptimizerAdaptor::with_grad_clipping``; a ``GradientClippingConfig`` is initialised.
        """
        if isinstance(clipping, GradientClippingConfig):
            clipping = clipping.init()
        if not isinstance(clipping, GradientClipping):
            found = type(clipping).__name__
            raise TypeError(f"with_grad_clipping needs a GradientClipping, found {found}")
        new = copy.copy(self)
        new._grad_clipping = clipping
        new._states = dict(self._states)
        new._ranks = dict(self._ranks)
        return new

    def step(self, lr: float, module: M, grads: GradientsParams) -> M:
        """The module with every 2-D parameter that has a gradient in ``grads`` updated.

        Raises ``ShapeError`` (naming the parameter and its shape) when a parameter
        with a gradient is not 2-D; nothing is updated then.
        """
        if isinstance(module, Module) and isinstance(grads, GradientsParams):
            for path, param in module.named_parameters():
                shape = tuple(param.val().dims())
                if len(shape) != 2 and grads.get(param.id) is not None:
                    raise ShapeError(f"Muon: parameter '{path}' {_not_2d(shape)}")
        return super().step(lr, module, grads)

    def orthogonalize(self, update: FloatTensor) -> FloatTensor:
        """Newton-Schulz approximation of the nearest semi-orthogonal matrix to a 2-D ``update``.

        ``[rows, cols] -> [rows, cols]``; a zero matrix stays zero.

        Example:
            >>> from ferrum import Tensor
            >>> from ferrum.backend import NdArray
            >>> from ferrum.optim import MuonConfig
            >>> update = Tensor.from_data([[1.0, 0.5], [0.5, 1.0]], NdArray.device())
            >>> o = MuonConfig().init().orthogonalize(update)
            >>> gram = o.matmul(o.transpose()).to_data().to_list()  # close to the identity
            >>> round(gram[0][0], 2), round(gram[1][1], 2), round(gram[0][1], 2)
            (0.93, 0.93, -0.36)
        """
        dims = update.dims()
        if len(dims) != 2:
            raise ShapeError(f"Muon.orthogonalize: the update {_not_2d(tuple(dims))}")
        tall = dims[0] > dims[1]
        x = update.transpose() if tall else update
        norm = x.square().sum().sqrt().clamp_min(self._epsilon).unsqueeze(2)
        x = x.div(norm)
        a, b, c = self._coefficients
        for _ in range(self.config.ns_steps):
            gram = x.matmul(x.transpose())
            poly = gram.mul_scalar(b).add(gram.matmul(gram).mul_scalar(c))
            x = x.mul_scalar(a).add(poly.matmul(x))
        return x.transpose() if tall else x

    def record_schema(self, device: Device[Any]) -> dict[str, Any]:
        """What a bincode file of this optimizer's record holds, for ``recorder.load(..., schema)``.

        Example:
            >>> from ferrum.backend import NdArray
            >>> from ferrum.optim import MuonConfig
            >>> schema = MuonConfig().init().record_schema(NdArray.device())
            >>> sorted(schema[""]["V1"]["Rank2"]["momentum"])
            ['velocity']
        """
        template = self._state_to_record(MuonState(Tensor.zeros((1, 1), device)))
        return {"": {"V1": {f"Rank{rank}": template for rank in range(9)}}}

    def _update(
        self, lr: float, tensor: FloatTensor, grad: FloatTensor, state: MuonState | None
    ) -> tuple[FloatTensor, MuonState]:
        shape = tuple(tensor.dims())
        if len(shape) != 2:
            raise ShapeError(f"Muon: the parameter {_not_2d(shape)}")
        if tensor.device().is_autodiff:
            tensor = tensor.inner()
        # An f16 or bf16 parameter steps in f32 (the Newton-Schulz products and the
        # velocity, kept f32 between steps) and is rounded back once, as the fused updates do.
        dtype = tensor.dtype
        if dtype in _HALF:
            tensor, grad = tensor.cast(DType.F32), grad.cast(DType.F32)
        previous = None if state is None else state.velocity
        if previous is not None and previous.dtype in _HALF:
            previous = previous.cast(DType.F32)
        momentum = self.config.momentum
        if previous is None:
            velocity = grad
        else:
            velocity = grad.mul_scalar(1.0 - momentum.dampening).add(previous.mul_scalar(momentum.momentum))
        direction = velocity.mul_scalar(momentum.momentum).add(grad) if momentum.nesterov else velocity
        update = self.orthogonalize(direction)
        adjusted_lr = lr * self.config.adjust_lr_fn.adjustment_ratio(shape)
        if self._penalty is not None:
            tensor = tensor.mul_scalar(1.0 - lr * self._penalty)
        new = tensor.sub(update.mul_scalar(adjusted_lr))
        return (new.cast(dtype) if dtype in _HALF else new), MuonState(velocity)

    def _state_to_record(self, state: MuonState) -> dict[str, Any]:
        # Burn's MuonState { momentum: MomentumState { velocity } } (no Option around it).
        return {"momentum": {"velocity": state.velocity}}

    def _state_from_record(self, path: str, data: Mapping[str, Any]) -> MuonState:
        momentum = record.section(data, path, "momentum")
        return MuonState(record.tensor(momentum, f"{path}.momentum", "velocity"))


def _not_2d(shape: tuple[int, ...]) -> str:
    return (
        f"has shape {list(shape)} ({len(shape)}-D); Muon's Newton-Schulz orthogonalisation needs"
        " 2-D weight matrices (Burn panics here): train biases, norms, embeddings and kernels with"
        " another optimizer such as AdamW"
    )
