"""Lstm, BiLstm and Gru (ferrum.nn.rnn) against NumPy cells written here from Burn's
equations, on the layers' own weights; gradients of the fused engine sequences against
the same layers composed of plain tensor ops (themselves finite-difference checked) and
against central finite differences in f64; Burn's config defaults and record layout."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import ShapeError, Tensor, _ferrum
from ferrum.nn import (
    ActivationConfig,
    BiLstmConfig,
    GateController,
    GruConfig,
    Initializer,
    Lstm,
    LstmConfig,
    LstmState,
)

from tests.support.devices import AD, DEVICE
from tests.support.gradcheck import case, check_case, smooth

Array = npt.NDArray[Any]


def sig(x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-x))


def weights(gate: GateController[Any]) -> tuple[Array, Array, Array, Array]:
    """``(W_x, b_x, W_h, b_h)`` of a gate (zeros for an absent bias)."""
    x, h = gate.input_transform, gate.hidden_transform
    n = x.weight.shape()[1]
    bx = np.zeros(n) if x.bias is None else x.bias.val().to_numpy().astype(np.float64)
    bh = np.zeros(n) if h.bias is None else h.bias.val().to_numpy().astype(np.float64)
    return x.weight.val().to_numpy().astype(np.float64), bx, h.weight.val().to_numpy().astype(np.float64), bh


def np_lstm(
    lstm: Lstm[Any], x: Array, h: Array, c: Array, reverse: bool = False, clip: float | None = None
) -> tuple[Array, Array, Array]:
    """Burn's LSTM cell over a batch-first sequence."""
    gates = {name: weights(getattr(lstm, f"{name}_gate")) for name in ("input", "forget", "output", "cell")}

    def pre(name: str, xt: Array, h: Array) -> Array:
        wx, bx, wh, bh = gates[name]
        out: Array = xt @ wx + bx + h @ wh + bh
        return out

    outs = []
    steps = range(x.shape[1])
    for t in reversed(steps) if reverse else steps:
        xt = x[:, t]
        i = sig(pre("input", xt, h))
        f = 1.0 - i if lstm.input_forget else sig(pre("forget", xt, h))
        c = f * c + i * np.tanh(pre("cell", xt, h))
        if clip is not None:
            c = np.clip(c, -clip, clip)
        h = sig(pre("output", xt, h)) * np.tanh(c)
        outs.append(h)
    if reverse:
        outs.reverse()
    return np.stack(outs, 1), h, c


def t32(a: Array, device: Any = DEVICE) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(np.asarray(a, dtype=np.float32), device)


def test_lstm_config_defaults_match_burn() -> None:
    c = LstmConfig(3, 4, True)
    assert (c.batch_first, c.reverse, c.clip, c.input_forget) == (True, False, None, False)
    assert c.initializer == Initializer.XavierNormal(gain=1.0)
    assert (c.gate_activation, c.cell_activation, c.hidden_activation) == (
        ActivationConfig.Sigmoid,
        ActivationConfig.Tanh,
        ActivationConfig.Tanh,
    )
    assert GruConfig(3, 4, True).reset_after is True
    # Burn's GateController per gate: a Linear for the input and one for the hidden state.
    lstm = c.init(DEVICE)
    assert lstm.input_gate.input_transform.weight.shape() == (3, 4)
    assert lstm.input_gate.hidden_transform.weight.shape() == (4, 4)
    assert list(lstm.into_record())[:5] == [
        "input_gate",
        "forget_gate",
        "output_gate",
        "cell_gate",
        "d_hidden",
    ]


@pytest.mark.parametrize(
    ("options", "reverse", "clip"),
    [
        ({}, False, None),
        ({"reverse": True}, True, None),
        ({"clip": 0.3}, False, 0.3),
        ({"input_forget": True}, False, None),
    ],
)
def test_lstm_matches_numpy(options: dict[str, Any], reverse: bool, clip: float | None) -> None:
    rng = np.random.default_rng(1)
    lstm = LstmConfig(3, 5, True, **options).init(DEVICE)
    x, h0, c0 = rng.uniform(-1, 1, (2, 6, 3)), rng.uniform(-1, 1, (2, 5)), rng.uniform(-1, 1, (2, 5))
    out, state = lstm.forward(t32(x), LstmState(t32(c0), t32(h0)))
    ref, h, c = np_lstm(lstm, x, h0, c0, reverse, clip)
    np.testing.assert_allclose(out.to_numpy(), ref, atol=2e-6)
    np.testing.assert_allclose(state.hidden.to_numpy(), h, atol=2e-6)
    np.testing.assert_allclose(state.cell.to_numpy(), c, atol=2e-6)


def test_lstm_without_state_and_sequence_first() -> None:
    rng = np.random.default_rng(2)
    lstm = LstmConfig(3, 4, False).with_batch_first(False).init(DEVICE)
    x = rng.uniform(-1, 1, (5, 2, 3))  # [seq, batch, d_input]
    out, _ = lstm.forward(t32(x))
    ref, _, _ = np_lstm(lstm, x.transpose(1, 0, 2), np.zeros((2, 4)), np.zeros((2, 4)))
    np.testing.assert_allclose(out.to_numpy(), ref.transpose(1, 0, 2), atol=2e-6)


