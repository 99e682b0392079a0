"""The sequence-model rows of benches/compare.py (issue 16): an LSTM forward and
backward, a transformer encoder training step and multi-head attention at
sequence length 512, in ferrum and (when importable) PyTorch.

Each row's ``setup`` returns one callable per framework, keyed ``"ferrum"`` and
``"torch"``, as compare.py's ``Workload`` expects. Both frameworks run the same
sizes from the same NumPy data; the weights are each framework's own random
initialisation (speed does not depend on their values). Dropout is 0 in both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import D3, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import LstmConfig
from ferrum.nn.attention import MhaInput, MultiHeadAttentionConfig
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput
from ferrum.optim import AdamConfig, GradientsParams

Thunk = Callable[[], object]
Setup = Callable[[], dict[str, Thunk]]


def _data(shape: tuple[int, ...]) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.random.default_rng(3).standard_normal(shape).astype(np.float32)


def _lstm(torch: Any, d_input: int = 128, d_hidden: int = 256, seq: int = 64, batch: int = 32) -> Setup:
    def setup() -> dict[str, Thunk]:
        nx = _data((batch, seq, d_input))
        device = Autodiff[NdArray].device()
        lstm = LstmConfig(d_input, d_hidden, True).init(device)
        x: Tensor[Autodiff[NdArray], D3] = Tensor.from_numpy(nx, device).require_grad()

        def ferrum_step() -> None:
            out, _ = lstm.forward(x)
            out.sum().backward()

        cases: dict[str, Thunk] = {"ferrum": ferrum_step}
        if torch is not None:
            tlstm = torch.nn.LSTM(d_input, d_hidden, batch_first=True)
            tx = torch.from_numpy(nx).requires_grad_()

            def torch_step() -> None:
                tout, _ = tlstm(tx)
                tout.sum().backward()
                tx.grad = None
                tlstm.zero_grad(set_to_none=True)

            cases["torch"] = torch_step
        return cases

    return setup


def _encoder_step(
    torch: Any,
    d_model: int = 256,
    n_heads: int = 4,
    d_ff: int = 1024,
    layers: int = 4,
    seq: int = 128,
    batch: int = 16,
) -> Setup:
    def setup() -> dict[str, Thunk]:
        nx = _data((batch, seq, d_model))
        device = Autodiff[NdArray].device()
        model = TransformerEncoderConfig(d_model, d_ff, n_heads, layers).with_dropout(0.0).init(device)
        optim = AdamConfig().init()
        x: Tensor[Autodiff[NdArray], D3] = Tensor.from_numpy(nx, device)

        def ferrum_step() -> None:
            nonlocal model
            loss = model.forward(TransformerEncoderInput(x)).square().mean()
            model = optim.step(1e-4, model, GradientsParams.from_grads(loss.backward(), model))

        cases: dict[str, Thunk] = {"ferrum": ferrum_step}
        if torch is not None:
            layer = torch.nn.TransformerEncoderLayer(
                d_model, n_heads, d_ff, dropout=0.0, activation="gelu", batch_first=True
            )
            tmodel = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            toptim = torch.optim.Adam(tmodel.parameters(), lr=1e-4)
            tx = torch.from_numpy(nx)

            def torch_step() -> None:
                toptim.zero_grad(set_to_none=True)
                tmodel(tx).square().mean().backward()
                toptim.step()

            cases["torch"] = torch_step
        return cases

    return setup


def _mha(torch: Any, d_model: int = 256, n_heads: int = 4, seq: int = 512, batch: int = 8) -> Setup:
    def setup() -> dict[str, Thunk]:
        nx = _data((batch, seq, d_model))
        device = NdArray.device()
        mha = MultiHeadAttentionConfig(d_model, n_heads).with_dropout(0.0).init(device)
        x: Tensor[NdArray, D3] = Tensor.from_numpy(nx, device)
        cases: dict[str, Thunk] = {"ferrum": lambda: mha.forward(MhaInput.self_attn(x))}
        if torch is not None:
            tmha = torch.nn.MultiheadAttention(d_model, n_heads, dropout=0.0, batch_first=True)
            tx = torch.from_numpy(nx)
            cases["torch"] = lambda: tmha(tx, tx, tx)
        return cases

    return setup


def sequence_cases(torch: Any) -> list[tuple[str, Setup, bool]]:
    """(row name, setup, keeps autograd on) of each sequence row."""
    return [
        ("lstm 128->256 seq64 b32 f+b", _lstm(torch), True),
        ("encoder d256 L4 s128 b16 adam step", _encoder_step(torch), True),
        ("mha d256 h4 seq512 b8 fwd", _mha(torch), False),
    ]
