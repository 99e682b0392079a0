"""Gradient clipping (Burn's ``GradientClippingConfig``): by value or by L2 norm.

An optimizer configured with clipping clips each parameter's gradient before
its update: ``Value(t)`` clamps every element into ``[-t, t]``; ``Norm(n)``
scales the gradient so its L2 norm is at most ``n``. ``clip_grad_norm``
clips a whole set of gradients by their joint (global) norm instead.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.optim import GradientClippingConfig
    >>> clip = GradientClippingConfig.Norm(1.0).init()
    >>> clip.clip_gradient(Tensor.from_data([3.0, 4.0], NdArray.device())).to_data().to_list()
    [0.6000000238418579, 0.800000011920929]
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_number
from ferrum.config.serde import SerdeEnum, Variant
from ferrum.optim.grads import GradientsParams
from ferrum.tensor.type_vars import B, D

__all__ = [
    "GradientClipping",
    "GradientClippingConfig",
    "GradientClippingKind",
    "clip_grad_norm",
    "init_clipping",
]


GradientClippingKind = Literal["Value", "Norm"]


@config
class GradientClippingConfig:
    """Clipping of gradients: ``GradientClippingConfig.Value(threshold)`` or ``.Norm(max_norm)``.

    Example:
        >>> from ferrum.optim import AdamConfig, GradientClippingConfig
        >>> AdamConfig().with_grad_clipping(GradientClippingConfig.Value(0.5)).grad_clipping
        GradientClippingConfig.Value(0.5)
    """

    kind: GradientClippingKind
    threshold: float

    # Burn's enum GradientClippingConfig { Value(f32), Norm(f32) }.
    __serde_enum__: ClassVar[SerdeEnum] = SerdeEnum(
        "kind", {"Value": Variant.newtype("threshold"), "Norm": Variant.newtype("threshold")}
    )

    def __post_init__(self) -> None:
        if self.kind not in ("Value", "Norm"):
            raise ValueError(f"GradientClippingConfig.kind: expected Value or Norm, found {self.kind!r}")
        check_number("GradientClippingConfig", "threshold", self.threshold, low=0.0)

    @staticmethod
    def Value(threshold: float) -> GradientClippingConfig:
        """Clamp every gradient element into ``[-threshold, threshold]``."""
        return GradientClippingConfig("Value", threshold)

    @staticmethod
    def Norm(max_norm: float) -> GradientClippingConfig:
        """Scale each gradient so its L2 norm is at most ``max_norm``."""
        return GradientClippingConfig("Norm", max_norm)

    def init(self) -> GradientClipping:
        """The clipping this config describes."""
        return GradientClipping(self.kind, float(self.threshold))

    def __repr__(self) -> str:
        return f"GradientClippingConfig.{self.kind}({self.threshold})"


def init_clipping(config: GradientClippingConfig | None) -> GradientClipping | None:
    """The clipping an optimizer config asks for, ``None`` when it has none.

    Example:
        >>> init_clipping(GradientClippingConfig.Value(0.5)), init_clipping(None)
        (GradientClipping.Value(0.5), None)
    """
    return config.init() if config is not None else None


class GradientClipping:
    """Clips one gradient tensor at a time (one fused engine pass).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.optim import GradientClipping
        >>> grad = Tensor.from_data([-2.0, 0.5], NdArray.device())
        >>> GradientClipping("Value", 1.0).clip_gradient(grad).to_data().to_list()
        [-1.0, 0.5]
    """

    __slots__ = ("kind", "threshold")

    def __init__(self, kind: GradientClippingKind, threshold: float) -> None:
        if kind not in ("Value", "Norm"):
            raise ValueError(f"GradientClipping: kind must be Value or Norm, found {kind!r}")
        self.kind: GradientClippingKind = kind
        self.threshold = check_number("GradientClipping", "threshold", threshold, low=0.0)

    def clip_gradient(self, grad: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """The clipped gradient."""
        if self.kind == "Value":
            return _ferrum.clip_by_value(grad, self.threshold)
        clipped: Any = _ferrum.clip_by_norm([grad], self.threshold)[0]
        return clipped  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"GradientClipping.{self.kind}({self.threshold})"


def clip_grad_norm(grads: GradientsParams, max_norm: float) -> GradientsParams:
    """All gradients scaled together so their joint L2 norm is at most ``max_norm``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.module import ParamId
        >>> from ferrum.optim import GradientsParams, clip_grad_norm
        >>> grads = GradientsParams()
        >>> a, b = ParamId.new(), ParamId.new()
        >>> grads.register(a, Tensor.from_data([3.0], NdArray.device()))
        >>> grads.register(b, Tensor.from_data([4.0], NdArray.device()))
        >>> clip_grad_norm(grads, 1.0).get(b).to_data().to_list()
        [0.800000011920929]
    """
    threshold = check_number("clip_grad_norm", "max_norm", max_norm, low=0.0)
    items = list(grads)
    clipped = _ferrum.clip_by_norm([tensor for _, tensor in items], threshold)
    out = GradientsParams()
    for (id, _), tensor in zip(items, clipped, strict=True):
        out.register(id, tensor)
    return out
