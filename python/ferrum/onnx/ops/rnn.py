"""LSTM, GRU and RNN.

LSTM runs on ferrum's fused LSTM sequence kernel (the one ``ferrum.nn.Lstm`` uses); GRU with
``linear_before_reset=1`` on the fused GRU kernel (``ferrum.nn.Gru``'s reset-after cell) when it can,
otherwise GRU and RNN step through the sequence with tensor ops after one matmul for the input's
share of every step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Float, Tensor
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op

__all__ = ["gru", "lstm", "rnn"]


States = tuple[AnyTensor, ...]
"""A recurrent op's state per batch entry, each ``[batch, hidden]``: ``(h,)``, or ``(h, c)`` for LSTM."""


def _ifgo(w: AnyTensor, hidden: int) -> AnyTensor:
    """ONNX's gate blocks along dim 0 (input, output, forget, cell) in ferrum's order (i, f, cell, o)."""
    i, o, f, c = (w.narrow(0, k * hidden, hidden) for k in range(4))
    return Tensor.cat([i, f, c, o], 0)


@op("LSTM")
def lstm(
    x: AnyTensor,
    w: AnyTensor,
    r: AnyTensor,
    b: AnyTensor | None = None,
    sequence_lens: AnyTensor | None = None,
    initial_h: AnyTensor | None = None,
    initial_c: AnyTensor | None = None,
    p: AnyTensor | None = None,
    activation_alpha: tuple[float, ...] | None = None,
    activation_beta: tuple[float, ...] | None = None,
    activations: tuple[str, ...] | None = None,
    clip: float | None = None,
    direction: str = "forward",
    hidden_size: int | None = None,
    input_forget: int = 0,
    layout: int = 0,
) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """Y ``[seq, dirs, batch, hidden]`` (layout 0), Y_h and Y_c ``[dirs, batch, hidden]``.

    With peephole weights ``p`` the sequence is stepped with tensor ops (``_peephole_lstm``);
    otherwise it runs on the fused LSTM kernel.
    """
    del activation_alpha, activation_beta
    if activations is not None and any(
        a.lower() != d for a, d in zip(activations, ["sigmoid", "tanh", "tanh"] * 2, strict=False)
    ):
        raise ValueError(f"LSTM activations {list(activations)} are not supported (Sigmoid, Tanh, Tanh only)")
    if input_forget:
        raise ValueError("LSTM input_forget=1 is not supported")
    seq = x.dims()[1 if layout else 0]
    if sequence_lens is not None and any(int(v) != seq for v in sequence_lens.to_numpy().reshape(-1)):
        raise ValueError("LSTM sequence_lens shorter than the sequence are not supported")

    def run(
        d: int, reverse: bool, xp: AnyTensor, r_t: AnyTensor, rb: AnyTensor | None, states: States, lens: Any
    ) -> tuple[AnyTensor, States]:
        if rb is not None:
            xp = xp + rb.reshape((1, 1, -1))
        h0, c0 = states
        if p is None:
            out, h, c = _ferrum.lstm_sequence(xp, r_t, h0, c0, reverse, clip, False)
            return out, (h, c)
        return _peephole_lstm(xp, r_t, h0, c0, p.narrow(0, d, 1).reshape((3, 1, -1)), reverse, clip)

    y, y_h, y_c = _recurrent(
        "LSTM", 4, x, w, r, b, sequence_lens, (initial_h, initial_c), direction, hidden_size, layout, run,
        regate=_ifgo,
    )
    return y, y_h, y_c


