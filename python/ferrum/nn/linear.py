"""``Linear``: ``y = x @ W + b`` with Burn's weight layout ``[d_input, d_output]``.

``LinearConfig.layout`` is Burn's ``LinearLayout``: ``Row`` (the default)
saves the weight as it is, ``Col`` saves it transposed, ``[d_output,
d_input]`` (PyTorch's layout), and transposes it back on loading; in memory
the weight is ``[d_input, d_output]`` either way.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from ferrum._ferrum import Device, Float, ShapeError, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module, Param
from ferrum.nn.initializer import Initializer
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1, D2

__all__ = ["Linear", "LinearConfig", "LinearLayout"]


class LinearLayout(enum.Enum):
    """How records hold a ``Linear`` weight: ``Row`` as ``[d_input, d_output]``, ``Col`` transposed.

    In memory the weight is ``[d_input, d_output]`` either way.

    Example:
        >>> from ferrum.backend import NdArray
        >>> layer = LinearConfig(3, 2).with_layout(LinearLayout.Col).init(NdArray.device())
        >>> layer.weight.val().dims()
        (3, 2)
    """

    Row = "Row"
    Col = "Col"


@config
class LinearConfig:
    """Configuration of a ``Linear`` layer (Burn's defaults: bias on, Kaiming uniform with gain 1/sqrt(3)).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> LinearConfig(4, 8).with_bias(False).init(NdArray.device()).num_params()
        32
    """

    d_input: int
    d_output: int
    bias: bool = True
    initializer: Initializer = Initializer.KaimingUniform(gain=1.0 / math.sqrt(3.0), fan_out_only=False)
    layout: LinearLayout = LinearLayout.Row

    def __post_init__(self) -> None:
        check_positive_ints("LinearConfig", d_input=self.d_input, d_output=self.d_output)
        if not isinstance(self.layout, LinearLayout):
            raise ValueError(f"LinearConfig.layout must be LinearLayout.Row or .Col, found {self.layout!r}")

    def init(self, device: Device[B]) -> Linear[B]:
        """A new layer on ``device`` (its backend is the device's)."""
        fans = (self.d_input, self.d_output)
        if self.layout == LinearLayout.Row:
            weight = self.initializer.init_with((self.d_input, self.d_output), *fans, device)
        else:
            # Burn draws the [d_output, d_input] matrix (fans in that order) and transposes it.
            shape = (self.d_output, self.d_input)
            drawn = self.initializer.tensor(shape, self.d_output, self.d_input, device)
            weight = Param(drawn.transpose(), save_mapper=_transposed, load_mapper=_transposed)
        bias = self.initializer.init_with((self.d_output,), *fans, device) if self.bias else None
        return Linear(weight=weight, bias=bias)


def _transposed(weight: Tensor[B, D2]) -> Tensor[B, D2]:
    return weight.transpose()


class Linear(Module[B]):
    """Applies ``x @ weight + bias`` over the last dimension of an input of any rank.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Initializer, LinearConfig
        >>> device = NdArray.device()
        >>> layer = LinearConfig(2, 1).with_initializer(Initializer.Ones).init(device)
        >>> layer.forward(Tensor.from_floats([[1.0, 2.0]], device)).to_data().to_list()
        [[4.0]]
    """

    weight: Param[Tensor[B, D2]]
    bias: Param[Tensor[B, D1]] | None

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[..., d_input] -> [..., d_output]``.

        After ``quantize_weights`` with 8-bit values and one scale, the product
        runs on int8 (the input quantized per row at each call).
        """
        quantized = self.weight.quantized()
        if quantized is not None and quantized.has_int8_product():
            bias = None if self.bias is None else self.bias.val()
            try:
                return quantized.linear(x, bias)
            except ShapeError as err:
                raise ShapeError(f"Linear.forward: {err}") from None
        weight = self.weight.val()
        d_input, d_output = weight.dims()
        dims = x.dims()
        if not dims or dims[-1] != d_input:
            raise ShapeError(f"Linear.forward: expected input of shape [..., {d_input}], found {list(dims)}")
        rank = len(dims)
        if rank == 1:
            out: Tensor[B, Any, Float] = (x.reshape((1, d_input)) @ weight).reshape((d_output,))
        elif rank == 2:
            out = x @ weight  # type: ignore[operator]
        else:
            out = x @ weight.reshape((1,) * (rank - 2) + (d_input, d_output))
        if self.bias is not None:
            out = out + self.bias.val().reshape((1,) * (rank - 1) + (d_output,))
        return out

    def _display_settings(self) -> list[tuple[str, object]]:
        d_input, d_output = self.weight.shape()
        return [("d_input", d_input), ("d_output", d_output), ("bias", self.bias is not None)]
