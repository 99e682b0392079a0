"""The gates of a recurrent layer side by side: one matmul for all of them.

Burn keeps one ``GateController`` (two Linears) per gate; stacking their
weights column-wise computes every gate's input projection for the whole
sequence in one GEMM, and every gate's hidden projection per step in another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from ferrum._ferrum import ShapeError, Tensor
from ferrum.nn.rnn.gate_controller import GateController
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1, D2, D3


class StackedGates(Generic[B]):
    """Weights ``[d_input, n * d_hidden]``, ``[d_hidden, n * d_hidden]`` and biases of ``n`` gates,
    side by side in order."""

    def __init__(self, gates: Sequence[GateController[B]]) -> None:
        self.w_ih: Tensor[B, D2] = Tensor.cat([g.input_transform.weight.val() for g in gates], 1)
        self.w_hh: Tensor[B, D2] = Tensor.cat([g.hidden_transform.weight.val() for g in gates], 1)
        biases = [g.biases() for g in gates]
        self.b_ih: Tensor[B, D1] | None = _cat([b for b, _ in biases])
        self.b_hh: Tensor[B, D1] | None = _cat([b for _, b in biases])

    def bias_sum(self) -> Tensor[B, D1] | None:
        """Both biases added (where the cell adds them anyway)."""
        if self.b_ih is None or self.b_hh is None:
            return self.b_ih if self.b_hh is None else self.b_hh
        return self.b_ih + self.b_hh


def _cat(parts: list[Tensor[B, D1] | None]) -> Tensor[B, D1] | None:
    if any(p is None for p in parts):
        return None
    return Tensor.cat([p for p in parts if p is not None], 0)


def project(x: Tensor[B, D3], weight: Tensor[B, D2], bias: Tensor[B, D1] | None) -> Tensor[B, D3]:
    """``x @ weight + bias`` over ``[batch, seq, d_input]`` as one GEMM."""
    batch, seq, d_input = x.dims()
    d_out = weight.dims()[1]
    out: Tensor[B, D3] = (x.reshape((batch * seq, d_input)) @ weight).reshape((batch, seq, d_out))
    if bias is not None:
        out = out + bias.reshape((1, 1, d_out))
    return out


def check_input(owner: str, x: Tensor[B, D3], d_input: int) -> None:
    """Raise ``ShapeError`` unless ``x`` is ``[batch, seq, d_input]``."""
    dims = x.dims()
    if len(dims) != 3 or dims[2] != d_input:
        raise ShapeError(
            f"{owner}.forward: expected an input of shape [batch, seq, {d_input}], found {list(dims)}"
        )


def check_state(owner: str, name: str, state: Tensor[B, D2], batch: int, d_hidden: int) -> None:
    """Raise ``ShapeError`` unless the initial ``name`` state is ``[batch, d_hidden]``."""
    if state.dims() != (batch, d_hidden):
        raise ShapeError(
            f"{owner}.forward: the {name} state must be [batch, d_hidden] = [{batch}, {d_hidden}],"
            f" found {list(state.dims())}"
        )