def _peephole_lstm(
    xp: AnyTensor,
    w_hh: AnyTensor,
    h0: AnyTensor,
    c0: AnyTensor,
    peep: AnyTensor,
    reverse: bool,
    clip: float | None,
) -> tuple[AnyTensor, States]:
    """An LSTM with peephole weights ``peep [3 (i, o, f), 1, hidden]``, stepped with tensor ops.

    The fused kernel has no peepholes: here the input and forget gates also see the previous cell
    state, and the output gate the new one. ``xp [batch, seq, 4 hidden]`` and ``w_hh`` are in ferrum's
    gate order (i, f, cell, o); returns every step's ``h`` ``[batch, seq, hidden]`` and the last (h, c).
    """
    hidden = xp.dims()[2] // 4
    p_i, p_o, p_f = (peep.narrow(0, k, 1).reshape((1, hidden)) for k in range(3))
    clamp = _clipped(clip)

    def cell(x_t: AnyTensor, state: States) -> States:
        h, c = state
        gates = x_t + h @ w_hh
        i = clamp(gates.narrow(1, 0, hidden) + p_i * c).sigmoid()
        f = clamp(gates.narrow(1, hidden, hidden) + p_f * c).sigmoid()
        cell = clamp(gates.narrow(1, 2 * hidden, hidden)).tanh()
        c = f * c + i * cell
        o = clamp(gates.narrow(1, 3 * hidden, hidden) + p_o * c).sigmoid()
        return o * c.tanh(), c

    return _run_steps(xp, (h0, c0), cell, reverse, None)


# --- What the three share, then RNN and GRU ----------------------------------------------------

_DIRECTIONS = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}

# ONNX's recurrent activations: name -> (function of (x, alpha, beta), default alpha, default beta);
# an activation with a None default takes no alpha (or beta) from activation_alpha (activation_beta).
_ACTIVATIONS: dict[str, tuple[Any, float | None, float | None]] = {
    "sigmoid": (lambda t, a, b: t.sigmoid(), None, None),
    "tanh": (lambda t, a, b: t.tanh(), None, None),
    "relu": (lambda t, a, b: t.clamp_min(0.0), None, None),
    "leakyrelu": (lambda t, a, b: t.clamp_min(0.0) + t.clamp_max(0.0) * a, 0.01, None),
    "thresholdedrelu": (lambda t, a, b: t.mask_fill(t.lower_equal_elem(a), 0.0), 1.0, None),
    "hardsigmoid": (lambda t, a, b: (t * a + b).clamp(0.0, 1.0), 0.2, 0.5),
    "affine": (lambda t, a, b: t * a + b, 1.0, 0.0),
    "scaledtanh": (lambda t, a, b: (t * b).tanh() * a, 1.0, 1.0),
    "elu": (lambda t, a, b: t.clamp_min(0.0) + (t.clamp_max(0.0).exp() - 1.0) * a, 1.0, None),
    "softsign": (lambda t, a, b: t / (t.abs() + 1.0), None, None),
    "softplus": (lambda t, a, b: t.clamp_min(0.0) + ((-t.abs()).exp() + 1.0).log(), None, None),
}

Activation = Callable[[AnyTensor], AnyTensor]


def _activations(
    op_name: str,
    names: Sequence[str] | None,
    alphas: Sequence[float] | None,
    betas: Sequence[float] | None,
    defaults: list[str],
    dirs: int,
) -> list[list[Activation]]:
    """Per direction, the node's activation functions (``defaults`` when the node names none).

    ``activation_alpha``/``activation_beta`` are consumed in order by the activations that take them.
    """
    per_dir = len(defaults)
    chosen = list(names) if names else defaults * dirs
    if len(chosen) == per_dir and dirs == 2:
        chosen = chosen * 2
    if len(chosen) != per_dir * dirs:
        raise ValueError(f"{op_name}: {len(chosen)} activations given, {per_dir} per direction expected")
    alpha_left, beta_left = list(alphas or []), list(betas or [])
    out: list[Activation] = []
    for name in chosen:
        found = _ACTIVATIONS.get(name.lower())
        if found is None:
            raise ValueError(f"{op_name} activation {name!r} is not supported")
        fn, alpha, beta = found
        if alpha is not None and alpha_left:
            alpha = alpha_left.pop(0)
        if beta is not None and beta_left:
            beta = beta_left.pop(0)
        out.append(functools.partial(_apply, fn, alpha, beta))
    return [out[d * per_dir : (d + 1) * per_dir] for d in range(dirs)]


def _apply(fn: Any, alpha: float | None, beta: float | None, t: AnyTensor) -> AnyTensor:
    result: AnyTensor = fn(t, alpha, beta)
    return result


