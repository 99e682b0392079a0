"""``Gru``: the gated recurrent unit, as in Burn's ``burn::nn::gru::Gru``.

Inputs are ``[batch, seq, d_input]``; the state is ``[batch, d_hidden]``. Per step::

    z = sigmoid(x W_z + b_z + h W'_z + b'_z)        r = sigmoid(x W_r + b_r + h W'_r + b'_r)
    n = tanh(x W_n + b_n + r (h W'_n + b'_n))        (reset_after, the default, as PyTorch)
    n = tanh(x W_n + b_n + (r h) W'_n + b'_n)        (reset_after=False)
    h = (1 - z) n + z h

With ``reset_after`` (the default) the whole sequence runs as one engine op,
forward and backward; records are Burn's (a ``GateController`` per gate).
"""

from __future__ import annotations

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Device, Tensor
from ferrum.activation import sigmoid
from ferrum.config import config
from ferrum.config.checks import check_positive_ints
from ferrum.module import Module
from ferrum.nn.initializer import Initializer
from ferrum.nn.rnn.gate_controller import GateController
from ferrum.nn.rnn.stacked import StackedGates, check_input, check_state, project
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1, D2, D3

__all__ = ["Gru", "GruConfig"]


@config
class GruConfig:
    """Configuration of ``Gru`` (Burn's fields and defaults: ``reset_after`` on, Xavier normal).

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import GruConfig
        >>> GruConfig(2, 3, True).init(NdArray.device()).num_params()
        63
    """

    d_input: int
    d_hidden: int
    bias: bool
    reset_after: bool = True
    initializer: Initializer = Initializer.XavierNormal(gain=1.0)

    def __post_init__(self) -> None:
        check_positive_ints("GruConfig", d_input=self.d_input, d_hidden=self.d_hidden)

    def init(self, device: Device[B]) -> Gru[B]:
        """A new layer on ``device``."""

        def gate() -> GateController[B]:
            return GateController.new(self.d_input, self.d_hidden, self.bias, self.initializer, device)

        return Gru(
            update_gate=gate(),
            reset_gate=gate(),
            new_gate=gate(),
            d_hidden=self.d_hidden,
            reset_after=self.reset_after,
        )


class Gru(Module[B]):
    """A one-direction GRU over a whole sequence; see the module docstring for the cell.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import GruConfig, Initializer
        >>> device = NdArray.device()
        >>> gru = GruConfig(1, 1, False).with_initializer(Initializer.Constant(0.5)).init(device)
        >>> round(gru.forward(Tensor.from_floats([[[1.0]]], device), None).into_scalar(), 4)
        0.1745
    """

    update_gate: GateController[B]
    reset_gate: GateController[B]
    new_gate: GateController[B]
    d_hidden: int
    reset_after: bool

    def forward(self, x: Tensor[B, D3], state: Tensor[B, D2] | None = None) -> Tensor[B, D3]:
        """``[batch, seq, d_input] -> [batch, seq, d_hidden]``, from ``state``
        (``[batch, d_hidden]``) or zeros."""
        check_input("Gru", x, self.update_gate.input_transform.weight.shape()[0])
        batch = x.dims()[0]
        if state is None:
            h: Tensor[B, D2] = Tensor.zeros((batch, self.d_hidden), x.device(), dtype=x.dtype)
        else:
            check_state("Gru", "hidden", state, batch, self.d_hidden)
            h = state
        gates = StackedGates([self.update_gate, self.reset_gate, self.new_gate])
        xp = project(x, gates.w_ih, gates.b_ih)
        if self.reset_after:
            out: Tensor[B, D3] = _ferrum.gru_sequence(xp, gates.w_hh, gates.b_hh, h)
            return out
        return self._reset_before(xp, gates, h)

    def _reset_before(self, xp: Tensor[B, D3], gates: StackedGates[B], h: Tensor[B, D2]) -> Tensor[B, D3]:
        """The reset gate applied before the new gate's weights: two GEMMs per step, with tensor ops."""
        batch, seq, _ = xp.dims()
        n = self.d_hidden
        w_zr, w_n = gates.w_hh.narrow(1, 0, 2 * n), gates.w_hh.narrow(1, 2 * n, n)
        b_hh: Tensor[B, D1] | None = gates.b_hh
        b_zr = None if b_hh is None else b_hh.narrow(0, 0, 2 * n).reshape((1, 2 * n))
        b_n = None if b_hh is None else b_hh.narrow(0, 2 * n, n).reshape((1, n))
        outs: list[Tensor[B, D2]] = []
        for t in range(seq):
            x_t = xp.narrow(1, t, 1).reshape((batch, 3 * n))
            zr = x_t.narrow(1, 0, 2 * n) + h @ w_zr
            if b_zr is not None:
                zr = zr + b_zr
            zr = sigmoid(zr)
            z, r = zr.narrow(1, 0, n), zr.narrow(1, n, n)
            hn = (r * h) @ w_n
            if b_n is not None:
                hn = hn + b_n
            cand = (x_t.narrow(1, 2 * n, n) + hn).tanh()
            h = (1.0 - z) * cand + z * h
            outs.append(h)
        return Tensor.stack(outs, 1)

    def _display_settings(self) -> list[tuple[str, object]]:
        gate = self.update_gate.input_transform
        return [
            ("d_input", gate.weight.shape()[0]),
            ("d_hidden", self.d_hidden),
            ("bias", gate.bias is not None),
            ("reset_after", self.reset_after),
        ]
