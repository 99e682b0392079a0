"""mypy --strict on user code calling ``ferrum.jit.trace``: the traced callable keeps ``fn``'s signature.

One script as a user would write it (a module traced with example inputs, a plain function traced
lazily), with marks as in test_mypy_plugin: ``# E: <text>`` an expected error, ``# R: <type>``
a revealed type; every other line must be clean.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.mypy_marks import check_marks, run_mypy

SCRIPT = textwrap.dedent(
    """\
    from __future__ import annotations

    from ferrum import D2, D3, Float, Tensor
    from ferrum.backend import NdArray
    from ferrum.jit import Traced, trace
    from ferrum.nn import LinearConfig
    from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput

    device = NdArray.device()
    encoder = TransformerEncoderConfig(32, 64, 4, 2).init(device).valid()
    x: Tensor[NdArray, D3] = Tensor.zeros((2, 16, 32), device)
    fast = trace(encoder, TransformerEncoderInput(x))
    y = fast(TransformerEncoderInput(x))
    reveal_type(y)  # R: TENSOR[ferrum.backend.NdArray, ferrum.tensor.rank.D3, FLOAT]
    fast(x)  # E: expected "TransformerEncoderInput[NdArray]"

    layer = LinearConfig(32, 8).init(device)

    def head(t: Tensor[NdArray, D2], scale: float) -> Tensor[NdArray, D2]:
        return layer(t) * scale

    lazy: Traced[[Tensor[NdArray, D2], float], Tensor[NdArray, D2]] = trace(head)
    lazy(Tensor.zeros((4, 32), device), 0.5).dims()
    lazy(Tensor.zeros((4, 32), device))  # E: Too few arguments for "__call__" of "Traced"
    trace(head, Tensor.zeros((4, 32), device), "half")  # E: No overload variant of "trace" matches
    """
).replace("TENSOR", "ferrum._ferrum._tensor.Tensor").replace("FLOAT", "ferrum._ferrum._kind.Float")


def test_traced_calls_are_checked(tmp_path: Path) -> None:
    (tmp_path / "user_trace.py").write_text(SCRIPT)
    found = run_mypy(tmp_path, [str(tmp_path / "user_trace.py")], plugin=True)
    check_marks("user_trace", SCRIPT, found.get("user_trace", []))
