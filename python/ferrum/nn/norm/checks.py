"""Input checks shared by the normalization layers: messages name the layer, the expected and the found shape.

Their config fields are checked with ``ferrum.config.checks``.
"""

from __future__ import annotations

from typing import Any

from ferrum._ferrum import ShapeError, Tensor

__all__ = ["check_channels", "check_last_dim", "feature_shape"]


def check_channels(layer: str, x: Tensor[Any, Any, Any], channels: int) -> None:
    """``x`` must be ``[batch, channels, ...]``."""
    dims = x.dims()
    if len(dims) < 2 or dims[1] != channels:
        expected = f"input of shape [batch, {channels}, ...]"
        raise ShapeError(f"{layer}.forward: expected {expected}, found {list(dims)}")


def check_last_dim(layer: str, x: Tensor[Any, Any, Any], size: int) -> None:
    """``x`` must be ``[..., size]``."""
    dims = x.dims()
    if not dims or dims[-1] != size:
        raise ShapeError(f"{layer}.forward: expected input of shape [..., {size}], found {list(dims)}")


def feature_shape(rank: int, channels: int) -> tuple[int, ...]:
    """``[1, channels, 1, ...]``: per-channel values broadcast over an input of ``rank``."""
    return (1, channels) + (1,) * (rank - 2)
