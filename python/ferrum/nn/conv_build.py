"""What every convolution layer shares: Burn's default initializer, the parameters a config draws,
the settings the layer hands on and prints, and the call of a transposed kernel.

Example:
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.conv import Conv2d, Conv2dConfig
    >>> from ferrum.nn.conv_build import build_layer, plain_layout
    >>> config = Conv2dConfig((2, 4), (3, 3))
    >>> plain_layout((2, 4), 1, (3, 3))
    ((4, 2, 3, 3), (18, 36))
    >>> build_layer(Conv2d, config, (4, 2, 3, 3), (18, 36), 4, NdArray.device()).weight.shape()
    (4, 2, 3, 3)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from ferrum._ferrum import Device, Tensor
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.padding import padding_name
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1, Rank

L = TypeVar("L")
R = TypeVar("R", bound=Rank)
S = TypeVar("S")
P = TypeVar("P")

# Burn's default for every convolution: Kaiming uniform with gain 1/sqrt(3) over the fan-in.
KAIMING = Initializer.KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)

#: The fields every convolution layer copies from its config; transposed ones add ``padding_out``.
_LAYER_FIELDS = ("stride", "kernel_size", "dilation", "groups", "padding")


class ConvConfig(Protocol):
    """What ``build_layer`` reads from any convolution config (1d to 3d, plain or transposed) by name;
    the settings it copies (``_LAYER_FIELDS`` and the extras) are read with ``getattr``."""

    @property
    def initializer(self) -> Initializer:
        """Draws the weight and the bias."""
        ...

    @property
    def bias(self) -> bool:
        """Whether the layer has a bias."""
        ...

    @property
    def groups(self) -> int:
        """The channel groups."""
        ...


class ConvLayer(Module[B], Generic[B, R, S]):
    """The fields every convolution layer starts with: its weight (of rank ``R``), bias, and the
    stride, kernel size and dilation (``S``: an int in 1-d, a tuple of ints otherwise) and groups."""

    weight: Param[Tensor[B, R]]
    bias: Param[Tensor[B, D1]] | None
    stride: S
    kernel_size: S
    dilation: S
    groups: int


class PlainConv(ConvLayer[B, R, S], Generic[B, R, S, P]):
    """A convolution (not transposed): its ``padding`` is a ``PaddingConfig*d`` (``P``); it prints
    its channels, read from the weight, and settings."""

    padding: P

    def _display_settings(self) -> list[tuple[str, object]]:
        return conv_settings(self)


class TransposedConv(ConvLayer[B, R, S]):
    """A transposed convolution: explicit ``padding`` and ``padding_out`` per dimension."""

    padding: S
    padding_out: S

    def _display_settings(self) -> list[tuple[str, object]]:
        return transpose_settings(self)


def bias_val(bias: Param[Tensor[B, D1]] | None) -> Tensor[B, D1] | None:
    """The bias tensor, or None for a layer without one."""
    return None if bias is None else bias.val()


def plain_layout(
    channels: tuple[int, int], groups: int, kernel: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, int]]:
    """A convolution's weight shape ``[out, in / groups, *kernel]`` and its ``(fan_in, fan_out)``."""
    (c_in, c_out), k = channels, math.prod(kernel)
    return (c_out, c_in // groups, *kernel), (c_in // groups * k, c_out // groups * k)


def transposed_layout(
    channels: tuple[int, int], groups: int, kernel: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, int]]:
    """A transposed convolution's weight shape ``[in, out / groups, *kernel]`` and its
    ``(fan_in, fan_out)``: the fans of the convolution it transposes, swapped."""
    (c_in, c_out), k = channels, math.prod(kernel)
    return (c_in, c_out // groups, *kernel), (c_out // groups * k, c_in // groups * k)


def draw_params(
    initializer: Initializer,
    bias: bool,
    weight_shape: tuple[int, ...],
    fans: tuple[int, int | None],
    channels_out: int,
    device: Device[B],
) -> tuple[Param[Tensor[B, Any]], Param[Tensor[B, D1]] | None]:
    """The weight ``weight_shape`` and, with ``bias``, a bias ``[channels_out]``, both drawn from
    ``initializer`` over the same ``(fan_in, fan_out)``, as Burn draws them."""
    fan_in, fan_out = fans
    weight = initializer.init_with(weight_shape, fan_in, fan_out, device)
    return weight, initializer.init_with((channels_out,), fan_in, fan_out, device) if bias else None


def build_plain(
    layer: Callable[..., L],
    config: ConvConfig,
    channels: tuple[int, int],
    kernel: tuple[int, ...],
    device: Device[B],
) -> L:
    """A convolution ``layer`` from ``config``, its weight laid out by ``plain_layout``."""
    shape, fans = plain_layout(channels, config.groups, kernel)
    return build_layer(layer, config, shape, fans, channels[1], device)


def build_transposed(
    layer: Callable[..., L],
    config: ConvConfig,
    channels: tuple[int, int],
    kernel: tuple[int, ...],
    device: Device[B],
    *extra: str,
    fan_out: bool = True,
) -> L:
    """A transposed convolution ``layer`` from ``config`` (with ``padding_out`` and the ``extra``
    fields), its weight laid out by ``transposed_layout``; ``fan_out=False`` draws it over the
    fan-in alone, as Burn's 3-d transposed convolution does."""
    shape, (fan_in, fan_out_size) = transposed_layout(channels, config.groups, kernel)
    fans = (fan_in, fan_out_size if fan_out else None)
    return build_layer(layer, config, shape, fans, channels[1], device, "padding_out", *extra)


def build_layer(
    layer: Callable[..., L],
    config: ConvConfig,
    weight_shape: tuple[int, ...],
    fans: tuple[int, int | None],
    channels_out: int,
    device: Device[B],
    *extra: str,
) -> L:
    """``layer`` built from ``config``: weight ``weight_shape`` and bias ``[channels_out]`` drawn from
    one initializer over the same ``(fan_in, fan_out)`` (as Burn), then the config's stride, kernel
    size, dilation, groups, padding and the ``extra`` fields."""
    weight, bias = draw_params(config.initializer, config.bias, weight_shape, fans, channels_out, device)
    fields = {name: getattr(config, name) for name in (*_LAYER_FIELDS, *extra)}
    return layer(weight=weight, bias=bias, **fields)


def _common_settings(layer: ConvLayer[Any, Any, Any]) -> list[tuple[str, object]]:
    return [
        ("stride", layer.stride),
        ("kernel_size", layer.kernel_size),
        ("dilation", layer.dilation),
        ("groups", layer.groups),
    ]


def conv_settings(layer: PlainConv[Any, Any, Any, Any]) -> list[tuple[str, object]]:
    """A convolution's printed settings, its channels read from the weight ``[out, in / groups, ...]``."""
    ch_out, ch_in_group = layer.weight.shape()[:2]
    channels: list[tuple[str, object]] = [("ch_in", ch_in_group * layer.groups), ("ch_out", ch_out)]
    return [*channels, *_common_settings(layer), ("padding", padding_name(layer.padding))]


def transpose_settings(layer: TransposedConv[Any, Any, Any]) -> list[tuple[str, object]]:
    """A transposed convolution's printed settings, channels from the weight ``[in, out / groups, ...]``."""
    ch_in, ch_out_group = layer.weight.shape()[:2]
    channels: tuple[int, int] = (ch_in, ch_out_group * layer.groups)
    return [
        ("channels", channels),
        *_common_settings(layer),
        ("padding", layer.padding),
        ("padding_out", layer.padding_out),
    ]


def conv_args(layer: PlainConv[Any, Any, Any, Any], padding: object) -> tuple[Any, ...]:
    """What an engine ``conv*d`` takes after the input: ``layer``'s weights and settings with ``padding``."""
    return (layer.weight.val(), bias_val(layer.bias), layer.stride, padding, layer.dilation, layer.groups)


def transposed_args(layer: TransposedConv[Any, Any, Any]) -> tuple[Any, ...]:
    """What an engine ``conv_transpose*d`` takes after the input: ``layer``'s weights and settings."""
    return (
        layer.weight.val(),
        bias_val(layer.bias),
        layer.stride,
        layer.padding,
        layer.padding_out,
        layer.dilation,
        layer.groups,
    )
