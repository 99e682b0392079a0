"""ONNX element types against NumPy dtypes and ferrum's (F32, F64, I64, Bool).

ferrum computes in f32/f64, i64 and bool: the narrower ONNX types (float16,
int8, uint32, ...) are computed in the nearest of these and converted back to
the declared type when a result leaves the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from ferrum.onnx.errors import OnnxError

__all__ = ["compute_dtype", "compute_kind", "numpy_dtype"]


def numpy_dtype(elem_type: int, where: str = "") -> np.dtype[Any]:
    """The NumPy dtype of an ONNX element type (bfloat16, float8 and int4 through ``ml_dtypes``)."""
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError) as exc:
        raise OnnxError(f"{where}unsupported ONNX element type {elem_type}") from exc


def compute_kind(dtype: np.dtype[Any]) -> str:
    """``f``, ``i`` or ``b`` for the ferrum kind a NumPy dtype computes in (``?`` for none).

    ``ml_dtypes``' narrow types (bfloat16, float8_*, int4, ...) have NumPy kind ``V``: their name says it.
    """
    if dtype.kind in "biuf":
        return "i" if dtype.kind == "u" else dtype.kind
    if dtype.kind == "V" and "float" in dtype.name:
        return "f"
    if dtype.kind == "V" and "int" in dtype.name:
        return "i"
    return "?"


def compute_dtype(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``array`` in the dtype ferrum computes it in (f32, f64, i64 or bool)."""
    kind = compute_kind(array.dtype)
    if kind == "b":
        return array
    if kind == "f":
        return array if array.dtype == np.float64 else array.astype(np.float32, copy=False)
    if kind == "i":
        return array.astype(np.int64, copy=False)
    raise OnnxError(f"cannot compute on {array.dtype} values (strings and complex numbers are not supported)")
