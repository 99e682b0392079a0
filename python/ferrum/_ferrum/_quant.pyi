"""Quantized tensors."""

import builtins
from typing import Any, Generic, final

from ferrum._ferrum._device import Device
from ferrum._ferrum._kind import Float, Int
from ferrum._ferrum._tensor import Tensor
from ferrum._ferrum._types import _D, B, D
from ferrum.quantization.scheme import QuantScheme
from ferrum.tensor.rank import D1, D2, D4

@final
class QTensor(Generic[B, D]):
    def dims(self) -> tuple[builtins.int, ...]: ...
    def rank(self) -> builtins.int: ...
    def num_elements(self) -> builtins.int: ...
    def scheme(self) -> QuantScheme: ...
    def device(self) -> Device[B]: ...
    def nbytes(self) -> builtins.int: ...
    def dequantize(self) -> Tensor[B, D, Float]: ...
    def values(self) -> Tensor[B, D, Int]: ...
    def scales(self) -> Tensor[B, Any, Float]: ...
    def has_int8_product(self) -> builtins.bool: ...
    def linear(self: QTensor[B, D2], x: Tensor[B, _D, Float], bias: Tensor[B, D1, Float] | None = None) -> Tensor[B, _D, Float]: ...
    def has_int8_conv(self, groups: builtins.int = 1) -> builtins.bool: ...
    def conv2d(
        self: QTensor[B, D4],
        x: Tensor[B, D4, Float],
        bias: Tensor[B, D1, Float] | None = None,
        stride: tuple[builtins.int, builtins.int] = ...,
        padding: tuple[builtins.int | tuple[builtins.int, builtins.int], builtins.int | tuple[builtins.int, builtins.int]] = ...,
        dilation: tuple[builtins.int, builtins.int] = ...,
        groups: builtins.int = 1,
    ) -> Tensor[B, D4, Float]: ...

@final
class Int8Matrix:
    @staticmethod
    def pack(values: Tensor[Any, D2, Int], zero: list[builtins.int]) -> Int8Matrix | None: ...
    def dims(self) -> tuple[builtins.int, builtins.int]: ...
    def matmul(self, a: Tensor[B, _D, Int], a_zero: list[builtins.int]) -> Tensor[B, _D, Int] | None: ...
    def dynamic_linear(
        self,
        x: Tensor[B, _D, Float],
        w_scale: list[builtins.float],
        bias: Tensor[Any, D1, Float] | None,
        relu: builtins.bool,
    ) -> Tensor[B, _D, Float] | None: ...

@final
class Int8Conv:
    @staticmethod
    def pack(w: Tensor[Any, D4, Int], zero: list[builtins.int], groups: builtins.int) -> Int8Conv | None: ...
    def dims(self) -> tuple[builtins.int, builtins.int, builtins.int, builtins.int]: ...
    def conv(
        self,
        x: Tensor[B, D4, Int],
        x_zero: builtins.int,
        strides: tuple[builtins.int, builtins.int],
        pads: tuple[builtins.int, builtins.int, builtins.int, builtins.int],
        dilations: tuple[builtins.int, builtins.int],
    ) -> Tensor[B, D4, Int] | None: ...
    def qlinear(
        self,
        x: Tensor[B, D4, Int],
        x_zero: builtins.int,
        strides: tuple[builtins.int, builtins.int],
        pads: tuple[builtins.int, builtins.int, builtins.int, builtins.int],
        dilations: tuple[builtins.int, builtins.int],
        scale: list[builtins.float],
        bias: list[builtins.int] | None,
        y_zero: builtins.int,
        lo: builtins.int,
        hi: builtins.int,
    ) -> Tensor[B, D4, Int] | None: ...

def dynamic_quantize_u8(x: Tensor[B, _D, Float]) -> tuple[Tensor[B, _D, Int], builtins.float, builtins.int] | None: ...
def int8_conv2d(
    x: Tensor[B, D4, Int],
    x_zero: builtins.int,
    w: Tensor[Any, D4, Int],
    w_zero: list[builtins.int],
    strides: tuple[builtins.int, builtins.int],
    pads: tuple[builtins.int, builtins.int, builtins.int, builtins.int],
    dilations: tuple[builtins.int, builtins.int],
    groups: builtins.int,
) -> Tensor[B, D4, Int] | None: ...
