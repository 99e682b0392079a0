"""Convolutions, as in Burn's ``burn::nn::conv``: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
(and, from their own files, Conv3d, ConvTranspose3d and DeformConv2d).

Inputs are ``[batch, channels, length]`` (1-d) or ``[batch, channels, height,
width]`` (2-d). Weights use Burn's layouts: ``[channels_out, channels_in /
groups, kernel...]`` for a convolution, ``[channels_in, channels_out / groups,
kernel...]`` for a transposed one; the bias is ``[channels_out]``. The work,
forward and backward, runs in the engine (im2col + GEMM).
"""

from __future__ import annotations

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device, Tensor
from ferrum.config import config
from ferrum.nn import conv_build as cb
from ferrum.nn.conv_args import check_groups, check_int, check_pair, check_same_kernel
from ferrum.nn.initializer import Initializer
from ferrum.nn.padding import PaddingConfig1d, PaddingConfig2d
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D3, D4

__all__ = [
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "Conv3d",
    "Conv3dConfig",
    "ConvTranspose1d",
    "ConvTranspose1dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "ConvTranspose3d",
    "ConvTranspose3dConfig",
    "DeformConv2d",
    "DeformConv2dConfig",
]


@config
class Conv1dConfig:
    """Configuration of ``Conv1d`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import Conv1dConfig
        >>> Conv1dConfig(4, 6, 3).with_groups(2).init(NdArray.device()).weight.shape()
        (6, 2, 3)
    """

    channels_in: int
    channels_out: int
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        owner = "Conv1dConfig"
        for name in ("channels_in", "channels_out", "kernel_size", "stride", "dilation"):
            check_int(owner, name, getattr(self, name))
        check_groups(owner, self.channels_in, self.channels_out, self.groups)
        check_same_kernel(owner, self.padding.kind, (self.kernel_size,))

    def init(self, device: Device[B]) -> Conv1d[B]:
        """A new layer on ``device``."""
        channels = (self.channels_in, self.channels_out)
        return cb.build_plain(Conv1d, self, channels, (self.kernel_size,), device)


