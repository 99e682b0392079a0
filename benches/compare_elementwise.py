"""The element-wise rows of benches/compare.py: add, exp and ``a*b+1.0`` over
1-d tensors, the same ops on 4 floats (what dispatch from Python costs), and
softmax over the last dim.

Tiny-op rows call the bound operation directly (no Python frame in between),
so they measure what ``a + b`` costs from Python, dispatch included.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import ferrum
import numpy as np
from compare_core import FERRUM, NUMPY, TORCH, Thunk, Workload, rand, size_label, with_torch
from ferrum import D1, D2, Tensor
from ferrum.backend import NdArray


def elementwise_workloads(torch: Any, sizes: tuple[int, ...], quick: bool) -> list[Workload]:
    """add, exp and a*b+1.0 at each of ``sizes``, the tiny rows, then softmax."""
    rng = np.random.default_rng(0)
    device = NdArray.device()

    def add(n: int) -> dict[str, Thunk]:
        a, b = rand(rng, (n,)), rand(rng, (n,))
        fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
        fb: Tensor[NdArray, D1] = Tensor.from_numpy(b, device)
        cases: dict[str, Thunk] = {
            FERRUM: functools.partial(operator.add, fa, fb),
            NUMPY: functools.partial(operator.add, a, b),
        }
        return with_torch(
            cases, torch, lambda: functools.partial(operator.add, torch.from_numpy(a), torch.from_numpy(b))
        )

    def exp(n: int) -> dict[str, Thunk]:
        a = rand(rng, (n,))
        fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
        cases: dict[str, Thunk] = {FERRUM: fa.exp, NUMPY: functools.partial(np.exp, a)}
        return with_torch(cases, torch, lambda: torch.from_numpy(a).exp)

    def mul_add(n: int) -> dict[str, Thunk]:
        a, b = rand(rng, (n,)), rand(rng, (n,))
        fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
        fb: Tensor[NdArray, D1] = Tensor.from_numpy(b, device)
        cases: dict[str, Thunk] = {FERRUM: lambda: fa * fb + 1.0, NUMPY: lambda: a * b + 1.0}
        if torch is not None:
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            cases[TORCH] = lambda: ta * tb + 1.0
        return cases

    def softmax(rows: int) -> dict[str, Thunk]:
        a = rand(rng, (rows, 1024))
        fa: Tensor[NdArray, D2] = Tensor.from_numpy(a, device)

        def np_softmax() -> object:
            e = np.exp(a - a.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

        cases: dict[str, Thunk] = {
            FERRUM: functools.partial(ferrum.activation.softmax, fa, 1),
            NUMPY: np_softmax,
        }
        return with_torch(cases, torch, lambda: functools.partial(torch.softmax, torch.from_numpy(a), -1))

    out: list[Workload] = []
    for n in sizes:
        out.append(Workload(f"add {size_label(n)}", functools.partial(add, n)))
        out.append(Workload(f"exp {size_label(n)}", functools.partial(exp, n)))
        out.append(Workload(f"a*b+1.0 {size_label(n)}", functools.partial(mul_add, n)))
    out.append(Workload("tiny add [4]", functools.partial(add, 4)))
    out.append(Workload("tiny exp [4]", functools.partial(exp, 4)))
    for rows in (64, 256) if quick else (64, 4096):
        out.append(Workload(f"softmax [{rows},1024]", functools.partial(softmax, rows)))
    return out
