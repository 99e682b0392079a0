"""The matmul rows of benches/compare.py and their per-call percentiles.

Rows: square float32 products (64 to 2048; 64 and 128 in quick mode) and the
products training runs (issue 19):

- ``mlp fwd``: the 784-512-10 MLP's first layer, ``X[b,784] @ W[784,512]``,
  at batch 64 and 256;
- ``mlp dX``: its input gradient ``dY[64,512] @ W^T``, with W stored
  ``[784,512]`` and read through a transposed view, as the autodiff does;
- ``mlp dW``: its weight gradient ``X^T @ dY[64,512]``, X stored ``[64,784]``
  and transposed by a view;
- ``attn qkv``: attention's input projection ``[B*T, d] @ [d, 3d]`` with
  B=32, T=128, d=256;
- ``attn scores`` and ``attn context``: the batched ``Q @ K^T`` and
  ``softmax(scores) @ V`` with B*H=32*8 heads, T=128, d_k=32 (K transposed by
  a view, as ferrum's multi-head attention does).

A name writes each operand as stored; ``^T`` marks one the product reads
through a view that swaps its last two dims (``.transpose()`` in ferrum,
``np.swapaxes`` in NumPy, ``.transpose(-2, -1)`` in torch).

``matmul bf16`` rows: the same square products and the MLP layer ``X[64,1024] @
W[1024,4096]`` with both operands in bfloat16 (ferrum's ``DType.BF16``, torch's
``torch.bfloat16``; NumPy has no bfloat16), f32 accumulation in both.

Every row states its flops, so compare.py times single calls of it too and
reports p10, p50 and p90 of their GF/s (``percentile_rows``): the best round
hides calls that run slower (e.g. on one core), the 10th percentile shows them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from operator import matmul
from typing import Any, TypeVar

import numpy as np
from compare_core import F32, FERRUM, FRAMEWORKS, NAME_WIDTH, NUMPY, Result, Thunk, Workload, rand, with_torch
from ferrum import DType, Tensor
from ferrum.backend import NdArray


@dataclass(frozen=True)
class Operand:
    """A matmul operand: its ``shape`` as stored, and whether the product reads it transposed."""

    shape: tuple[int, ...]
    transposed: bool = False

    def label(self) -> str:
        return f"[{','.join(map(str, self.shape))}]" + ("^T" if self.transposed else "")

    def seen(self) -> tuple[int, ...]:
        """The shape the product sees."""
        if not self.transposed:
            return self.shape
        *batch, rows, cols = self.shape
        return (*batch, cols, rows)


def matmul_flops(a: Operand, b: Operand) -> int:
    """Multiply-adds of ``a @ b``, twice (one multiply and one add each)."""
    *batch, m, k = a.seen()
    n = b.seen()[-1]
    return 2 * math.prod(batch) * m * k * n


MLP_B64 = (
    ("mlp fwd b64", Operand((64, 784)), Operand((784, 512))),
    ("mlp dX b64", Operand((64, 512)), Operand((784, 512), transposed=True)),
    ("mlp dW b64", Operand((64, 784), transposed=True), Operand((64, 512))),
)
TRAINING = (
    *MLP_B64,
    ("mlp fwd b256", Operand((256, 784)), Operand((784, 512))),
    ("attn qkv", Operand((32 * 128, 256)), Operand((256, 3 * 256))),
    ("attn scores", Operand((32 * 8, 128, 32)), Operand((32 * 8, 128, 32), transposed=True)),
    ("attn context", Operand((32 * 8, 128, 128)), Operand((32 * 8, 128, 32))),
)


X = TypeVar("X")


def _seen(x: X, operand: Operand, swap: Callable[[X], X]) -> X:
    """``x`` as the product reads it: through ``swap`` (a view) when ``operand`` is transposed."""
    return swap(x) if operand.transposed else x


def _swap_last(x: F32) -> F32:
    return np.swapaxes(x, -1, -2)


def matmul_workloads(torch: Any, quick: bool) -> list[Workload]:
    """Square products, then the training shapes (a subset of each in quick mode)."""
    rng = np.random.default_rng(0)
    device = NdArray.device()

    def setup(a: Operand, b: Operand) -> dict[str, Thunk]:
        na, nb = rand(rng, a.shape), rand(rng, b.shape)
        # Views are made once here, so the rows time the product on them alone.
        fa = _seen(Tensor.from_numpy(na, device), a, lambda t: t.transpose())
        fb = _seen(Tensor.from_numpy(nb, device), b, lambda t: t.transpose())
        va, vb = _seen(na, a, _swap_last), _seen(nb, b, _swap_last)
        # partial, not a lambda: no Python frame between the timing loop and the call
        cases: dict[str, Thunk] = {FERRUM: partial(matmul, fa, fb), NUMPY: partial(matmul, va, vb)}

        def torch_case() -> Thunk:
            ta = _seen(torch.from_numpy(na), a, lambda t: t.transpose(-2, -1))
            tb = _seen(torch.from_numpy(nb), b, lambda t: t.transpose(-2, -1))
            return partial(matmul, ta, tb)

        return with_torch(cases, torch, torch_case)

    def row(name: str, a: Operand, b: Operand) -> Workload:
        return Workload(name, lambda: setup(a, b), flops=matmul_flops(a, b))

    out = [
        row(f"matmul f32 {n}x{n}", Operand((n, n)), Operand((n, n)))
        for n in ((64, 128) if quick else (64, 128, 256, 512, 768, 1024, 2048))
    ]
    for label, a, b in MLP_B64 if quick else TRAINING:
        out.append(row(f"matmul {label} {a.label()}x{b.label()}", a, b))
    return out


def half_matmul_workloads(torch: Any, quick: bool) -> list[Workload]:
    """bfloat16 products (square, then the MLP layer; one small square in quick mode)."""
    rng = np.random.default_rng(1)
    device = NdArray.device()

    def setup(a: tuple[int, int], b: tuple[int, int]) -> dict[str, Thunk]:
        na, nb = rand(rng, a), rand(rng, b)
        fa, fb = (Tensor.from_numpy(x, device, dtype=DType.BF16) for x in (na, nb))
        cases: dict[str, Thunk] = {FERRUM: partial(matmul, fa, fb)}

        def torch_case() -> Thunk:
            return partial(matmul, torch.from_numpy(na).bfloat16(), torch.from_numpy(nb).bfloat16())

        return with_torch(cases, torch, torch_case)

    shapes = [((n, n), (n, n)) for n in ((64,) if quick else (512, 1024, 2048))]
    if not quick:
        shapes.append(((64, 1024), (1024, 4096)))
    return [
        Workload(
            f"matmul bf16 {'x'.join(map(str, a))}x{b[1]}",
            partial(setup, a, b),
            flops=matmul_flops(Operand(a), Operand(b)),
        )
        for a, b in shapes
    ]


# --------------------------------------------------------------------------- percentiles


@dataclass(frozen=True)
class CallRates:
    """Per-call GF/s of one framework on one row: how many calls, p10, p50,
    p90, and ``steadiness`` = p10 / p50 (1 when every call runs as fast as the
    median one; issue 19 asks for at least 0.9 at 1024x1024)."""

    calls: int
    p10: float
    p50: float
    p90: float
    steadiness: float


def call_rates(calls_ns: list[int], flops: int) -> CallRates:
    """Percentiles of the GF/s of single calls timed at ``calls_ns`` nanoseconds."""
    rates = [flops / max(ns, 1) for ns in calls_ns]  # flop per ns = GF/s
    if len(rates) < 2:
        return CallRates(len(rates), rates[0], rates[0], rates[0], 1.0)
    deciles = statistics.quantiles(rates, n=10, method="inclusive")
    p50 = statistics.median(rates)
    return CallRates(len(rates), deciles[0], p50, deciles[8], deciles[0] / p50)


def rates_by_framework(result: Result) -> dict[str, CallRates]:
    """Each framework's ``CallRates`` on a row that timed single calls."""
    return {
        framework: call_rates(result.calls_ns[framework], result.flops)
        for framework in FRAMEWORKS
        if result.calls_ns.get(framework)
    }


