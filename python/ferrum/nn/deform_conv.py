"""``DeformConv2d``: deformable 2-d convolution (v2, with an optional modulation mask), as in Burn.

Each kernel tap reads the input at its regular position plus a learned
offset, by bilinear interpolation (zero outside the image). ``forward(x,
offset, mask)`` takes the offsets ``[batch, 2 * offset_groups * kh * kw,
out_h, out_w]`` as ``(dy, dx)`` pairs ordered (group, ky, kx), and the mask
``[batch, offset_groups * kh * kw, out_h, out_w]`` or None; the layouts are
torchvision's.
"""

from __future__ import annotations

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device, Tensor
from ferrum.config import config
from ferrum.module import Module, Param
from ferrum.nn import conv_build as cb
from ferrum.nn.conv_args import check_groups, check_int, check_pair, check_same_kernel
from ferrum.nn.initializer import Initializer
from ferrum.nn.padding import PaddingConfig2d, padding_name
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1, D4

__all__ = ["DeformConv2d", "DeformConv2dConfig"]


@config
class DeformConv2dConfig:
    """Configuration of ``DeformConv2d``: ``channels`` is ``(in, out)`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.conv import DeformConv2dConfig
        >>> DeformConv2dConfig((4, 2), (3, 3)).with_weight_groups(2).init(NdArray.device()).weight.shape()
        (2, 2, 3, 3)
    """

    channels: tuple[int, int]
    kernel_size: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    weight_groups: int = 1
    offset_groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    bias: bool = True
    initializer: Initializer = cb.KAIMING

    def __post_init__(self) -> None:
        owner = "DeformConv2dConfig"
        for name in ("channels", "kernel_size", "stride", "dilation"):
            check_pair(owner, name, getattr(self, name))
        check_groups(owner, self.channels[0], self.channels[1], self.weight_groups)
        check_int(owner, "offset_groups", self.offset_groups)
        if self.channels[0] % self.offset_groups:
            raise ValueError(
                f"{owner}.offset_groups ({self.offset_groups}) must divide channels_in ({self.channels[0]})"
            )
        check_same_kernel(owner, self.padding.kind, self.kernel_size)

    def init(self, device: Device[B]) -> DeformConv2d[B]:
        """A new layer on ``device``."""
        shape, fans = cb.plain_layout(self.channels, self.weight_groups, self.kernel_size)
        weight, bias = cb.draw_params(self.initializer, self.bias, shape, fans, self.channels[1], device)
        return DeformConv2d(
            weight,
            bias,
            self.stride,
            self.kernel_size,
            self.dilation,
            self.weight_groups,
            self.offset_groups,
            self.padding,
        )


class DeformConv2d(Module[B]):
    """Deformable convolution over ``[batch, channels_in, height, width]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Initializer
        >>> from ferrum.nn.conv import DeformConv2dConfig
        >>> device = NdArray.device()
        >>> conv = DeformConv2dConfig((1, 1), (1, 1)).with_initializer(Initializer.Ones).init(device)
        >>> x = Tensor.from_floats([[[[1.0, 2.0], [3.0, 4.0]]]], device)
        >>> shift = Tensor.from_floats([[[[0.0, 0.0], [0.0, 0.0]], [[0.5, 0.5], [0.5, 0.5]]]], device)
        >>> conv.forward(x, shift, None).to_data().to_list()  # half a pixel right, plus the bias 1
        [[[[2.5, 2.0], [4.5, 3.0]]]]
    """

    weight: Param[Tensor[B, D4]]
    bias: Param[Tensor[B, D1]] | None
    stride: tuple[int, int]
    kernel_size: tuple[int, int]
    dilation: tuple[int, int]
    weight_groups: int
    offset_groups: int
    padding: PaddingConfig2d

    def forward(
        self, x: Tensor[B, D4], offset: Tensor[B, D4], mask: Tensor[B, D4] | None = None
    ) -> Tensor[B, D4]:
        """``[batch, channels_in, h, w]`` with offsets (and mask)
        ``-> [batch, channels_out, h_out, w_out]``."""
        height, width = x.dims()[-2:]
        pad = self.padding.calculate_padding_2d(height, width, self.kernel_size, self.stride)
        return _ferrum.deform_conv2d(
            x,
            offset,
            self.weight.val(),
            mask,
            cb.bias_val(self.bias),
            self.stride,
            pad,
            self.dilation,
            self.weight_groups,
            self.offset_groups,
        )

    def _display_settings(self) -> list[tuple[str, object]]:
        return [
            ("stride", self.stride),
            ("kernel_size", self.kernel_size),
            ("dilation", self.dilation),
            ("weight_groups", self.weight_groups),
            ("offset_groups", self.offset_groups),
            ("padding", padding_name(self.padding)),
        ]
