"""Pooling layers, as in Burn's ``burn::nn::pool``: max, average and adaptive average, 1-d and 2-d.

Pools have no parameters, so their configs ``init()`` without a device.
Inputs are ``[batch, channels, length]`` or ``[batch, channels, height,
width]``; the stride defaults to the kernel size. Forward and backward run in
the engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, TypeAlias

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Int, Tensor
from ferrum.config import config
from ferrum.nn.conv_args import check_int, check_pair, check_same_kernel
from ferrum.nn.padding import PaddingConfig1d, PaddingConfig2d, padding_name
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D3, D4

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
]


class _Pool(Stateless):
    """A pool: its settings are its fields; a padding prints as its variant's name."""

    def _shown(self, value: object) -> object:
        return padding_name(value) if isinstance(value, (PaddingConfig1d, PaddingConfig2d)) else value


_WindowConfig: TypeAlias = "MaxPool1dConfig | MaxPool2dConfig | AvgPool1dConfig | AvgPool2dConfig"


def _check_window(config: _WindowConfig, check: Callable[[str, str, object], None]) -> None:
    """Check the kernel size and stride (``check_int`` in 1-d, ``check_pair`` in 2-d) and the padding;
    a stride of None becomes the kernel size, as Burn's ``new`` sets it (a file then always holds one)."""
    owner, kernel_size = type(config).__name__, config.kernel_size
    check(owner, "kernel_size", kernel_size)
    if config.stride is not None:
        check(owner, "stride", config.stride)
    kernel = kernel_size if isinstance(kernel_size, tuple) else (kernel_size,)
    check_same_kernel(owner, config.padding.kind, kernel)
    if config.stride is None:
        object.__setattr__(config, "stride", kernel_size)


@config
class MaxPool1dConfig:
    """Configuration of ``MaxPool1d``; ``stride`` None (the default) takes the kernel size.

    Example:
        >>> from ferrum.nn.pool import MaxPool1dConfig
        >>> MaxPool1dConfig(3).init().stride
        3
    """

    kernel_size: int
    stride: int | None = None
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    dilation: int = 1
    ceil_mode: bool = False

    def __post_init__(self) -> None:
        _check_window(self, check_int)
        check_int("MaxPool1dConfig", "dilation", self.dilation)

    def init(self) -> MaxPool1d:
        """The layer (it has no parameters, so no device)."""
        stride = self.kernel_size if self.stride is None else self.stride
        return MaxPool1d(self.kernel_size, stride, self.padding, self.dilation, self.ceil_mode)


class MaxPool1d(_Pool):
    """Max over windows of ``[batch, channels, length]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.pool import MaxPool1dConfig
        >>> x = Tensor.from_floats([[[1.0, 5.0, 2.0, 0.0]]], NdArray.device())
        >>> MaxPool1dConfig(2).init().forward(x).to_data().to_list()
        [[[5.0, 2.0]]]
    """

    kernel_size: int
    stride: int
    padding: PaddingConfig1d
    dilation: int
    ceil_mode: bool

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, channels, length] -> [batch, channels, length_out]``."""
        pad = self.padding.calculate_padding_1d(x.dims()[-1], self.kernel_size, self.stride)
        return _ferrum.max_pool1d(x, self.kernel_size, self.stride, pad, self.dilation, self.ceil_mode)

    def forward_with_indices(self, x: Tensor[B, D3]) -> tuple[Tensor[B, D3], Tensor[B, D3, Int]]:
        """``forward`` and the Int position of each maximum within its row (for unpooling)."""
        pad = self.padding.calculate_padding_1d(x.dims()[-1], self.kernel_size, self.stride)
        k, s = self.kernel_size, self.stride
        return _ferrum.max_pool1d_with_indices(x, k, s, pad, self.dilation, self.ceil_mode)


@config
class MaxPool2dConfig:
    """Configuration of ``MaxPool2d``; ``stride`` None (the default) takes the kernel size.

    Example:
        >>> from ferrum.nn.pool import MaxPool2dConfig
        >>> MaxPool2dConfig((2, 2)).with_stride((1, 1)).init().stride
        (1, 1)
        >>> MaxPool2dConfig((2, 2)).with_strides((1, 2)).stride  # Burn's name of the builder
        (1, 2)
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int] | None = None
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    dilation: tuple[int, int] = (1, 1)
    ceil_mode: bool = False

    # Burn's field is `strides`.
    __serde_rename__: ClassVar[dict[str, str]] = {"stride": "strides"}

    def __post_init__(self) -> None:
        _check_window(self, check_pair)
        check_pair("MaxPool2dConfig", "dilation", self.dilation)

    def with_strides(self, strides: tuple[int, int]) -> MaxPool2dConfig:
        """A copy with ``stride`` set to ``strides``: Burn's builder, named after Burn's field ``strides``."""
        return dataclasses.replace(self, stride=strides)

    def init(self) -> MaxPool2d:
        """The layer (it has no parameters, so no device)."""
        stride = self.kernel_size if self.stride is None else self.stride
        return MaxPool2d(self.kernel_size, stride, self.padding, self.dilation, self.ceil_mode)


