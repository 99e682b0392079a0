"""ONNX element types against NumPy dtypes and ferrum's (F32, F64, I64, Bool).

ferrum computes in f32/f64, i64 and bool: the narrower ONNX types (float16,
int8, uint32, ...) are computed in the nearest of these and converted back to
the declared type when a result leaves the graph. Strings are no ferrum
tensors: they stay NumPy arrays of ``str`` (``ferrum.onnx.values``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from ferrum.onnx.errors import OnnxError
from ferrum.onnx.values import to_strings

__all__ = [
    "compute_dtype",
    "compute_kind",
    "integer_range",
    "is_narrow_float",
    "narrow_float_values",
    "numpy_dtype",
]

_T = onnx.TensorProto
# The float8/float6/float4 types: ferrum holds their values in f32 (see ``narrow_float_values``).
_NARROW_FLOATS = frozenset(
    getattr(_T, name)
    for name in (
        "FLOAT8E4M3FN",
        "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ",
        "FLOAT8E8M0",
        "FLOAT6E2M3",
        "FLOAT6E3M2",
        "FLOAT4E2M1",
    )
    if hasattr(_T, name)
)
# the float8 types whose ``saturate`` choice matters (the others have no infinity to overflow to)
_SATURABLE = frozenset((_T.FLOAT8E4M3FN, _T.FLOAT8E4M3FNUZ, _T.FLOAT8E5M2, _T.FLOAT8E5M2FNUZ))
_INTEGER_RANGES: dict[int, tuple[int, int]] = {
    _T.UINT8: (0, 255),
    _T.INT8: (-128, 127),
    _T.UINT16: (0, 65535),
    _T.INT16: (-32768, 32767),
    _T.UINT4: (0, 15),
    _T.INT4: (-8, 7),
    **({_T.UINT2: (0, 3), _T.INT2: (-2, 1)} if hasattr(_T, "INT2") else {}),
}


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
    """``array`` in the dtype ferrum computes it in (f32, f64, i64 or bool).

    Strings (a ``str``, ``bytes`` or ``object`` array of them, ONNX's ``tensor(string)``) are not computed
    by ferrum's engine: they come back as a string tensor (``ferrum.onnx.values.StringTensor``, dtype
    ``object`` holding ``str``), which only the string ops read.
    """
    kind = compute_kind(array.dtype)
    if array.dtype.kind in "OUS":
        try:
            return to_strings(array, "a string tensor")
        except ValueError as exc:
            raise OnnxError(f"cannot compute on {array.dtype} values: {exc}") from exc
    if kind == "b":
        return array
    if kind == "f":
        return array if array.dtype == np.float64 else array.astype(np.float32, copy=False)
    if kind == "i":
        return array.astype(np.int64, copy=False)
    raise OnnxError(f"cannot compute on {array.dtype} values (complex numbers are not supported)")


def is_narrow_float(elem_type: int) -> bool:
    """Whether ONNX type ``elem_type`` is a float8, float6 or float4 type (held in f32 by ferrum)."""
    return elem_type in _NARROW_FLOATS


def integer_range(elem_type: int) -> tuple[int, int] | None:
    """The values a quantized integer type holds (uint8: ``(0, 255)``...), or None for other types."""
    return _INTEGER_RANGES.get(elem_type)


def narrow_float_values(
    array: np.ndarray[Any, Any], elem_type: int, saturate: bool = True, round_mode: str = "up"
) -> np.ndarray[Any, Any]:
    """``array`` rounded to float8/float6/float4 type ``elem_type``, as float32 holding exactly those values.

    As ONNX's Cast: round to nearest even; with ``saturate`` a value beyond
    the type's range (infinities included) becomes its largest finite value,
    without it the type's NaN or infinity. FLOAT8E8M0 (powers of two) rounds
    as ``round_mode`` says (``up``, ``down`` or ``nearest``). The rounding is
    ``ml_dtypes``' (through ``onnx.numpy_helper``): ferrum's engine has no
    such types.
    """
    dtype = numpy_dtype(elem_type)
    if elem_type == _T.FLOAT8E8M0:
        rounded = onnx.numpy_helper.to_float8e8m0(array.astype(np.float32), saturate, round_mode)
    elif saturate and elem_type in _SATURABLE:
        rounded = onnx.numpy_helper.saturate_cast(array, dtype)
    else:
        rounded = array.astype(dtype)
    return np.asarray(rounded).astype(np.float32)
