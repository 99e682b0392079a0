"""The creation rows of benches/compare.py: tensors from Python lists (``Tensor.from_data``
against ``np.asarray`` and ``torch.tensor``), the way data arrives from user code.

Rows: a flat list of Python floats, the same values as rows of 1000 (nested
lists), Python ints, and NumPy float32 scalars (what iterating an array gives):
each walks a different path of the nested-list reader.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from compare_core import FERRUM, NUMPY, Thunk, Workload, size_label, with_torch
from ferrum import Tensor
from ferrum.backend import NdArray


def creation_workloads(torch: Any, quick: bool) -> list[Workload]:
    """from_data over lists of 64K (quick) or 1M values, in four shapes of data."""
    rng = np.random.default_rng(0)
    device = NdArray.device()
    n = 1 << 16 if quick else 1 << 20

    def lists(kind: str) -> dict[str, Thunk]:
        values = rng.random(n)
        data: list[Any]
        if kind == "floats":
            data = values.tolist()
        elif kind == "rows":
            data = values.reshape(-1, 1 << 10).tolist()
        elif kind == "ints":
            data = (values * 1000).astype(np.int64).tolist()
        else:
            data = list(values.astype(np.float32))
        dtype = np.int64 if kind == "ints" else np.float32
        cases: dict[str, Thunk] = {
            FERRUM: functools.partial(Tensor.from_data, data, device),
            NUMPY: functools.partial(np.asarray, data, dtype),
        }
        return with_torch(cases, torch, lambda: functools.partial(torch.tensor, data))

    label = size_label(n)
    return [
        Workload(f"from_data floats [{label}]", functools.partial(lists, "floats")),
        Workload(f"from_data rows [{n >> 10},1K]", functools.partial(lists, "rows")),
        Workload(f"from_data ints [{label}]", functools.partial(lists, "ints")),
        Workload(f"from_data np.float32s [{label}]", functools.partial(lists, "numpy")),
    ]
