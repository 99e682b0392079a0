"""``PositionWiseFeedForward``: ``linear_outer(dropout(gelu(linear_inner(x))))``, as in Burn."""

from __future__ import annotations

from ferrum._ferrum import Device, Float, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module
from ferrum.nn.activation import Gelu
from ferrum.nn.attention.mha import KAIMING
from ferrum.nn.dropout import Dropout, DropoutConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig
from ferrum.nn.type_vars import B, D

__all__ = ["PositionWiseFeedForward", "PositionWiseFeedForwardConfig"]


@config
class PositionWiseFeedForwardConfig:
    """Configuration of ``PositionWiseFeedForward`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import PositionWiseFeedForwardConfig
        >>> PositionWiseFeedForwardConfig(2, 4).init(NdArray.device()).num_params()
        22
    """

    d_model: int
    d_ff: int
    dropout: float = 0.1
    initializer: Initializer = KAIMING

    def __post_init__(self) -> None:
        check_positive_ints("PositionWiseFeedForwardConfig", d_model=self.d_model, d_ff=self.d_ff)

    def init(self, device: Device[B]) -> PositionWiseFeedForward[B]:
        """A new layer on ``device``."""
        return PositionWiseFeedForward(
            linear_inner=LinearConfig(self.d_model, self.d_ff, initializer=self.initializer).init(device),
            linear_outer=LinearConfig(self.d_ff, self.d_model, initializer=self.initializer).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            gelu=Gelu(),
        )


class PositionWiseFeedForward(Module[B]):
    """Two Linears with a GELU between them, applied to every position alike:
    ``[..., d_model] -> [..., d_model]``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.transformer import PositionWiseFeedForwardConfig
        >>> device = NdArray.device()
        >>> ffn = PositionWiseFeedForwardConfig(3, 5).init(device)
        >>> ffn
        PositionWiseFeedForward {d_model: 3, d_ff: 5, prob: 0.1, params: 38}
        >>> ffn.forward(Tensor.ones((2, 4, 3), device)).dims()
        (2, 4, 3)
    """

    linear_inner: Linear[B]
    linear_outer: Linear[B]
    dropout: Dropout
    gelu: Gelu

    def forward(self, x: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """``[..., d_model] -> [..., d_model]``."""
        return self.linear_outer.forward(
            self.dropout.forward(self.gelu.forward(self.linear_inner.forward(x)))
        )

    def _display_settings(self) -> list[tuple[str, object]]:
        d_model, d_ff = self.linear_inner.weight.shape()
        return [("d_model", d_model), ("d_ff", d_ff), ("prob", self.dropout.prob)]
