"""Resizing layers, as in Burn's ``burn::nn::interpolate``: ``Interpolate1d`` and ``Interpolate2d``.

The output size is given (``output_size``) or scaled from the input's
(``scale_factor``, rounded down; the resampling then depends on the sizes only,
as PyTorch's ``recompute_scale_factor=True``: PyTorch's default maps ``Nearest``'s
source index by ``1 / scale_factor`` instead). Modes: ``Nearest`` (source index
``floor(i * in / out)``), ``Linear`` and ``Cubic`` (corners aligned, as Burn's
CPU backend and PyTorch with ``align_corners=True``; cubic with ``a = -0.75``).
Backward runs in the engine for every mode.
"""

from __future__ import annotations

import enum
import math

import ferrum._ferrum as _ferrum
from ferrum._ferrum import ArgumentError, ShapeError, Tensor
from ferrum.config import config
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D3, D4

__all__ = ["Interpolate1d", "Interpolate1dConfig", "Interpolate2d", "Interpolate2dConfig", "InterpolateMode"]


class InterpolateMode(enum.Enum):
    """How ``Interpolate1d``/``Interpolate2d`` resample (Burn's ``InterpolateMode``)."""

    Nearest = "Nearest"
    Linear = "Linear"
    Cubic = "Cubic"


_ENGINE_MODE = {
    InterpolateMode.Nearest: "nearest",
    InterpolateMode.Linear: "bilinear",
    InterpolateMode.Cubic: "bicubic",
}


def _scaled(owner: str, size: int, factor: float) -> int:
    out = size * float(factor)
    if not math.isfinite(out) or out >= 2**63:
        raise ArgumentError(f"{owner}: scale factor {factor} is too large for a size of {size}")
    return int(out)


def _check_sizes(owner: str, output_size: object, scale_factor: object, length: int) -> None:
    if (output_size is None) == (scale_factor is None):
        raise ValueError(f"{owner}: give exactly one of output_size and scale_factor")
    sizes = output_size if isinstance(output_size, tuple) else (output_size,)
    factors = scale_factor if isinstance(scale_factor, tuple) else (scale_factor,)
    if output_size is not None and (
        len(sizes) != length
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in sizes)
    ):
        raise ValueError(f"{owner}.output_size must be {length} positive int(s), found {output_size!r}")
    if scale_factor is not None and (
        len(factors) != length
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in factors)
    ):
        raise ValueError(f"{owner}.scale_factor must be {length} positive number(s), found {scale_factor!r}")


@config
class Interpolate1dConfig:
    """Configuration of ``Interpolate1d`` (Burn's fields and defaults; give one of the sizes).

    Example:
        >>> from ferrum.nn.interpolate import Interpolate1dConfig
        >>> Interpolate1dConfig().with_scale_factor(2.0).init().scale_factor
        2.0
    """

    output_size: int | None = None
    scale_factor: float | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def init(self) -> Interpolate1d:
        """The layer (no parameters, so no device)."""
        _check_sizes("Interpolate1dConfig", self.output_size, self.scale_factor, 1)
        return Interpolate1d(self.output_size, self.scale_factor, self.mode)


class Interpolate1d(Stateless):
    """Resize ``[batch, channels, length]`` along the length.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.interpolate import Interpolate1dConfig
        >>> x = Tensor.from_floats([[[1.0, 2.0]]], NdArray.device())
        >>> Interpolate1dConfig(4).init().forward(x).to_data().to_list()
        [[[1.0, 1.0, 2.0, 2.0]]]
    """

    output_size: int | None
    scale_factor: float | None
    mode: InterpolateMode

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, channels, length] -> [batch, channels, length_out]``."""
        dims = x.dims()
        if len(dims) != 3:
            raise ShapeError(f"Interpolate1d.forward: expected [batch, channels, length], found {list(dims)}")
        b, c, n = dims
        size = (
            self.output_size
            if self.output_size is not None
            else _scaled("Interpolate1d", n, self.scale_factor or 0.0)
        )
        out: Tensor[B, D4] = _ferrum.interpolate(x.reshape((b, c, 1, n)), (1, size), _ENGINE_MODE[self.mode])
        return out.reshape((b, c, size))

    def _display_settings(self) -> list[tuple[str, object]]:
        return [("mode", self.mode), ("output_size", self.output_size), ("scale_factor", self.scale_factor)]


@config
class Interpolate2dConfig:
    """Configuration of ``Interpolate2d`` (Burn's fields and defaults; give one of the sizes).

    Example:
        >>> from ferrum.nn.interpolate import Interpolate2dConfig
        >>> Interpolate2dConfig((8, 8)).init().output_size
        (8, 8)
    """

    output_size: tuple[int, int] | None = None
    scale_factor: tuple[float, float] | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def init(self) -> Interpolate2d:
        """The layer (no parameters, so no device)."""
        _check_sizes("Interpolate2dConfig", self.output_size, self.scale_factor, 2)
        return Interpolate2d(self.output_size, self.scale_factor, self.mode)


class Interpolate2d(Stateless):
    """Resize ``[batch, channels, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.interpolate import Interpolate2dConfig
        >>> layer = Interpolate2dConfig(scale_factor=(2.0, 0.5)).init()
        >>> layer.forward(Tensor.ones((1, 3, 4, 4), NdArray.device())).dims()
        (1, 3, 8, 2)
    """

    output_size: tuple[int, int] | None
    scale_factor: tuple[float, float] | None
    mode: InterpolateMode

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """``[batch, channels, h, w] -> [batch, channels, h_out, w_out]``."""
        dims = x.dims()
        if len(dims) != 4:
            raise ShapeError(
                f"Interpolate2d.forward: expected [batch, channels, height, width], found {list(dims)}"
            )
        if self.output_size is not None:
            size = self.output_size
        else:
            fh, fw = self.scale_factor or (0.0, 0.0)
            size = (_scaled("Interpolate2d", dims[2], fh), _scaled("Interpolate2d", dims[3], fw))
        return _ferrum.interpolate(x, size, _ENGINE_MODE[self.mode])

    def _display_settings(self) -> list[tuple[str, object]]:
        return [("mode", self.mode), ("output_size", self.output_size), ("scale_factor", self.scale_factor)]
