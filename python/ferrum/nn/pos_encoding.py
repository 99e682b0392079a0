"""``PositionalEncoding``: adds sinusoids to a sequence of embeddings, as in Burn (and the paper).

Position ``p`` and feature pair ``(2k, 2k+1)`` get ``sin(p / max_timescale^(2k/d))``
and ``cos(...)``. The sinusoids are computed once, in f32 as Burn does, for up
to ``max_sequence_size`` positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, ShapeError, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_int, check_positive_ints
from ferrum.module import Module
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D2, D3

__all__ = ["PositionalEncoding", "PositionalEncodingConfig", "generate_sinusoids"]


def _sinusoid_values(length: int, d_model: int, max_timescale: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    if d_model % 2:
        raise ValueError(f"generate_sinusoids: d_model must be even, found {d_model}")
    if max_timescale < length:
        raise ValueError(
            f"generate_sinusoids: max_timescale ({max_timescale}) must be at least the length ({length})"
        )
    increment = np.float32(-np.log(np.float32(max_timescale))) / np.float32(d_model)
    div = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * increment)
    angles = np.arange(length, dtype=np.float32)[:, None] * div[None, :]
    out = np.empty((length, d_model), dtype=np.float32)
    out[:, 0::2] = np.sin(angles)
    out[:, 1::2] = np.cos(angles)
    return out


def generate_sinusoids(length: int, d_model: int, max_timescale: int, device: Device[B]) -> Tensor[B, D2]:
    """``[length, d_model]``: the sine at even features and cosine at odd ones, of each position.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import generate_sinusoids
        >>> generate_sinusoids(3, 2, 10, NdArray.device()).to_data().to_list()[0]
        [0.0, 1.0]
    """
    return Tensor.from_numpy(_sinusoid_values(length, d_model, max_timescale), device)


@config
class PositionalEncodingConfig:
    """Configuration of ``PositionalEncoding`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.nn import PositionalEncodingConfig
        >>> PositionalEncodingConfig(16).max_sequence_size
        5000
    """

    d_model: int
    max_sequence_size: int = 5000
    max_timescale: int = 10000

    def __post_init__(self) -> None:
        owner = "PositionalEncodingConfig"
        check_positive_ints(owner, d_model=self.d_model, max_sequence_size=self.max_sequence_size)
        check_positive_int(owner, "max_timescale", self.max_timescale)
        if self.d_model % 2:
            raise ValueError(f"PositionalEncodingConfig.d_model must be even, found {self.d_model}")
        if self.max_timescale < self.max_sequence_size:
            raise ValueError(
                f"PositionalEncodingConfig: max_timescale ({self.max_timescale}) must be at least"
                f" max_sequence_size ({self.max_sequence_size})"
            )

    def init(self, device: Device[B]) -> PositionalEncoding[B]:
        """The layer on ``device``: its sinusoids are a constant, not a parameter."""
        values = _sinusoid_values(self.max_sequence_size, self.d_model, self.max_timescale)
        sinusoids: Tensor[B, D3] = Tensor.from_numpy(values[None], device)
        return PositionalEncoding(sinusoids, self.max_sequence_size, self.max_timescale)


class PositionalEncoding(Module[B]):
    """``x + sinusoids[:seq]`` for ``x`` of ``[batch, seq, d_model]``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import PositionalEncodingConfig
        >>> PositionalEncodingConfig(6).with_max_sequence_size(8).init(NdArray.device())
        PositionalEncoding {d_model: 6, max_sequence_size: 8, max_timescale: 10000}
    """

    sinusoids: Tensor[B, D3]
    max_sequence_size: int
    max_timescale: int

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, seq, d_model] -> [batch, seq, d_model]``; ``seq`` at most ``max_sequence_size``."""
        _, max_seq, d_model = self.sinusoids.dims()
        dims = x.dims()
        if len(dims) != 3 or dims[2] != d_model:
            raise ShapeError(
                f"PositionalEncoding.forward: expected [batch, seq, {d_model}], found {list(dims)}"
            )
        if dims[1] > max_seq:
            raise ShapeError(
                f"PositionalEncoding.forward: the sequence has {dims[1]} positions, more than"
                f" max_sequence_size ({max_seq})"
            )
        table = self.sinusoids.narrow(1, 0, dims[1])
        if table.device() != x.device() or table.dtype != x.dtype:
            # A constant stays where init put it: follow the input (after valid(), to_device, f64).
            table = Tensor.from_numpy(table.to_numpy(), x.device(), dtype=x.dtype)
        return x + table

    def _display_settings(self) -> list[tuple[str, object]]:
        return [
            ("d_model", self.sinusoids.dims()[2]),
            ("max_sequence_size", self.max_sequence_size),
            ("max_timescale", self.max_timescale),
        ]
