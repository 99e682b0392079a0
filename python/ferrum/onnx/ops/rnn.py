"""LSTM, run by ferrum's fused LSTM sequence kernel (the one ``ferrum.nn.Lstm`` uses)."""

from __future__ import annotations

from ferrum import _ferrum
from ferrum._ferrum import Tensor
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op

__all__ = ["lstm"]


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
    """Y ``[seq, dirs, batch, hidden]`` (layout 0), Y_h and Y_c ``[dirs, batch, hidden]``."""
    del activation_alpha, activation_beta
    if activations is not None and any(
        a.lower() != d for a, d in zip(activations, ["sigmoid", "tanh", "tanh"] * 2, strict=False)
    ):
        raise ValueError(f"LSTM activations {list(activations)} are not supported (Sigmoid, Tanh, Tanh only)")
    if p is not None:
        raise ValueError("LSTM peephole weights (input P) are not supported")
    if input_forget:
        raise ValueError("LSTM input_forget=1 is not supported")
    seq_first = x if layout == 0 else x.swap_dims(0, 1)
    seq, batch, _ = seq_first.dims()
    if sequence_lens is not None and any(int(v) != seq for v in sequence_lens.to_numpy().reshape(-1)):
        raise ValueError("LSTM sequence_lens shorter than the sequence are not supported")
    hidden = hidden_size or r.dims()[-1]
    dirs = w.dims()[0]
    reverse_of = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[direction]
    batch_first = seq_first.swap_dims(0, 1)
    outs, hs, cs = [], [], []
    for d, reverse in enumerate(reverse_of[:dirs]):
        w_ih = _ifgo(w.narrow(0, d, 1).reshape((4 * hidden, -1)), hidden).transpose()
        w_hh = _ifgo(r.narrow(0, d, 1).reshape((4 * hidden, hidden)), hidden).transpose()
        xp = (batch_first.reshape((batch * seq, -1)) @ w_ih).reshape((batch, seq, 4 * hidden))
        if b is not None:
            bias = b.narrow(0, d, 1).reshape((8 * hidden,))
            both = _ifgo(bias.narrow(0, 0, 4 * hidden), hidden) + _ifgo(
                bias.narrow(0, 4 * hidden, 4 * hidden), hidden
            )
            xp = xp + both.reshape((1, 1, 4 * hidden))
        zeros = Tensor.zeros((batch, hidden), x.device(), dtype=x.dtype)
        h0 = initial_h.narrow(0, d, 1).reshape((batch, hidden)) if initial_h is not None else zeros
        c0 = initial_c.narrow(0, d, 1).reshape((batch, hidden)) if initial_c is not None else zeros
        out, h, c = _ferrum.lstm_sequence(xp, w_hh, h0, c0, reverse, clip, False)
        outs.append(out.swap_dims(0, 1).unsqueeze_dims([1]))  # [seq, 1, batch, hidden]
        hs.append(h.unsqueeze_dims([0]))
        cs.append(c.unsqueeze_dims([0]))
    y = Tensor.cat(outs, 1) if len(outs) > 1 else outs[0]
    y_h = Tensor.cat(hs, 0) if len(hs) > 1 else hs[0]
    y_c = Tensor.cat(cs, 0) if len(cs) > 1 else cs[0]
    if layout:
        return y.permute([2, 0, 1, 3]), y_h.swap_dims(0, 1), y_c.swap_dims(0, 1)
    return y, y_h, y_c