def test_bilstm_joins_both_directions() -> None:
    rng = np.random.default_rng(3)
    bi = BiLstmConfig(3, 4, True).init(DEVICE)
    x = rng.uniform(-1, 1, (2, 5, 3))
    out, state = bi.forward(t32(x))
    fwd, hf, cf = np_lstm(bi.forward_lstm, x, np.zeros((2, 4)), np.zeros((2, 4)))
    rev, hr, cr = np_lstm(bi.reverse_lstm, x, np.zeros((2, 4)), np.zeros((2, 4)), reverse=True)
    np.testing.assert_allclose(out.to_numpy(), np.concatenate([fwd, rev], 2), atol=2e-6)
    np.testing.assert_allclose(state.hidden.to_numpy(), np.stack([hf, hr]), atol=2e-6)
    np.testing.assert_allclose(state.cell.to_numpy(), np.stack([cf, cr]), atol=2e-6)
    # Burn names the fields `forward` and `reverse` in the record.
    assert list(bi.into_record())[:2] == ["forward", "reverse"]


@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_gru_matches_numpy(reset_after: bool, bias: bool) -> None:
    rng = np.random.default_rng(4)
    gru = GruConfig(3, 4, bias).with_reset_after(reset_after).init(DEVICE)
    x, h = rng.uniform(-1, 1, (2, 6, 3)), rng.uniform(-1, 1, (2, 4))
    out = gru.forward(t32(x), t32(h)).to_numpy()
    (zx, zbx, zh, zbh), (rx, rbx, rh, rbh), (nx, nbx, nh, nbh) = (
        weights(gru.update_gate),
        weights(gru.reset_gate),
        weights(gru.new_gate),
    )
    outs = []
    for t in range(6):
        xt = x[:, t]
        z = sig(xt @ zx + zbx + h @ zh + zbh)
        r = sig(xt @ rx + rbx + h @ rh + rbh)
        hidden = r * (h @ nh + nbh) if reset_after else (r * h) @ nh + nbh
        n = np.tanh(xt @ nx + nbx + hidden)
        h = (1 - z) * n + z * h
        outs.append(h)
    np.testing.assert_allclose(out, np.stack(outs, 1), atol=2e-6)


def test_bad_inputs_are_reported() -> None:
    lstm = LstmConfig(3, 4, True).init(DEVICE)
    with pytest.raises(ShapeError, match=r"Lstm.forward: expected an input of shape \[batch, seq, 3\]"):
        lstm.forward(t32(np.zeros((2, 5, 4))))
    with pytest.raises(ShapeError, match="hidden"):
        lstm.forward(t32(np.zeros((2, 5, 3))), LstmState(t32(np.zeros((2, 4))), t32(np.zeros((3, 4)))))
    with pytest.raises(ValueError, match="d_hidden must be a positive int"):
        LstmConfig(3, 0, True)
    with pytest.raises(ShapeError, match=r"Gru.forward: expected an input of shape \[batch, seq, 3\]"):
        GruConfig(3, 2, True).init(DEVICE).forward(t32(np.zeros((1, 2))))


def test_lstm_layer_input_gradient_matches_finite_differences() -> None:
    # Through the whole layer (input projection, fused sequence, final state), in f32.
    rng = np.random.default_rng(5)
    fused = LstmConfig(3, 4, True).init(AD)
    x = t32(rng.uniform(-1, 1, (2, 5, 3)), AD).require_grad()
    out, state = fused.forward(x)
    loss = (out * out).sum() + state.cell.sum()
    grads = loss.backward()
    gx = x.grad(grads)
    assert gx is not None
    # Finite differences on the layer in f32, a loose but independent check.
    base = x.inner().to_numpy().astype(np.float64)
    eps = 1e-3
    plain = fused.valid()
    numeric = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        for sign in (1, -1):
            probe = base.copy()
            probe[idx] += sign * eps
            o, s = plain.forward(t32(probe))
            value = float(
                (o.to_numpy().astype(np.float64) ** 2).sum() + s.cell.to_numpy().astype(np.float64).sum()
            )
            numeric[idx] += sign * value / (2 * eps)
    np.testing.assert_allclose(gx.to_numpy(), numeric, rtol=2e-2, atol=2e-3)


GRADIENTS = [
    case(
        "lstm_sequence",
        lambda xp, w, h, c: _ferrum.lstm_sequence(xp, w, h, c),
        smooth((2, 4, 12), seed="gl-x"),
        smooth((3, 12), seed="gl-w"),
        smooth((2, 3), seed="gl-h"),
        smooth((2, 3), seed="gl-c"),
        layouts=("contiguous", "transposed"),
    ),
    case(
        "lstm_sequence_reverse_clip_coupled",
        lambda xp, w, h, c: _ferrum.lstm_sequence(xp, w, h, c, True, 0.6, True),
        smooth((2, 4, 9), seed="glr-x"),
        smooth((3, 9), seed="glr-w"),
        smooth((2, 3), seed="glr-h"),
        smooth((2, 3), 0.0, 0.3, seed="glr-c"),
        layouts=("contiguous",),
    ),
    case(
        "gru_sequence",
        lambda xp, w, b, h: _ferrum.gru_sequence(xp, w, b, h),
        smooth((2, 4, 9), seed="gg-x"),
        smooth((3, 9), seed="gg-w"),
        smooth((9,), seed="gg-b"),
        smooth((2, 3), seed="gg-h"),
        layouts=("contiguous", "transposed"),
    ),
]


@pytest.mark.parametrize("c", GRADIENTS, ids=lambda c: c.name)
def test_engine_sequence_gradients_match_finite_differences(c: Any) -> None:
    check_case(c)
