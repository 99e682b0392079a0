"""The reduction rows of benches/compare.py: ``sum`` and ``mean`` of a whole
1-d tensor, and ``sum_dim`` over the last and the first dim of a ``[n/1K, 1K]``
matrix, at each size of the run.

Every row states the bytes one call reads, so compare.py reports its GB/s
(issue 19's target is stated in GB/s: sum of 16M floats at memory bandwidth).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from compare_core import FERRUM, NUMPY, Thunk, Workload, rand, size_label, with_torch
from ferrum import D1, D2, Tensor
from ferrum.backend import NdArray


def reduce_workloads(torch: Any, sizes: tuple[int, ...]) -> list[Workload]:
    """sum, mean, sum_dim(-1) and sum_dim(0) over ``n`` float32 values, for each ``n`` of ``sizes``."""
    rng = np.random.default_rng(0)
    device = NdArray.device()

    def whole(n: int, op: str) -> dict[str, Thunk]:
        a = rand(rng, (n,))
        fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
        fn: Thunk = fa.sum if op == "sum" else fa.mean
        cases: dict[str, Thunk] = {FERRUM: fn, NUMPY: getattr(a, op)}
        return with_torch(cases, torch, lambda: getattr(torch.from_numpy(a), op))

    def along(n: int, dim: int) -> dict[str, Thunk]:
        a = rand(rng, (n // 1024, 1024))
        fa: Tensor[NdArray, D2] = Tensor.from_numpy(a, device)
        cases: dict[str, Thunk] = {
            FERRUM: functools.partial(fa.sum_dim, dim),
            NUMPY: functools.partial(a.sum, axis=dim),
        }
        return with_torch(cases, torch, lambda: functools.partial(torch.from_numpy(a).sum, dim=dim))

    out: list[Workload] = []
    for n in sizes:
        nbytes = 4 * n
        matrix = f"[{size_label(n // 1024)},1K]"
        out += [
            Workload(f"sum {size_label(n)}", functools.partial(whole, n, "sum"), nbytes=nbytes),
            Workload(f"mean {size_label(n)}", functools.partial(whole, n, "mean"), nbytes=nbytes),
            Workload(f"sum_dim(-1) {matrix}", functools.partial(along, n, -1), nbytes=nbytes),
            Workload(f"sum_dim(0) {matrix}", functools.partial(along, n, 0), nbytes=nbytes),
        ]
    return out
