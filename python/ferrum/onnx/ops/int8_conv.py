"""The packed int8 convolution behind QLinearConv and ConvInteger: a constant int8 weight packed
once (``Int8Conv``), and QLinearConv's requantization terms worked out once per set of constant
scales and zero points, so that a call is one pass of the engine from uint8 input to uint8 output.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from ferrum._ferrum import DType, Int, Int8Conv, Tensor
from ferrum.onnx.dtypes import integer_range
from ferrum.onnx.ops._util import AnyTensor

_T = onnx.TensorProto

#: Packed weights by the identity of the graph's array (kept alive here, so the identity is not
#: reused), its zero points and groups; and by content, for code that makes its array anew.
_PACKED: dict[tuple[int, tuple[int, ...], int], tuple[np.ndarray[Any, Any], Int8Conv | None]] = {}
_BY_CONTENT: dict[tuple[bytes, tuple[int, ...], int], Int8Conv | None] = {}
#: Requantization terms by the identities of the tensors they come from (kept alive here).
_TERMS: dict[tuple[int, ...], tuple[tuple[object, ...], Requant | None]] = {}
_MAX = 64


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
    if len(cache) >= _MAX:
        cache.pop(next(iter(cache)))
    cache[key] = value


def _ints(t: AnyTensor | None) -> list[int] | None:
    """An Int tensor's values as a list (``[0]`` when absent); None when it is not Int or rank > 1."""
    if t is None:
        return [0]
    if t.kind is not Int or t.rank() > 1:
        return None
    return [int(v) for v in np.asarray(t.to_numpy()).reshape(-1)]


def packed_conv(w: object, w_zero_point: AnyTensor | None, group: int, device: Any) -> Int8Conv | None:
    """A constant ``[c_out, c_in / group, kh, kw]`` integer weight packed once with its zero points (1 or
    ``c_out``); None when ``w`` is computed at run time, is not 4-d, or holds values outside int8."""
    if not isinstance(w, np.ndarray) or w.dtype.kind not in "iu" or w.ndim != 4:
        return None
    zero = _ints(w_zero_point)
    if zero is None or len(zero) not in (1, w.shape[0]) or group < 1 or w.shape[0] % group:
        return None
    key = (id(w), tuple(zero), group)
    cached = _PACKED.get(key)
    if cached is not None and cached[0] is w:
        return cached[1]
    digest = hashlib.blake2b(f"{w.shape}{w.dtype.str}".encode() + np.ascontiguousarray(w).tobytes()).digest()
    content = (digest, tuple(zero), group)
    if content in _BY_CONTENT:
        packed = _BY_CONTENT[content]
    else:
        packed = Int8Conv.pack(Tensor.from_numpy(w.astype(np.int64), device), zero, group)
        _remember(_BY_CONTENT, content, packed)
    _remember(_PACKED, key, (w, packed))
    return packed


@dataclasses.dataclass(frozen=True)
class Requant:
    """QLinearConv's terms: ``clamp(round((sum + bias) * scale + y_zero), lo, hi)`` per output channel."""

    x_zero: int
    scale: list[float]
    bias: list[int] | None
    y_zero: int
    lo: int
    hi: int


def _factor(x_scale: AnyTensor, w_scale: AnyTensor, y_scale: AnyTensor) -> list[float] | None:
    """``x_scale * w_scale / y_scale`` per channel in the scales' float type (as the f64 path's
    ``_requantize_factor``), then as Python floats; None for scales other than f32/f64 scalars or
    a 1-D ``w_scale``."""
    arrays = [np.asarray(t.to_numpy()) for t in (x_scale, w_scale, y_scale)]
    if any(a.dtype.kind != "f" for a in arrays) or arrays[1].ndim > 1:
        return None
    if arrays[0].size != 1 or arrays[2].size != 1:
        return None
    kind: type[np.floating[Any]] = np.float64 if any(a.dtype == np.float64 for a in arrays) else np.float32
    a, b, y = (np.asarray(a, kind).reshape(-1) for a in arrays)
    product: np.ndarray[Any, np.dtype[np.floating[Any]]] = np.multiply(a, b)
    return [float(v) for v in np.divide(product, y)]


def requant_terms(
    scales: Sequence[AnyTensor],
    zeros: Sequence[AnyTensor | None],
    bias: AnyTensor | None,
    target: int,
    c_out: int,
    scale_type: int,
) -> Requant | None:
    """QLinearConv's requantization terms from its scale and zero-point tensors (x, w, y) and int32
    bias, remembered by the tensors' identities; None where the packed path does not apply (scales
    in float16/bfloat16, a per-channel input zero point, an output type other than 8-bit)."""
    refs: tuple[object, ...] = (*scales, *zeros, bias)
    key = (*(id(r) for r in refs), target, c_out, scale_type)
    hit = _TERMS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], refs, strict=True)):
        return hit[1]
    terms = _work_out(scales, zeros, bias, target, c_out, scale_type)
    _remember(_TERMS, key, (refs, terms))
    return terms


def _work_out(
    scales: Sequence[AnyTensor],
    zeros: Sequence[AnyTensor | None],
    bias: AnyTensor | None,
    target: int,
    c_out: int,
    scale_type: int,
) -> Requant | None:
    bounds = integer_range(target)
    if bounds is None or target not in (_T.UINT8, _T.INT8) or scale_type in (_T.FLOAT16, _T.BFLOAT16):
        return None
    x_zero, y_zero = _ints(zeros[0]), _ints(zeros[2])
    if x_zero is None or y_zero is None or len(x_zero) != 1 or len(y_zero) != 1:
        return None
    factor = _factor(*scales)
    if factor is None or len(factor) not in (1, c_out):
        return None
    bias_values: list[int] | None = None
    if bias is not None:
        if bias.kind is not Int or bias.rank() != 1 or bias.dims()[0] != c_out:
            return None
        values = np.asarray(bias.to_numpy()).astype(np.int64)
        if values.min(initial=0) < -(2**31) or values.max(initial=0) >= 2**31:
            return None
        bias_values = [int(v) for v in values]
    return Requant(x_zero[0], factor, bias_values, y_zero[0], bounds[0], bounds[1])


def conv_geometry(
    x: AnyTensor, w_dims: Sequence[int], settings: tuple[Any, ...]
) -> tuple[tuple[int, int], tuple[int, int, int, int], tuple[int, int], bool] | None:
    """Strides, pads (top, left, bottom, right), dilations and whether the convolution is 1-d (run
    as 2-d over a height of 1), from Conv's attributes; None where the packed path does not apply."""
    from ferrum.onnx.ops.conv import _settings

    auto_pad, dilations, _group, kernel_shape, pads, strides = settings
    if x.rank() not in (3, 4) or len(w_dims) != x.rank():
        return None
    kernel = list(kernel_shape or w_dims[2:])
    if list(w_dims[2:]) != kernel:
        return None
    s, d, p = _settings(x, kernel, strides, dilations, pads, auto_pad)
    one_d = x.rank() == 3
    if one_d:
        s, d, p = [1, *s], [1, *d], [(0, 0), *p]
    if min(s) < 1 or min(d) < 1 or min(min(pair) for pair in p) < 0:
        return None
    return (s[0], s[1]), (p[0][0], p[1][0], p[0][1], p[1][1]), (d[0], d[1]), one_d


def as_int8_input(x: AnyTensor) -> AnyTensor | None:
    """``x`` as the packed convolution reads it (an Int tensor; U8 read in place), or None."""
    return x if x.kind is Int and x.dtype in (DType.U8, DType.I64, DType.I32) else None