def _seq_lens(sequence_lens: AnyTensor | None, seq: int, batch: int) -> list[int] | None:
    """Each batch entry's length, or None when every entry spans the whole sequence."""
    if sequence_lens is None:
        return None
    lens = [int(v) for v in np.asarray(sequence_lens.to_numpy()).reshape(-1)]
    if len(lens) != batch or any(not 0 <= n <= seq for n in lens):
        raise ValueError(f"sequence_lens {lens} do not fit a batch of {batch} sequences of {seq} steps")
    return None if all(n == seq for n in lens) else lens


def _step_order(x: AnyTensor, lens: list[int], seq: int) -> AnyTensor:
    """Per batch entry, its first ``len`` steps reversed (the rest kept): ``[batch, seq]`` indices.

    The reordering is its own inverse, so it also puts a reverse pass's outputs back in place.
    """
    order = np.tile(np.arange(seq), (len(lens), 1))
    for b, n in enumerate(lens):
        order[b, :n] = order[b, :n][::-1]
    return Tensor.from_numpy(order.astype(np.int64), x.device())


def _reorder(x: AnyTensor, order: AnyTensor) -> AnyTensor:
    """``x [batch, seq, width]`` with each entry's steps in ``order [batch, seq]``."""
    batch, seq, width = x.dims()
    return x.gather(1, order.reshape((batch, seq, 1)).expand((batch, seq, width)))


def _run_steps(
    xp: AnyTensor,
    states: States,
    cell: Callable[[AnyTensor, States], States],
    reverse: bool,
    lens: list[int] | None,
) -> tuple[AnyTensor, States]:
    """Walk ``xp [batch, seq, width]`` step by step: ``states = cell(xp_t, states)``, the first state
    being the step's output ``h``; returns every step's ``h`` ``[batch, seq, hidden]`` (zeros past an
    entry's length) and the last states of each entry."""
    batch, seq, width = xp.dims()
    order = None
    if reverse:
        if lens is None:
            xp = xp.flip([1])
        else:
            order = _step_order(xp, lens, seq)
            xp = _reorder(xp, order)
    outs = []
    for t in range(seq):
        new = cell(xp.narrow(1, t, 1).reshape((batch, width)), states)
        if lens is not None and any(t >= n for n in lens):
            ended = np.array([[t >= n] for n in lens])
            done = Tensor.from_numpy(ended, xp.device()).expand(tuple(new[0].dims()))
            states = tuple(n.mask_where(done, s) for n, s in zip(new, states, strict=True))
            outs.append(new[0].mask_fill(done, 0.0))
        else:
            states = new
            outs.append(new[0])
    hidden = states[0].dims()[1]
    y = Tensor.stack(outs, 1) if seq else Tensor.zeros((batch, 0, hidden), xp.device(), dtype=xp.dtype)
    if reverse:
        y = y.flip([1]) if order is None else _reorder(y, order)
    return y, states


def _clipped(clip: float | None) -> Callable[[AnyTensor], AnyTensor]:
    if clip is None:
        return lambda t: t
    if not clip > 0:
        raise ValueError(f"clip must be positive, found {clip}")
    return lambda t: t.clamp(-clip, clip)


