"""``Unfold4d``: the sliding blocks of an image as columns, as Burn's ``burn::nn::Unfold4d``
(torch's ``nn.Unfold``).

``[batch, channels, height, width] -> [batch, channels * kh * kw, blocks]``,
channel-major; the engine computes it as a convolution's im2col, and its
gradient (overlapping blocks add up) as col2im.
"""

from __future__ import annotations

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Tensor
from ferrum.config import config
from ferrum.nn.conv_args import check_pair
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D3, D4

__all__ = ["Unfold4d", "Unfold4dConfig"]


@config
class Unfold4dConfig:
    """Configuration of ``Unfold4d`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.nn import Unfold4dConfig
        >>> Unfold4dConfig((3, 3)).init()
        Unfold4d {kernel_size: [3, 3], stride: [1, 1], dilation: [1, 1], padding: [0, 0]}
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        for name in ("kernel_size", "stride", "dilation"):
            check_pair("Unfold4dConfig", name, getattr(self, name))
        check_pair("Unfold4dConfig", "padding", self.padding, minimum=0)

    def init(self) -> Unfold4d:
        """The layer (no parameters, so no device)."""
        return Unfold4d(self.kernel_size, self.stride, self.dilation, self.padding)


class Unfold4d(Stateless):
    """The ``kernel_size`` blocks of ``[batch, channels, h, w]`` as
    ``[batch, channels * kh * kw, blocks]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Unfold4dConfig
        >>> blocks = Unfold4dConfig((2, 2)).with_stride((2, 2)).init()  # 2x2 blocks that do not overlap
        >>> blocks.forward(Tensor.ones((1, 1, 4, 6), NdArray.device())).dims()
        (1, 4, 6)
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int]

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D3]:
        """``[batch, channels, h, w] -> [batch, channels * kh * kw, blocks]``."""
        return _ferrum.unfold4d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def _display_settings(self) -> list[tuple[str, object]]:
        return [
            ("kernel_size", list(self.kernel_size)),
            ("stride", list(self.stride)),
            ("dilation", list(self.dilation)),
            ("padding", list(self.padding)),
        ]
