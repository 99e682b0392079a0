"""3-d convolutions, as in Burn's ``burn::nn::conv``: ``Conv3d`` and ``ConvTranspose3d``.

Inputs are ``[batch, channels, depth, height, width]``; weights use Burn's
layouts, ``[channels_out, channels_in / groups, kd, kh, kw]`` for a
convolution and ``[channels_in, channels_out / groups, kd, kh, kw]`` for a
transposed one. Forward and backward run in the engine (vol2col + GEMM).
"""

from __future__ import annotations

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device, ShapeError, Tensor
from ferrum.config import config
from ferrum.nn import conv_build as cb
from ferrum.nn.conv_args import check_groups, check_pair, check_same_kernel, check_triple
from ferrum.nn.initializer import Initializer
from ferrum.nn.padding import PaddingConfig3d
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D5

__all__ = ["Conv3d", "Conv3dConfig", "ConvTranspose3d", "ConvTranspose3dConfig"]


Triple = tuple[int, int, int]


def _check_config(config: Conv3dConfig | ConvTranspose3dConfig) -> None:
    """The checks both 3-d configs make: channels, kernel size, stride, dilation and groups."""
    owner, channels = type(config).__name__, config.channels
    check_pair(owner, "channels", channels)
    for name in ("kernel_size", "stride", "dilation"):
        check_triple(owner, name, getattr(config, name))
    check_groups(owner, channels[0], channels[1], config.groups)


def _check_input(owner: str, x: Tensor[B, D5], channels: int) -> None:
    dims = x.dims()
    if len(dims) != 5 or dims[1] != channels:
        raise ShapeError(
            f"{owner}.forward: expected [batch, channels_in={channels}, depth, height, width],"
            f" found {list(dims)}"
        )


@config
class Conv3dConfig:
    """Configuration of ``Conv3d``: ``channels`` is ``(in, out)`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import Conv3dConfig
        >>> Conv3dConfig((2, 4), (3, 3, 3)).init(NdArray.device()).num_params()
        220
    """

    channels: tuple[int, int]
    kernel_size: Triple
    stride: Triple = (1, 1, 1)
    dilation: Triple = (1, 1, 1)
    groups: int = 1
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        _check_config(self)
        check_same_kernel("Conv3dConfig", self.padding.kind, self.kernel_size)

    def init(self, device: Device[B]) -> Conv3d[B]:
        """A new layer on ``device``."""
        return cb.build_plain(Conv3d, self, self.channels, self.kernel_size, device)


class Conv3d(cb.PlainConv[B, D5, Triple, PaddingConfig3d]):
    """3-d convolution over ``[batch, channels_in, depth, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import Conv3dConfig
        >>> conv = Conv3dConfig((1, 1), (2, 2, 2)).with_stride((2, 2, 2)).init(NdArray.device())
        >>> conv.forward(Tensor.zeros((1, 1, 4, 4, 4), NdArray.device())).dims()
        (1, 1, 2, 2, 2)
    """

    def forward(self, x: Tensor[B, D5]) -> Tensor[B, D5]:
        """``[batch, channels_in, d, h, w] -> [batch, channels_out, d_out, h_out, w_out]``."""
        _check_input("Conv3d", x, self.weight.shape()[1] * self.groups)
        _, _, d, h, w = x.dims()
        pad = self.padding.calculate_padding_3d(d, h, w, self.kernel_size, self.stride)
        return _ferrum.conv3d(x, *cb.conv_args(self, pad))


@config
class ConvTranspose3dConfig:
    """Configuration of ``ConvTranspose3d``: ``channels`` is ``(in, out)`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import ConvTranspose3dConfig
        >>> ConvTranspose3dConfig((4, 2), (2, 2, 2)).init(NdArray.device()).weight.shape()
        (4, 2, 2, 2, 2)
    """

    channels: tuple[int, int]
    kernel_size: Triple
    stride: Triple = (1, 1, 1)
    dilation: Triple = (1, 1, 1)
    groups: int = 1
    padding: Triple = (0, 0, 0)
    padding_out: Triple = (0, 0, 0)
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        _check_config(self)
        for name in ("padding", "padding_out"):
            check_triple("ConvTranspose3dConfig", name, getattr(self, name), minimum=0)

    def init(self, device: Device[B]) -> ConvTranspose3d[B]:
        """A new layer on ``device`` (Burn draws it with the fan-in only)."""
        return cb.build_transposed(
            ConvTranspose3d, self, self.channels, self.kernel_size, device, "channels", fan_out=False
        )


class ConvTranspose3d(cb.TransposedConv[B, D5, Triple]):
    """3-d transposed convolution over ``[batch, channels_in, depth, height, width]``.

    Each output size is ``(n - 1) * stride - 2 * padding + dilation * (k - 1) + padding_out + 1``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import ConvTranspose3dConfig
        >>> up = ConvTranspose3dConfig((2, 1), (2, 2, 2)).with_stride((2, 2, 2)).init(NdArray.device())
        >>> up.forward(Tensor.zeros((1, 2, 3, 3, 3), NdArray.device())).dims()
        (1, 1, 6, 6, 6)
    """

    channels: tuple[int, int]

    def forward(self, x: Tensor[B, D5]) -> Tensor[B, D5]:
        """``[batch, channels_in, d, h, w] -> [batch, channels_out, d_out, h_out, w_out]``."""
        _check_input("ConvTranspose3d", x, self.weight.shape()[0])
        return _ferrum.conv_transpose3d(x, *cb.transposed_args(self))

    def _display_settings(self) -> list[tuple[str, object]]:
        # The config's channels, as Burn prints them (the weight holds out / groups).
        return [("channels", self.channels), *cb.transpose_settings(self)[1:]]