class MaxPool2d(_Pool):
    """Max over windows of ``[batch, channels, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.pool import MaxPool2dConfig
        >>> pool = MaxPool2dConfig((2, 2)).with_stride((2, 2)).init()
        >>> pool.forward(Tensor.zeros((1, 3, 28, 28), NdArray.device())).dims()
        (1, 3, 14, 14)
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int]
    padding: PaddingConfig2d
    dilation: tuple[int, int]
    ceil_mode: bool

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """``[batch, channels, height, width] -> [batch, channels, height_out, width_out]``."""
        height, width = x.dims()[-2:]
        pad = self.padding.calculate_padding_2d(height, width, self.kernel_size, self.stride)
        return _ferrum.max_pool2d(x, self.kernel_size, self.stride, pad, self.dilation, self.ceil_mode)

    def forward_with_indices(self, x: Tensor[B, D4]) -> tuple[Tensor[B, D4], Tensor[B, D4, Int]]:
        """``forward`` and the Int position (``h * width + w``) of each maximum within its plane.

        Example:
            >>> from ferrum import Tensor
            >>> from ferrum.backend import NdArray
            >>> from ferrum.nn.pool import MaxPool2dConfig
            >>> x = Tensor.from_floats([[[[1.0, 5.0], [3.0, 2.0]]]], NdArray.device())
            >>> MaxPool2dConfig((2, 2)).init().forward_with_indices(x)[1].to_data().to_list()
            [[[[1]]]]
        """
        height, width = x.dims()[-2:]
        pad = self.padding.calculate_padding_2d(height, width, self.kernel_size, self.stride)
        k, s = self.kernel_size, self.stride
        return _ferrum.max_pool2d_with_indices(x, k, s, pad, self.dilation, self.ceil_mode)


@config
class AvgPool1dConfig:
    """Configuration of ``AvgPool1d``; ``stride`` None (the default) takes the kernel size.

    ``count_include_pad`` divides by the whole window, padding included;
    otherwise by the elements of the window inside the input.

    Example:
        >>> from ferrum.nn.pool import AvgPool1dConfig
        >>> AvgPool1dConfig(2).with_count_include_pad(False).init().count_include_pad
        False
    """

    kernel_size: int
    stride: int | None = None
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    def __post_init__(self) -> None:
        _check_window(self, check_int)

    def init(self) -> AvgPool1d:
        """The layer (it has no parameters, so no device)."""
        stride = self.kernel_size if self.stride is None else self.stride
        return AvgPool1d(self.kernel_size, stride, self.padding, self.count_include_pad, self.ceil_mode)


class AvgPool1d(_Pool):
    """Mean over windows of ``[batch, channels, length]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.pool import AvgPool1dConfig
        >>> x = Tensor.from_floats([[[1.0, 3.0, 5.0, 7.0]]], NdArray.device())
        >>> AvgPool1dConfig(2).init().forward(x).to_data().to_list()
        [[[2.0, 6.0]]]
    """

    kernel_size: int
    stride: int
    padding: PaddingConfig1d
    count_include_pad: bool
    ceil_mode: bool

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, channels, length] -> [batch, channels, length_out]``."""
        pad = self.padding.calculate_padding_1d(x.dims()[-1], self.kernel_size, self.stride)
        return _ferrum.avg_pool1d(
            x, self.kernel_size, self.stride, pad, self.count_include_pad, self.ceil_mode
        )


