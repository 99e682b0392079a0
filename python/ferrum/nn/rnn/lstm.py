"""``Lstm`` and ``BiLstm``: long short-term memory, as in Burn's ``burn::nn::Lstm``.

Inputs are ``[batch, seq, d_input]`` (``batch_first``, the default) or
``[seq, batch, d_input]``; the state is ``LstmState(cell, hidden)``, each
``[batch, d_hidden]``. Per step::

    i = sigmoid(x W_i + h W'_i + b)   f = sigmoid(x W_f + h W'_f + b)   o = sigmoid(x W_o + h W'_o + b)
    g = tanh(x W_c + h W'_c + b)   c = f c + i g   h = o tanh(c)

The records are Burn's (a ``GateController`` per gate). With the standard
activations the whole sequence, forward and backward, runs as one engine op:
one GEMM projects every step's input for the four gates at once, and each
step does one GEMM of the hidden state against the four gates side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import ClassVar, Generic

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device, Tensor
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module
from ferrum.nn.activation_wrapper import Activation, ActivationConfig
from ferrum.nn.initializer import Initializer
from ferrum.nn.rnn.gate_controller import GateController
from ferrum.nn.rnn.stacked import StackedGates, check_input, check_state, project
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D2, D3

__all__ = ["BiLstm", "BiLstmConfig", "Lstm", "LstmConfig", "LstmState"]


@dataclasses.dataclass(frozen=True)
class LstmState(Generic[B, D]):
    """The cell and hidden states of an LSTM: ``[batch, d_hidden]`` (``[2, batch, d_hidden]`` for ``BiLstm``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LstmState
        >>> device = NdArray.device()
        >>> LstmState(Tensor.zeros((1, 2), device), Tensor.ones((1, 2), device)).hidden.to_data().to_list()
        [[1.0, 1.0]]
    """

    cell: Tensor[B, D]
    hidden: Tensor[B, D]


def _check_clip(owner: str, clip: float | None) -> None:
    if clip is not None and (isinstance(clip, bool) or not isinstance(clip, (int, float)) or not clip > 0):
        raise ValueError(f"{owner}.clip must be a positive number or None, found {clip!r}")


_XAVIER = Initializer.XavierNormal(gain=1.0)


@config
class LstmConfig:
    """Configuration of ``Lstm`` (Burn's fields and defaults: Xavier normal, batch first).

    ``clip`` clamps the cell state to ``[-clip, clip]`` after each step;
    ``input_forget`` couples the gates, ``f = 1 - i``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LstmConfig
        >>> LstmConfig(2, 3, True).init(NdArray.device()).num_params()
        84
    """

    d_input: int
    d_hidden: int
    bias: bool
    initializer: Initializer = _XAVIER
    batch_first: bool = True
    reverse: bool = False
    clip: float | None = None
    input_forget: bool = False
    gate_activation: ActivationConfig = ActivationConfig.Sigmoid
    cell_activation: ActivationConfig = ActivationConfig.Tanh
    hidden_activation: ActivationConfig = ActivationConfig.Tanh

    def __post_init__(self) -> None:
        check_positive_ints("LstmConfig", d_input=self.d_input, d_hidden=self.d_hidden)
        _check_clip("LstmConfig", self.clip)

    def init(self, device: Device[B]) -> Lstm[B]:
        """A new layer on ``device``."""

        def gate() -> GateController[B]:
            return GateController.new(self.d_input, self.d_hidden, self.bias, self.initializer, device)

        return Lstm(
            input_gate=gate(),
            forget_gate=gate(),
            output_gate=gate(),
            cell_gate=gate(),
            d_hidden=self.d_hidden,
            batch_first=self.batch_first,
            reverse=self.reverse,
            clip=None if self.clip is None else float(self.clip),
            input_forget=self.input_forget,
            gate_activation=self.gate_activation.init(device),
            cell_activation=self.cell_activation.init(device),
            hidden_activation=self.hidden_activation.init(device),
        )


class Lstm(Module[B]):
    """A one-direction LSTM over a whole sequence; see the module docstring for the cell.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import Initializer, LstmConfig
        >>> device = NdArray.device()
        >>> lstm = LstmConfig(1, 1, False).with_initializer(Initializer.Constant(0.5)).init(device)
        >>> out, state = lstm.forward(Tensor.from_floats([[[1.0]]], device), None)
        >>> round(state.hidden.into_scalar(), 4)
        0.1743
    """

    input_gate: GateController[B]
    forget_gate: GateController[B]
    output_gate: GateController[B]
    cell_gate: GateController[B]
    d_hidden: int
    batch_first: bool
    reverse: bool
    clip: float | None
    input_forget: bool
    gate_activation: Activation[B]
    cell_activation: Activation[B]
    hidden_activation: Activation[B]

    def forward(
        self, x: Tensor[B, D3], state: LstmState[B, D2] | None = None
    ) -> tuple[Tensor[B, D3], LstmState[B, D2]]:
        """``[batch, seq, d_input] -> ([batch, seq, d_hidden], final LstmState)``.

        With ``batch_first=False`` the input and output are ``[seq, batch, ...]``;
        without a state the sequence starts from zeros.
        """
        d_input = self.input_gate.input_transform.weight.shape()[0]
        if len(x.dims()) == 3 and not self.batch_first:
            x = x.swap_dims(0, 1)
        check_input("Lstm", x, d_input)
        out, final = _run(self, x, state, self.reverse)
        return (out if self.batch_first else out.swap_dims(0, 1)), final

    def _display_settings(self) -> list[tuple[str, object]]:
        d_input = self.input_gate.input_transform.weight.shape()[0]
        return [
            ("d_input", d_input),
            ("d_hidden", self.d_hidden),
            ("bias", self.input_gate.input_transform.bias is not None),
        ]


def _gates(lstm: Lstm[B]) -> list[GateController[B]]:
    # The order of the engine's gate columns: i, f, g, o (f left out when coupled to i).
    if lstm.input_forget:
        return [lstm.input_gate, lstm.cell_gate, lstm.output_gate]
    return [lstm.input_gate, lstm.forget_gate, lstm.cell_gate, lstm.output_gate]


def _standard(lstm: Lstm[B]) -> bool:
    kinds = (lstm.gate_activation.kind, lstm.cell_activation.kind, lstm.hidden_activation.kind)
    return kinds == ("Sigmoid", "Tanh", "Tanh")


def _run(
    lstm: Lstm[B], x: Tensor[B, D3], state: LstmState[B, D2] | None, reverse: bool
) -> tuple[Tensor[B, D3], LstmState[B, D2]]:
    """The batch-first sequence ``x`` through ``lstm``, in order or reversed."""
    batch = x.dims()[0]
    h_dim = lstm.d_hidden
    if state is None:
        zeros: Tensor[B, D2] = Tensor.zeros((batch, h_dim), x.device(), dtype=x.dtype)
        h0, c0 = zeros, zeros
    else:
        check_state("Lstm", "cell", state.cell, batch, h_dim)
        check_state("Lstm", "hidden", state.hidden, batch, h_dim)
        h0, c0 = state.hidden, state.cell
    gates = StackedGates(_gates(lstm))
    xp = project(x, gates.w_ih, gates.bias_sum())
    if _standard(lstm):
        out, h, c = _ferrum.lstm_sequence(xp, gates.w_hh, h0, c0, reverse, lstm.clip, lstm.input_forget)
        return out, LstmState(c, h)
    return _composed(lstm, xp, gates.w_hh, h0, c0, reverse)


def _composed(
    lstm: Lstm[B], xp: Tensor[B, D3], w_hh: Tensor[B, D2], h: Tensor[B, D2], c: Tensor[B, D2], reverse: bool
) -> tuple[Tensor[B, D3], LstmState[B, D2]]:
    """The cell step by step with tensor ops, for activations the engine op does not take."""
    batch, seq, width = xp.dims()
    n = lstm.d_hidden
    outs: list[Tensor[B, D2]] = []
    for t in reversed(range(seq)) if reverse else range(seq):
        g = xp.narrow(1, t, 1).reshape((batch, width)) + h @ w_hh
        i = lstm.gate_activation.forward(g.narrow(1, 0, n))
        if lstm.input_forget:
            f = 1.0 - i
            cand, o = g.narrow(1, n, n), g.narrow(1, 2 * n, n)
        else:
            f = lstm.gate_activation.forward(g.narrow(1, n, n))
            cand, o = g.narrow(1, 2 * n, n), g.narrow(1, 3 * n, n)
        c = f * c + i * lstm.cell_activation.forward(cand)
        if lstm.clip is not None:
            c = c.clamp(-lstm.clip, lstm.clip)
        h = lstm.gate_activation.forward(o) * lstm.hidden_activation.forward(c)
        outs.append(h)
    if reverse:
        outs.reverse()
    return Tensor.stack(outs, 1), LstmState(c, h)


@config
class BiLstmConfig:
    """Configuration of ``BiLstm`` (Burn's fields and defaults).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import BiLstmConfig
        >>> BiLstmConfig(2, 3, True).init(NdArray.device()).num_params()
        168
    """

    d_input: int
    d_hidden: int
    bias: bool
    initializer: Initializer = _XAVIER
    batch_first: bool = True
    clip: float | None = None
    input_forget: bool = False
    gate_activation: ActivationConfig = ActivationConfig.Sigmoid
    cell_activation: ActivationConfig = ActivationConfig.Tanh
    hidden_activation: ActivationConfig = ActivationConfig.Tanh

    def __post_init__(self) -> None:
        check_positive_ints("BiLstmConfig", d_input=self.d_input, d_hidden=self.d_hidden)
        _check_clip("BiLstmConfig", self.clip)

    def init(self, device: Device[B]) -> BiLstm[B]:
        """A new layer on ``device``: two LSTMs, one per direction."""
        # Every field of this config is one of LstmConfig's; each direction runs batch first.
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        base = LstmConfig(**{**fields, "batch_first": True})
        return BiLstm(
            forward_lstm=base.init(device),
            reverse_lstm=base.init(device),
            d_hidden=self.d_hidden,
            batch_first=self.batch_first,
        )


class BiLstm(Module[B]):
    """A bidirectional LSTM: the outputs of both directions side by side, ``[batch, seq, 2 * d_hidden]``.

    Burn names the two LSTMs ``forward`` and ``reverse``; ``forward`` is the
    method here, so the fields are ``forward_lstm`` and ``reverse_lstm``
    (their records keep Burn's names).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import BiLstmConfig
        >>> device = NdArray.device()
        >>> out, state = BiLstmConfig(3, 4, True).init(device).forward(Tensor.ones((2, 5, 3), device), None)
        >>> out.dims(), state.hidden.dims()
        ((2, 5, 8), (2, 2, 4))
    """

    _record_keys: ClassVar[Mapping[str, str]] = {"forward_lstm": "forward", "reverse_lstm": "reverse"}

    forward_lstm: Lstm[B]
    reverse_lstm: Lstm[B]
    d_hidden: int
    batch_first: bool

    def forward(
        self, x: Tensor[B, D3], state: LstmState[B, D3] | None = None
    ) -> tuple[Tensor[B, D3], LstmState[B, D3]]:
        """``[batch, seq, d_input] -> ([batch, seq, 2 * d_hidden], LstmState)``; states are
        ``[2, batch, d_hidden]`` (forward direction first)."""
        if len(x.dims()) == 3 and not self.batch_first:
            x = x.swap_dims(0, 1)
        check_input("BiLstm", x, self.forward_lstm.input_gate.input_transform.weight.shape()[0])
        batch = x.dims()[0]
        initial: tuple[LstmState[B, D2] | None, LstmState[B, D2] | None] = (None, None)
        if state is not None:
            for name, t in (("cell", state.cell), ("hidden", state.hidden)):
                if t.dims() != (2, batch, self.d_hidden):
                    raise _ferrum.ShapeError(
                        f"BiLstm.forward: the {name} state must be [2, batch, d_hidden] ="
                        f" [2, {batch}, {self.d_hidden}], found {list(t.dims())}"
                    )
            cells, hiddens = state.cell.iter_dim(0), state.hidden.iter_dim(0)
            initial = tuple(  # type: ignore[assignment]
                LstmState(c.reshape((batch, self.d_hidden)), h.reshape((batch, self.d_hidden)))
                for c, h in zip(cells, hiddens, strict=True)
            )
        out_f, state_f = _run(self.forward_lstm, x, initial[0], False)
        out_r, state_r = _run(self.reverse_lstm, x, initial[1], True)
        out = Tensor.cat([out_f, out_r], 2)
        final = LstmState(
            Tensor.stack([state_f.cell, state_r.cell], 0), Tensor.stack([state_f.hidden, state_r.hidden], 0)
        )
        return (out if self.batch_first else out.swap_dims(0, 1)), final

    def _display_settings(self) -> list[tuple[str, object]]:
        gate = self.forward_lstm.input_gate.input_transform
        return [
            ("d_input", gate.weight.shape()[0]),
            ("d_hidden", self.d_hidden),
            ("bias", gate.bias is not None),
        ]