def median_rates(per_pass: list[CallRates]) -> CallRates:
    """Each figure's median over passes (the steadiness too: not a ratio of medians)."""
    return CallRates(
        round(statistics.median(s.calls for s in per_pass)),
        statistics.median(s.p10 for s in per_pass),
        statistics.median(s.p50 for s in per_pass),
        statistics.median(s.p90 for s in per_pass),
        statistics.median(s.steadiness for s in per_pass),
    )


PERCENTILE_HEADER = ("workload", "framework", "calls", "p10 GF/s", "p50 GF/s", "p90 GF/s", "p10/p50")
PERCENTILE_WIDTHS = (NAME_WIDTH, 9, 6, 9, 9, 9, 8)


def percentile_rows(named: list[tuple[str, dict[str, CallRates]]]) -> list[tuple[str, ...]]:
    """Table cells: one line per framework of each row, the row's name on its first."""
    rows: list[tuple[str, ...]] = []
    for name, by_framework in named:
        for i, (framework, s) in enumerate(by_framework.items()):
            rows.append(
                (
                    name if i == 0 else "",
                    framework,
                    str(s.calls),
                    f"{s.p10:.1f}",
                    f"{s.p50:.1f}",
                    f"{s.p90:.1f}",
                    f"{s.steadiness:.2f}",
                )
            )
    return rows


def pass_percentiles(results: list[Result]) -> list[tuple[str, dict[str, CallRates]]]:
    """The rows of one pass that timed single calls, with their per-call rates."""
    return [(r.name, rates_by_framework(r)) for r in results if r.calls_ns]


def median_percentiles(passes: list[list[Result]]) -> list[tuple[str, dict[str, CallRates]]]:
    """Per row and framework, the median over passes of each percentile."""
    named: list[tuple[str, dict[str, CallRates]]] = []
    for i, first in enumerate(passes[0]):
        if not first.calls_ns:
            continue
        per_pass = [rates_by_framework(p[i]) for p in passes]
        medians = {
            framework: median_rates([s[framework] for s in per_pass if framework in s])
            for framework in FRAMEWORKS
            if any(framework in s for s in per_pass)
        }
        named.append((first.name, medians))
    return named