class Conv1d(cb.PlainConv[B, D3, int, PaddingConfig1d]):
    """1-d convolution over ``[batch, channels_in, length]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Initializer
        >>> from ferrum.nn.conv import Conv1dConfig
        >>> device = NdArray.device()
        >>> conv = Conv1dConfig(1, 1, 2).with_initializer(Initializer.Ones).init(device)
        >>> conv.forward(Tensor.from_floats([[[1.0, 2.0, 3.0]]], device)).to_data().to_list()
        [[[4.0, 6.0]]]
    """

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, channels_in, length] -> [batch, channels_out, length_out]``."""
        length = x.dims()[-1]
        pad = self.padding.calculate_padding_1d(length, self.kernel_size, self.stride)
        return _ferrum.conv1d(x, *cb.conv_args(self, pad))


@config
class Conv2dConfig:
    """Configuration of ``Conv2d``: ``channels`` is ``(in, out)`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import Conv2dConfig
        >>> Conv2dConfig((3, 16), (5, 5)).init(NdArray.device()).num_params()
        1216
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        owner = "Conv2dConfig"
        for name in ("channels", "kernel_size", "stride", "dilation"):
            check_pair(owner, name, getattr(self, name))
        check_groups(owner, self.channels[0], self.channels[1], self.groups)
        check_same_kernel(owner, self.padding.kind, self.kernel_size)

    def init(self, device: Device[B]) -> Conv2d[B]:
        """A new layer on ``device``."""
        return cb.build_plain(Conv2d, self, self.channels, self.kernel_size, device)


class Conv2d(cb.PlainConv[B, D4, tuple[int, int], PaddingConfig2d]):
    """2-d convolution over ``[batch, channels_in, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import Conv2dConfig
        >>> device = NdArray.device()
        >>> conv = Conv2dConfig((3, 4), (3, 3)).with_stride((2, 2)).init(device)
        >>> conv.forward(Tensor.zeros((1, 3, 9, 9), device)).dims()
        (1, 4, 4, 4)
    """

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """``[batch, channels_in, height, width] -> [batch, channels_out, height_out, width_out]``.

        After ``quantize_weights`` with 8-bit values and one scale (and one
        group), the convolution runs on int8, each receptive field quantized
        at each call.
        """
        height, width = x.dims()[-2:]
        pad = self.padding.calculate_padding_2d(height, width, self.kernel_size, self.stride)
        quantized = self.weight.quantized()
        if quantized is not None and quantized.has_int8_conv(self.groups):
            return quantized.conv2d(x, cb.bias_val(self.bias), self.stride, pad, self.dilation, self.groups)
        return _ferrum.conv2d(x, *cb.conv_args(self, pad))


@config
class ConvTranspose1dConfig:
    """Configuration of ``ConvTranspose1d``: ``channels`` is ``(in, out)`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import ConvTranspose1dConfig
        >>> ConvTranspose1dConfig((4, 2), 3).init(NdArray.device()).weight.shape()
        (4, 2, 3)
    """

    channels: tuple[int, int]
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: int = 0
    padding_out: int = 0
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        owner = "ConvTranspose1dConfig"
        check_pair(owner, "channels", self.channels)
        for name in ("kernel_size", "stride", "dilation"):
            check_int(owner, name, getattr(self, name))
        for name in ("padding", "padding_out"):
            check_int(owner, name, getattr(self, name), minimum=0)
        check_groups(owner, self.channels[0], self.channels[1], self.groups)

    def init(self, device: Device[B]) -> ConvTranspose1d[B]:
        """A new layer on ``device``."""
        return cb.build_transposed(ConvTranspose1d, self, self.channels, (self.kernel_size,), device)


class ConvTranspose1d(cb.TransposedConv[B, D3, int]):
    """1-d transposed convolution over ``[batch, channels_in, length]``.

    The output length is
    ``(length - 1) * stride - 2 * padding + dilation * (kernel_size - 1) + padding_out + 1``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import ConvTranspose1dConfig
        >>> device = NdArray.device()
        >>> up = ConvTranspose1dConfig((2, 2), 2).with_stride(2).init(device)
        >>> up.forward(Tensor.zeros((1, 2, 5), device)).dims()
        (1, 2, 10)
    """

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, channels_in, length] -> [batch, channels_out, length_out]``."""
        return _ferrum.conv_transpose1d(x, *cb.transposed_args(self))


@config
class ConvTranspose2dConfig:
    """Configuration of ``ConvTranspose2d``: ``channels`` is ``(in, out)`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import ConvTranspose2dConfig
        >>> ConvTranspose2dConfig((8, 4), (2, 2)).with_groups(2).init(NdArray.device()).weight.shape()
        (8, 2, 2, 2)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    padding: tuple[int, int] = (0, 0)
    padding_out: tuple[int, int] = (0, 0)
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        owner = "ConvTranspose2dConfig"
        for name in ("channels", "kernel_size", "stride", "dilation"):
            check_pair(owner, name, getattr(self, name))
        for name in ("padding", "padding_out"):
            check_pair(owner, name, getattr(self, name), minimum=0)
        check_groups(owner, self.channels[0], self.channels[1], self.groups)

    def init(self, device: Device[B]) -> ConvTranspose2d[B]:
        """A new layer on ``device``."""
        return cb.build_transposed(ConvTranspose2d, self, self.channels, self.kernel_size, device)


class ConvTranspose2d(cb.TransposedConv[B, D4, tuple[int, int]]):
    """2-d transposed convolution over ``[batch, channels_in, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import ConvTranspose2dConfig
        >>> device = NdArray.device()
        >>> up = ConvTranspose2dConfig((4, 2), (3, 3)).with_stride((2, 2)).with_padding((1, 1)).init(device)
        >>> up.forward(Tensor.zeros((1, 4, 7, 7), device)).dims()
        (1, 2, 13, 13)
    """

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """``[batch, channels_in, height, width] -> [batch, channels_out, height_out, width_out]``."""
        return _ferrum.conv_transpose2d(x, *cb.transposed_args(self))


# Burn's `burn::nn::conv` also holds the 3-d and deformable convolutions (their own files here).
from ferrum.nn.conv3d import Conv3d, Conv3dConfig, ConvTranspose3d, ConvTranspose3dConfig  # noqa: E402
from ferrum.nn.deform_conv import DeformConv2d, DeformConv2dConfig  # noqa: E402