def _recurrent(
    op_name: str,
    gates: int,
    x: AnyTensor,
    w: AnyTensor,
    r: AnyTensor,
    b: AnyTensor | None,
    sequence_lens: AnyTensor | None,
    initial: tuple[AnyTensor | None, ...],
    direction: str,
    hidden_size: int | None,
    layout: int,
    run: Callable[[int, bool, AnyTensor, AnyTensor, AnyTensor | None, States, list[int] | None], Any],
    regate: Callable[[AnyTensor, int], AnyTensor] | None = None,
) -> tuple[AnyTensor, ...]:
    """What LSTM, GRU and RNN share: layouts, directions, the input projection and the output shapes.

    ``run(d, reverse, xp, r_t, rb, states, lens)`` runs direction ``d`` on ``xp [batch, seq, gates *
    hidden]`` (the input's share, its bias included) from ``states`` (each ``[batch, hidden]``: the
    ``initial`` ones given, zeros for the others), with ``r_t [hidden, gates * hidden]`` the transposed
    recurrent weight and ``rb`` its bias; it returns ``([batch, seq, hidden], last states)``.
    ``regate(block, hidden)`` puts ONNX's gate blocks of a weight or bias in the order ``run`` expects.
    Returns Y and each state stacked over the directions, in ``layout``.
    """
    if direction not in _DIRECTIONS:
        raise ValueError(f"{op_name} direction {direction!r} is not forward, reverse or bidirectional")
    seq_first = x if layout == 0 else x.swap_dims(0, 1)
    seq, batch, _ = seq_first.dims()
    hidden = hidden_size or r.dims()[-1]
    dirs = w.dims()[0]
    reverse_of = _DIRECTIONS[direction]
    if dirs != len(reverse_of):
        raise ValueError(
            f"{op_name}: W has {dirs} directions, direction {direction!r} needs {len(reverse_of)}"
        )
    lens = _seq_lens(sequence_lens, seq, batch)
    inits = initial if layout == 0 else tuple(s if s is None else s.swap_dims(0, 1) for s in initial)
    batch_first = seq_first.swap_dims(0, 1)
    width = gates * hidden
    order = regate or (lambda block, _: block)
    outs: list[AnyTensor] = []
    lasts: list[States] = []
    for d, reverse in enumerate(reverse_of):
        w_ih = order(w.narrow(0, d, 1).reshape((width, -1)), hidden).transpose()
        r_t = order(r.narrow(0, d, 1).reshape((width, hidden)), hidden).transpose()
        xp = (batch_first.reshape((batch * seq, -1)) @ w_ih).reshape((batch, seq, width))
        rb = None
        if b is not None:
            bias = b.narrow(0, d, 1).reshape((2 * width,))
            xp = xp + order(bias.narrow(0, 0, width), hidden).reshape((1, 1, width))
            rb = order(bias.narrow(0, width, width), hidden)
        zeros = Tensor.zeros((batch, hidden), x.device(), dtype=x.dtype)
        states = tuple(s.narrow(0, d, 1).reshape((batch, hidden)) if s is not None else zeros for s in inits)
        out, last = run(d, reverse, xp, r_t, rb, states, lens)
        outs.append(out.swap_dims(0, 1).unsqueeze_dims([1]))  # [seq, 1, batch, hidden]
        lasts.append(last)
    y = Tensor.cat(outs, 1) if len(outs) > 1 else outs[0]
    if len(lasts) > 1:
        stacked = [Tensor.stack(list(per_dir), 0) for per_dir in zip(*lasts, strict=True)]
    else:
        stacked = [state.unsqueeze_dims([0]) for state in lasts[0]]
    if layout:
        return y.permute([2, 0, 1, 3]), *(s.swap_dims(0, 1) for s in stacked)
    return y, *stacked


@op("RNN")
def rnn(
    x: AnyTensor,
    w: AnyTensor,
    r: AnyTensor,
    b: AnyTensor | None = None,
    sequence_lens: AnyTensor | None = None,
    initial_h: AnyTensor | None = None,
    activation_alpha: tuple[float, ...] | None = None,
    activation_beta: tuple[float, ...] | None = None,
    activations: tuple[str, ...] | None = None,
    clip: float | None = None,
    direction: str = "forward",
    hidden_size: int | None = None,
    layout: int = 0,
) -> tuple[AnyTensor, AnyTensor]:
    """The simple RNN ``h = f(x W^T + h R^T + Wb + Rb)`` (``f`` Tanh by default).

    Y ``[seq, dirs, batch, hidden]`` (layout 0; ``[batch, seq, dirs, hidden]`` with layout 1), Y_h
    ``[dirs, batch, hidden]`` (``[batch, dirs, hidden]``). Entries shorter than the sequence
    (``sequence_lens``) give zeros past their end and their last step's state as Y_h.
    """
    acts = _activations("RNN", activations, activation_alpha, activation_beta, ["Tanh"], w.dims()[0])
    clamp = _clipped(clip)

    def run(
        d: int, reverse: bool, xp: AnyTensor, r_t: AnyTensor, rb: AnyTensor | None, states: States, lens: Any
    ) -> tuple[AnyTensor, States]:
        f = acts[d][0]
        if rb is not None:
            xp = xp + rb.reshape((1, 1, -1))
        return _run_steps(xp, states, lambda x_t, s: (f(clamp(x_t + s[0] @ r_t)),), reverse, lens)

    y, y_h = _recurrent(
        "RNN", 1, x, w, r, b, sequence_lens, (initial_h,), direction, hidden_size, layout, run
    )
    return y, y_h


