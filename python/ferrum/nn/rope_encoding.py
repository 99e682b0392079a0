"""``RotaryEncoding`` (RoPE), as in Burn: rotates each feature pair by an angle that grows with the position.

For ``x`` of ``[..., seq, d_model]``, the pair ``(x[2i], x[2i+1])`` at position
``p`` becomes ``(x[2i] cos a - x[2i+1] sin a, x[2i] sin a + x[2i+1] cos a)``
with ``a = p * theta^(-2i / d_model)``. Frequencies can be rescaled at init
(``init_with_frequency_scaling``) and the positions shifted for long
generation (``shift``).

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import RotaryEncodingConfig
    >>> device = NdArray.device()
    >>> rope = RotaryEncodingConfig(10, 4).init(device)
    >>> x = Tensor.from_floats([[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]], device)
    >>> [round(v, 4) for v in rope.forward(x).to_data().to_list()[0][1]]
    [-2.3473, 7.4492, 6.9197, 8.0696]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ferrum._ferrum import Device, Float, Int, ShapeError, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1, D3

__all__ = ["RotaryEncoding", "RotaryEncodingConfig"]


@config
class RotaryEncodingConfig:
    """Configuration of ``RotaryEncoding`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.nn import RotaryEncodingConfig
        >>> RotaryEncodingConfig(64, 8).theta
        10000.0
    """

    max_sequence_length: int
    d_model: int
    theta: float = 10000.0

    def __post_init__(self) -> None:
        check_positive_ints(
            "RotaryEncodingConfig", max_sequence_length=self.max_sequence_length, d_model=self.d_model
        )
        if self.d_model % 2:
            raise ValueError(f"RotaryEncodingConfig.d_model must be even, found {self.d_model}")
        if isinstance(self.theta, bool) or not isinstance(self.theta, (int, float)) or not self.theta > 0:
            raise ValueError(f"RotaryEncodingConfig.theta must be positive, found {self.theta!r}")

    def init(self, device: Device[B]) -> RotaryEncoding[B]:
        """The encoding on ``device``, with the frequencies ``theta^(-2i / d_model)``."""
        return self.init_with_frequency_scaling(lambda t: t, device)

    def init_with_frequency_scaling(
        self, scaling: Callable[[Tensor[B, D1, Float]], Tensor[B, D1, Float]], device: Device[B]
    ) -> RotaryEncoding[B]:
        """The encoding with ``scaling`` applied to the ``[d_model / 2]`` frequencies (e.g. for
        context extension), as Burn's ``init_with_frequency_scaling``."""
        exponent: Tensor[B, D1, Int] = Tensor.arange_step(0, self.d_model, 2, device)
        base = (
            ((exponent.float() / float(self.d_model)) * float(np.log(np.float32(self.theta)))).exp().recip()
        )
        theta = scaling(base)
        if theta.dims() != (self.d_model // 2,):
            raise ShapeError(
                f"RotaryEncodingConfig: the frequency scaling must keep the shape [{self.d_model // 2}],"
                f" found {list(theta.dims())}"
            )
        return RotaryEncoding(_frequencies(0, self.max_sequence_length, theta), theta, 0)


def _frequencies(start: int, end: int, theta: Tensor[B, D1, Float]) -> Tensor[B, D3]:
    """Burn's ``freq_complex`` ``[positions, d_model, 2]``: ``(cos, sin)`` of each pair's angle, for both
    features of the pair."""
    half = theta.dims()[0]
    positions = np.arange(start, end, dtype=np.float64)[:, None]
    angles = positions * theta.to_numpy().astype(np.float64)[None, :]
    table = np.stack([np.cos(angles), np.sin(angles)], axis=-1)  # [p, half, 2]
    table = np.repeat(table, 2, axis=1).reshape(end - start, 2 * half, 2)
    return Tensor.from_numpy(table, theta.device(), dtype=theta.dtype)


class RotaryEncoding(Module[B]):
    """Rotary position encoding of ``[..., seq, d_model]``; ``forward(x)`` is ``apply(x, 0)``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import RotaryEncodingConfig
        >>> RotaryEncodingConfig(16, 4).init(NdArray.device())
        RotaryEncoding {d_model: 4, max_sequence_length: 16}
    """

    freq_complex: Tensor[B, D3]
    theta: Tensor[B, D1]
    start_offset: int

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``x`` rotated as positions ``0..seq``."""
        return self.apply(x, 0)

    def apply(self, x: Tensor[B, D, Float], start: int) -> Tensor[B, D, Float]:
        """``x`` (``[..., seq, d_model]``, rank >= 2) rotated as positions ``start..start + seq``
        (relative to ``start_offset``)."""
        dims = x.dims()
        positions, d_model, _ = self.freq_complex.dims()
        if len(dims) < 2 or dims[-1] != d_model:
            raise ShapeError(f"RotaryEncoding: expected [..., seq, d_model={d_model}], found {list(dims)}")
        seq = dims[-2]
        if isinstance(start, bool) or not isinstance(start, int) or start < 0 or start + seq > positions:
            raise ShapeError(
                f"RotaryEncoding: positions {start}..{start + seq} are outside the {positions}"
                " the encoding holds"
            )
        table = self.freq_complex.narrow(0, start, seq)
        if table.device() != x.device() or table.dtype != x.dtype:
            table = Tensor.from_numpy(table.to_numpy(), x.device(), dtype=x.dtype)
        lead = (1,) * (len(dims) - 2)
        cos = table.narrow(2, 0, 1).reshape((*lead, seq, d_model))
        sin = table.narrow(2, 1, 1).reshape((*lead, seq, d_model))
        # rot(x) pairs (x0, x1) -> (-x1, x0)
        pairs = x.reshape((*dims[:-1], d_model // 2, 2))
        rot = Tensor.cat([-pairs.narrow(-1, 1, 1), pairs.narrow(-1, 0, 1)], -1).reshape(dims)
        out: Tensor[B, D, Float] = x * cos + rot * sin
        return out

    def shift(self, start: int) -> RotaryEncoding[B]:
        """The encoding with its window of positions moved to begin at ``start`` (which must grow),
        for generation past ``max_sequence_length``; Burn shifts in place, this returns a copy."""
        if isinstance(start, bool) or not isinstance(start, int) or start <= self.start_offset:
            raise ValueError(
                "RotaryEncoding.shift: the start must grow past the current offset"
                f" {self.start_offset}, found {start!r}"
            )
        positions = self.freq_complex.dims()[0]
        return dataclasses.replace(
            self, freq_complex=_frequencies(start, start + positions, self.theta), start_offset=start
        )

    def _display_settings(self) -> list[tuple[str, object]]:
        positions, d_model, _ = self.freq_complex.dims()
        return [("d_model", d_model), ("max_sequence_length", positions)]
