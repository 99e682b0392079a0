"""Float64 round trips shared by the layer and linear-algebra tests: NumPy to a ferrum f64 tensor and back.

Tests compare in f64 so that the NumPy references, not rounding, set the tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from ferrum import DType, Tensor
from ferrum.backend import NdArray

Array = npt.NDArray[Any]


def arr(t: Tensor[Any, Any, Any]) -> Array:
    """``t``'s values as a float64 NumPy array."""
    return np.asarray(t.to_numpy(), dtype=np.float64)


def f64(a: npt.ArrayLike, device: Any = None) -> Tensor[Any, Any, Any]:
    """``a`` as a contiguous f64 tensor on ``device`` (NdArray's by default)."""
    device = NdArray.device() if device is None else device
    return Tensor.from_numpy(np.ascontiguousarray(a, dtype=np.float64), device, dtype=DType.F64)
