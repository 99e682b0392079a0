"""model.rs: ``LstmCell``, ``StackedLstm`` and ``LstmNetwork``, with their configs.

The cell, for input ``x_t`` and state ``(h_{t-1}, c_{t-1})``::

    i, f, g, o = chunks of norm_x(W_ih x_t) + W_hh h_{t-1}   (input, forget, candidate, output)
    c_t = norm_c(sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g))
    h_t = dropout(norm_h(sigmoid(o) * tanh(c_t)))

One matrix computes the four gates of the input and one those of the hidden
state (four small products would cost more). Layer norm, not batch norm:
the statistics of an LSTM's activations change from step to step.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Device, Tensor, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import (
    Dropout,
    DropoutConfig,
    Initializer,
    LayerNorm,
    LayerNormConfig,
    Linear,
    LinearConfig,
    LstmState,
    Sigmoid,
    Tanh,
)

B = TypeVar("B", bound=Backend)


class LstmCell(Module[B]):
    hidden_size: int
    weight_ih: Linear[B]  # [input_size, 4 * hidden_size]: the gates i, f, g, o of the input
    weight_hh: Linear[B]  # [hidden_size, 4 * hidden_size]: those of the previous hidden state
    norm_x: LayerNorm[B]  # over the gates' pre-activations from the input
    norm_h: LayerNorm[B]  # over the hidden state
    norm_c: LayerNorm[B]  # over the cell state
    dropout: Dropout

    def forward(self, x: Tensor[B, D2], state: LstmState[B, D2]) -> LstmState[B, D2]:
        """One step: ``x`` ``[batch, input_size]``, the state's tensors ``[batch, hidden_size]``."""
        gates = self.norm_x.forward(self.weight_ih.forward(x)) + self.weight_hh.forward(state.hidden)
        i_gate, f_gate, g_gate, o_gate = gates.chunk(4, 1)
        sigmoid, tanh = Sigmoid(), Tanh()
        c_t = sigmoid.forward(f_gate) * state.cell + sigmoid.forward(i_gate) * tanh.forward(g_gate)
        c_t = self.norm_c.forward(c_t)
        h_t = self.norm_h.forward(sigmoid.forward(o_gate) * tanh.forward(c_t))
        return LstmState(c_t, self.dropout.forward(h_t))

    def init_state(self, batch_size: int, device: Device[B]) -> LstmState[B, D2]:
        """Zero cell and hidden states."""
        zeros: Tensor[B, D2] = Tensor.zeros((batch_size, self.hidden_size), device)
        return LstmState(zeros, zeros)


def forget_bias_one(layer: Linear[B], hidden_size: int) -> Linear[B]:
    """The layer with the forget gate's bias (the second quarter) set to 1, so that the cell keeps its
    state at the start of training."""
    if layer.bias is None:
        raise ValueError("forget_bias_one: the layer has no bias")
    bias = layer.bias.map(
        lambda b: b.slice_assign([(hidden_size, 2 * hidden_size)], Tensor.ones((hidden_size,), b.device()))
    )
    return Linear(weight=layer.weight, bias=bias)


@config
class LstmCellConfig:
    input_size: int
    hidden_size: int
    dropout: float

    def init(self, device: Device[B]) -> LstmCell[B]:
        """Xavier-normal weights (Burn's example would take orthogonal ones, which Burn lacks), forget
        bias 1."""
        h, initializer = self.hidden_size, Initializer.XavierNormal(gain=1.0)
        weight_ih = LinearConfig(self.input_size, 4 * h, initializer=initializer).init(device)
        weight_hh = LinearConfig(h, 4 * h, initializer=initializer).init(device)
        return LstmCell(
            hidden_size=h,
            weight_ih=forget_bias_one(weight_ih, h),
            weight_hh=forget_bias_one(weight_hh, h),
            norm_x=LayerNormConfig(4 * h).init(device),
            norm_h=LayerNormConfig(h).init(device),
            norm_c=LayerNormConfig(h).init(device),
            dropout=DropoutConfig(self.dropout).init(),
        )


