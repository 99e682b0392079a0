"""``GateController``: one gate of a recurrent cell, two Linears (Burn's record layout).

A gate computes ``input_transform(x) + hidden_transform(h)``; ``Lstm`` and
``Gru`` hold one controller per gate, so their records are Burn's.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import GateController, Initializer
    >>> device = NdArray.device()
    >>> gate = GateController.new(3, 2, True, Initializer.Ones, device)
    >>> gate.gate_product(Tensor.ones((1, 3), device), Tensor.ones((1, 2), device)).to_data().to_list()
    [[7.0, 7.0]]
"""

from __future__ import annotations

from ferrum._ferrum import Device, Tensor
from ferrum.module import Module
from ferrum.nn.initializer import Initializer
from ferrum.nn.linear import Linear, LinearConfig
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1, D2

__all__ = ["GateController"]


class GateController(Module[B]):
    """The two affine maps of a gate: of the input (``[d_input, d_output]``) and of the hidden state.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import GateController, Initializer
        >>> GateController.new(4, 8, False, Initializer.Zeros, NdArray.device()).num_params()
        96
    """

    input_transform: Linear[B]
    hidden_transform: Linear[B]

    @staticmethod
    def new(
        d_input: int, d_output: int, bias: bool, initializer: Initializer, device: Device[B]
    ) -> GateController[B]:
        """A gate of ``d_output`` units over an input of ``d_input`` features
        (Burn's ``GateController::new``)."""
        return GateController(
            input_transform=LinearConfig(d_input, d_output, bias, initializer).init(device),
            hidden_transform=LinearConfig(d_output, d_output, bias, initializer).init(device),
        )

    def gate_product(self, input: Tensor[B, D2], hidden: Tensor[B, D2]) -> Tensor[B, D2]:
        """``x @ W_x + b_x + h @ W_h + b_h``: ``[batch, d_input], [batch, d_output] -> [batch, d_output]``."""
        return self.input_transform.forward(input) + self.hidden_transform.forward(hidden)

    def biases(self) -> tuple[Tensor[B, D1] | None, Tensor[B, D1] | None]:
        """The input and hidden biases (None without bias)."""
        bx, bh = self.input_transform.bias, self.hidden_transform.bias
        return (None if bx is None else bx.val()), (None if bh is None else bh.val())