@config
class AvgPool2dConfig:
    """Configuration of ``AvgPool2d``; ``stride`` None (the default) takes the kernel size.

    Example:
        >>> from ferrum.nn import PaddingConfig2d
        >>> from ferrum.nn.pool import AvgPool2dConfig
        >>> AvgPool2dConfig((3, 3)).with_padding(PaddingConfig2d.Explicit(1, 1)).init().stride
        (3, 3)
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int] | None = None
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    # Burn's field is `strides`.
    __serde_rename__: ClassVar[dict[str, str]] = {"stride": "strides"}

    def __post_init__(self) -> None:
        _check_window(self, check_pair)

    def with_strides(self, strides: tuple[int, int]) -> AvgPool2dConfig:
        """A copy with ``stride`` set to ``strides``: Burn's builder, named after Burn's field ``strides``."""
        return dataclasses.replace(self, stride=strides)

    def init(self) -> AvgPool2d:
        """The layer (it has no parameters, so no device)."""
        stride = self.kernel_size if self.stride is None else self.stride
        return AvgPool2d(self.kernel_size, stride, self.padding, self.count_include_pad, self.ceil_mode)


class AvgPool2d(_Pool):
    """Mean over windows of ``[batch, channels, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.pool import AvgPool2dConfig
        >>> x = Tensor.from_floats([[[[1.0, 2.0], [3.0, 4.0]]]], NdArray.device())
        >>> AvgPool2dConfig((2, 2)).init().forward(x).to_data().to_list()
        [[[[2.5]]]]
    """

    kernel_size: tuple[int, int]
    stride: tuple[int, int]
    padding: PaddingConfig2d
    count_include_pad: bool
    ceil_mode: bool

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """``[batch, channels, height, width] -> [batch, channels, height_out, width_out]``."""
        height, width = x.dims()[-2:]
        pad = self.padding.calculate_padding_2d(height, width, self.kernel_size, self.stride)
        return _ferrum.avg_pool2d(
            x, self.kernel_size, self.stride, pad, self.count_include_pad, self.ceil_mode
        )


@config
class AdaptiveAvgPool1dConfig:
    """Configuration of ``AdaptiveAvgPool1d``: the output length.

    Example:
        >>> from ferrum.nn.pool import AdaptiveAvgPool1dConfig
        >>> AdaptiveAvgPool1dConfig(4).init().output_size
        4
    """

    output_size: int

    def __post_init__(self) -> None:
        check_int("AdaptiveAvgPool1dConfig", "output_size", self.output_size)

    def init(self) -> AdaptiveAvgPool1d:
        """The layer (it has no parameters, so no device)."""
        return AdaptiveAvgPool1d(self.output_size)


class AdaptiveAvgPool1d(_Pool):
    """Mean over ``output_size`` near-equal windows covering the length (PyTorch's split rule).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.pool import AdaptiveAvgPool1dConfig
        >>> x = Tensor.from_floats([[[1.0, 2.0, 3.0, 4.0, 5.0]]], NdArray.device())
        >>> AdaptiveAvgPool1dConfig(3).init().forward(x).to_data().to_list()
        [[[1.5, 3.0, 4.5]]]
    """

    output_size: int

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, channels, length] -> [batch, channels, output_size]``."""
        return _ferrum.adaptive_avg_pool1d(x, self.output_size)


@config
class AdaptiveAvgPool2dConfig:
    """Configuration of ``AdaptiveAvgPool2d``: the output ``(height, width)``.

    Example:
        >>> from ferrum.nn.pool import AdaptiveAvgPool2dConfig
        >>> AdaptiveAvgPool2dConfig((1, 1)).init().output_size
        (1, 1)
    """

    output_size: tuple[int, int]

    def __post_init__(self) -> None:
        check_pair("AdaptiveAvgPool2dConfig", "output_size", self.output_size)

    def init(self) -> AdaptiveAvgPool2d:
        """The layer (it has no parameters, so no device)."""
        return AdaptiveAvgPool2d(self.output_size)


class AdaptiveAvgPool2d(_Pool):
    """Mean over an ``output_size`` grid of near-equal windows: global average pooling at ``(1, 1)``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.pool import AdaptiveAvgPool2dConfig
        >>> x = Tensor.from_floats([[[[1.0, 2.0], [3.0, 4.0]]]], NdArray.device())
        >>> AdaptiveAvgPool2dConfig((1, 1)).init().forward(x).to_data().to_list()
        [[[[2.5]]]]
    """

    output_size: tuple[int, int]

    def forward(self, x: Tensor[B, D4]) -> Tensor[B, D4]:
        """``[batch, channels, height, width] -> [batch, channels, *output_size]``."""
        return _ferrum.adaptive_avg_pool2d(x, self.output_size)