@op("GRU")
def gru(
    x: AnyTensor,
    w: AnyTensor,
    r: AnyTensor,
    b: AnyTensor | None = None,
    sequence_lens: AnyTensor | None = None,
    initial_h: AnyTensor | None = None,
    activation_alpha: tuple[float, ...] | None = None,
    activation_beta: tuple[float, ...] | None = None,
    activations: tuple[str, ...] | None = None,
    clip: float | None = None,
    direction: str = "forward",
    hidden_size: int | None = None,
    layout: int = 0,
    linear_before_reset: int = 0,
) -> tuple[AnyTensor, AnyTensor]:
    """The GRU: gates z, r (``f``, Sigmoid) and the candidate ``n`` (``g``, Tanh), ``h = (1 - z) n + z h``.

    With ``linear_before_reset`` the reset gate scales ``h R_n^T + Rb_n`` (ferrum's fused GRU kernel
    when the default activations, no clip and whole sequences allow it); without, it scales ``h``
    before ``R_n``. Outputs as RNN's.
    """
    acts = _activations(
        "GRU", activations, activation_alpha, activation_beta, ["Sigmoid", "Tanh"], w.dims()[0]
    )
    defaults = not activations or all(
        a.lower() == n for a, n in zip(activations, ["sigmoid", "tanh"] * 2, strict=False)
    )
    clamp = _clipped(clip)

    def run(
        d: int, reverse: bool, xp: AnyTensor, r_t: AnyTensor, rb: AnyTensor | None, states: States, lens: Any
    ) -> tuple[AnyTensor, States]:
        f, g = acts[d]
        (h0,) = states
        hidden = h0.dims()[1]
        seq = xp.dims()[1]
        if linear_before_reset and defaults and clip is None and lens is None and seq and xp.kind is Float:
            out = _ferrum.gru_sequence(xp.flip([1]) if reverse else xp, r_t, rb, h0)
            last = out.narrow(1, seq - 1, 1).reshape((h0.dims()[0], hidden))
            return (out.flip([1]) if reverse else out), (last,)
        r_zr, r_n = r_t.narrow(1, 0, 2 * hidden), r_t.narrow(1, 2 * hidden, hidden)
        rb_n = None
        if rb is not None:
            xp = Tensor.cat(
                [
                    xp.narrow(2, 0, 2 * hidden) + rb.narrow(0, 0, 2 * hidden).reshape((1, 1, -1)),
                    xp.narrow(2, 2 * hidden, hidden),
                ],
                2,
            )
            rb_n = rb.narrow(0, 2 * hidden, hidden).reshape((1, hidden))

        def cell(x_t: AnyTensor, state: States) -> States:
            (h,) = state
            zr = f(clamp(x_t.narrow(1, 0, 2 * hidden) + h @ r_zr))
            z, rr = zr.narrow(1, 0, hidden), zr.narrow(1, hidden, hidden)
            if linear_before_reset:
                hn = h @ r_n
                if rb_n is not None:
                    hn = hn + rb_n
                hn = rr * hn
            else:
                hn = (rr * h) @ r_n
                if rb_n is not None:
                    hn = hn + rb_n
            n = g(clamp(x_t.narrow(1, 2 * hidden, hidden) + hn))
            return ((1.0 - z) * n + z * h,)

        return _run_steps(xp, states, cell, reverse, lens)

    y, y_h = _recurrent(
        "GRU", 3, x, w, r, b, sequence_lens, (initial_h,), direction, hidden_size, layout, run
    )
    return y, y_h