class StackedLstm(Module[B]):
    """Cells one above the other: each step's output of a layer is the next layer's input."""

    layers: list[LstmCell[B]]

    def forward(
        self, x: Tensor[B, D3], states: list[LstmState[B, D2]] | None = None
    ) -> tuple[Tensor[B, D3], list[LstmState[B, D2]]]:
        """``x`` ``[batch, seq_length, input_size]`` to the top layer's hidden states
        ``[batch, seq_length, hidden_size]`` and each layer's last state (zeros when ``states`` is None)."""
        batch_size, seq_length, _ = x.dims()
        if states is None:
            states = [layer.init_state(batch_size, x.device()) for layer in self.layers]
        states = list(states)
        outputs = []
        for t in range(seq_length):
            input_t = x.narrow(1, t, 1).squeeze_dim(1)
            for i, cell in enumerate(self.layers):
                states[i] = cell.forward(input_t, states[i])
                input_t = states[i].hidden
            outputs.append(input_t)
        return Tensor.stack(outputs, 1), states


@config
class StackedLstmConfig:
    input_size: int
    hidden_size: int
    num_layers: int
    dropout: float

    def init(self, device: Device[B]) -> StackedLstm[B]:
        """``num_layers`` cells; the last without dropout."""
        layers = []
        for i in range(self.num_layers):
            input_size = self.input_size if i == 0 else self.hidden_size
            dropout = self.dropout if i < self.num_layers - 1 else 0.0
            layers.append(LstmCellConfig(input_size, self.hidden_size, dropout).init(device))
        return StackedLstm(layers=layers)


class LstmNetwork(Module[B]):
    """A stacked LSTM, optionally a second one reading the sequence backwards, and a linear head on the
    last step's hidden states (both directions' concatenated)."""

    stacked_lstm: StackedLstm[B]
    reverse_lstm: StackedLstm[B] | None
    dropout: Dropout
    fc: Linear[B]

    def forward(self, x: Tensor[B, D3], states: list[LstmState[B, D2]] | None = None) -> Tensor[B, D2]:
        """``x`` ``[batch, seq_length, input_size]`` to ``[batch, output_size]``.

        Example:
            >>> from ferrum import Tensor
            >>> from ferrum.backend import NdArray
            >>> device = NdArray.device()
            >>> model = LstmNetworkConfig(hidden_size=4, num_layers=2).init(device)
            >>> model.forward(Tensor.zeros((3, 5, 1), device)).dims()
            (3, 1)
        """
        seq_length = x.dims()[1]
        output, _ = self.stacked_lstm.forward(x, states)
        if self.reverse_lstm is not None:
            reverse_output, _ = self.reverse_lstm.forward(x.flip([1]), None)
            # Flipped back, so that step t of both directions lines up.
            output = Tensor.cat([output, reverse_output.flip([1])], 2)
        output = self.dropout.forward(output)
        return self.fc.forward(output.narrow(1, seq_length - 1, 1).squeeze_dim(1))


@config
class LstmNetworkConfig:
    input_size: int = 1  # one number per step
    hidden_size: int = 32
    num_layers: int = 2
    output_size: int = 1  # the next number
    dropout: float = 0.1
    bidirectional: bool = True

    def init(self, device: Device[B]) -> LstmNetwork[B]:
        """The network on ``device``; LSTM (``num_layers=1``), stacked, bidirectional, or both."""

        def stack() -> StackedLstm[B]:
            stacked = StackedLstmConfig(self.input_size, self.hidden_size, self.num_layers, self.dropout)
            return stacked.init(device)

        forward = stack()
        reverse = stack() if self.bidirectional else None
        features = 2 * self.hidden_size if self.bidirectional else self.hidden_size
        return LstmNetwork(
            stacked_lstm=forward,
            reverse_lstm=reverse,
            dropout=DropoutConfig(self.dropout).init(),
            fc=LinearConfig(features, self.output_size).init(device),
        )
