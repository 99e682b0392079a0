"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv,
ConvInteger, BitCast.

ferrum has no int8/int4/float8 tensors: a quantized integer value (int8,
uint8, int16, uint16, int4, uint4, int2, uint2) is an Int (i64) tensor
holding the clamped values, a float8/float4 one an f32 tensor holding
exactly the values the type represents; the graph's outputs are converted
to the declared types when they leave it. Which quantized type a node
produces is read from its zero point's declared ONNX type, which the runner
passes as ``input_types`` (the declared type of each input, 0 when unknown).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx

from ferrum._ferrum import DType, Int, Tensor, dynamic_quantize_u8, int8_conv2d
from ferrum.onnx.dtypes import (
    compute_dtype,
    integer_range,
    is_narrow_float,
    narrow_float_values,
    numpy_dtype,
)
from ferrum.onnx.ops._util import AnyTensor, float_of, to_rank
from ferrum.onnx.ops._util import axis as axis_of
from ferrum.onnx.ops.conv import _settings, conv
from ferrum.onnx.ops.int8_conv import Requant, as_int8_input, conv_geometry, packed_conv, requant_terms
from ferrum.onnx.ops.linear import _zero_points, as_tensor, integer_product, mat_mul
from ferrum.onnx.ops.registry import op

__all__ = [
    "bit_cast",
    "conv_integer",
    "dequantize_linear",
    "dynamic_quantize_linear",
    "q_linear_conv",
    "q_linear_matmul",
    "quantize_linear",
]

_T = onnx.TensorProto


def _type_of(input_types: Sequence[int], index: int) -> int:
    return input_types[index] if index < len(input_types) else 0


def _quantized_type(
    name: str, zero_point: AnyTensor | None, input_types: Sequence[int], index: int, output_dtype: int = 0
) -> int:
    """The ONNX type a node quantizes to: its zero point's, else ``output_dtype``, else UINT8."""
    declared = _type_of(input_types, index) if zero_point is not None else 0
    if zero_point is not None and not declared and not output_dtype:
        raise ValueError(
            f"{name}: the zero point's ONNX type is unknown (expected it in input_types[{index}], "
            f"found {tuple(input_types)}); pass output_dtype"
        )
    if declared and output_dtype and declared != output_dtype:
        raise ValueError(
            f"{name}: output_dtype {_T.DataType.Name(output_dtype)} differs from the zero point's type "
            f"{_T.DataType.Name(declared)}"
        )
    found = declared or output_dtype or _T.UINT8
    if integer_range(found) is None and not is_narrow_float(found):
        raise ValueError(
            f"{name}: expected a quantized type (int8, uint8, int16, uint16, int4, uint4, int2, uint2, "
            f"float8, float4), found {_T.DataType.Name(found)}"
        )
    return found


def _param(value: AnyTensor, x: AnyTensor, axis: int, block_size: int, what: str) -> AnyTensor:
    """A scale or zero point shaped to broadcast against ``x``: per tensor, per axis or per block.

    A scalar (or one element) applies to all of ``x``; a 1-D ``[x.dims[axis]]``
    per slice along ``axis``; with ``block_size`` a tensor of ``x``'s rank whose
    ``axis`` dim is ``ceil(x.dims[axis] / block_size)`` per block of
    ``block_size`` consecutive elements along ``axis``.
    """
    dims = list(x.dims())
    rank = len(dims)
    if value.rank() == 0 or (value.rank() == 1 and value.dims()[0] == 1 and not block_size):
        return to_rank(value.reshape((1,)), max(rank, 1)) if rank else value.reshape(())
    a = axis_of(axis, rank)
    if not block_size:
        if value.rank() != 1 or value.dims()[0] != dims[a]:
            raise ValueError(
                f"{what}: expected a scalar or a 1-D tensor of {dims[a]} (x's dim {a}), "
                f"found shape {list(value.dims())}"
            )
        shape = [1] * rank
        shape[a] = dims[a]
        return value.reshape(tuple(shape))
    if block_size < 0:
        raise ValueError(f"{what}: block_size must be positive, found {block_size}")
    blocks = -(-dims[a] // block_size)
    want = [*dims[:a], blocks, *dims[a + 1 :]]
    if list(value.dims()) != want:
        raise ValueError(
            f"{what}: blocked quantization along axis {a} with block_size {block_size} expects shape "
            f"{want}, found {list(value.dims())}"
        )
    # each block's value repeated block_size times along the axis, the last block cut to fit
    grown = value.reshape(tuple([*want[: a + 1], 1, *want[a + 1 :]]))
    grown = grown.expand(tuple([*want[: a + 1], block_size, *want[a + 1 :]]))
    grown = grown.reshape(tuple([*dims[:a], blocks * block_size, *dims[a + 1 :]]))
    return grown.narrow(a, 0, dims[a])


def _common_float(a: AnyTensor, b: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``a`` and ``b`` as Float in one dtype (f64 if either is)."""
    a, b = float_of(a), float_of(b)
    if a.dtype != b.dtype:
        a, b = a.cast(DType.F64), b.cast(DType.F64)
    return a, b


def _round_through(x: AnyTensor, elem_type: int) -> AnyTensor:
    """``x`` rounded to float16 or bfloat16 (held in f32): NumPy, as ferrum.onnx computes these in f32."""
    if elem_type not in (_T.FLOAT16, _T.BFLOAT16):
        return x
    array = np.asarray(x.to_numpy()).astype(numpy_dtype(elem_type)).astype(np.float32)
    return Tensor.from_numpy(array, x.device())


def _saturate(values: AnyTensor, elem_type: int, saturate: int = 1) -> AnyTensor:
    """Float ``values`` as quantized type ``elem_type``: rounded half to even and clamped (Int), or
    rounded to the float8/float4 type (f32)."""
    bounds = integer_range(elem_type)
    if bounds is None:
        rounded = narrow_float_values(np.asarray(values.to_numpy()), elem_type, bool(saturate))
        return Tensor.from_numpy(rounded, values.device())
    low, high = bounds
    # NaN goes to the low end, as the reference's int32 conversion (INT32_MIN) then clip does
    values = values.mask_fill(values.is_nan(), float(low))
    return values.round().clamp(float(low), float(high)).int()


@op("QuantizeLinear")
def quantize_linear(
    x: AnyTensor,
    y_scale: AnyTensor,
    y_zero_point: AnyTensor | None = None,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: int = 0,
    saturate: int = 1,
    precision: int = 0,
    input_types: tuple[int, ...] = (),
) -> AnyTensor:
    """``saturate(round(x / y_scale) + y_zero_point)`` in the zero point's type (uint8 without one).

    ``y_scale`` and ``y_zero_point`` are scalars (per tensor), 1-D along
    ``axis`` (per axis) or, with ``block_size``, of ``x``'s rank with
    ``ceil(dims[axis] / block_size)`` along ``axis`` (per block). Integer
    types round half to even and clamp to their range, giving an Int tensor
    (uint8: 0..255); float8/float4 types give an f32 tensor of the type's
    values (``saturate`` clamps overflow to the largest finite value).
    ``output_dtype`` names the type when there is no zero point; ``precision``
    (FLOAT16, BFLOAT16) rounds the division's operands and result to it.

    Example: ``x = [0, 2, 300, -300]``, ``y_scale = 2``, a uint8 zero point
    128 give ``[128, 129, 255, 0]``.
    """
    target = _quantized_type("QuantizeLinear", y_zero_point, input_types, 2, output_dtype)
    scale = _param(y_scale, x, axis, block_size, "QuantizeLinear y_scale")
    xf, scale = _common_float(x, scale)
    if precision == _T.DOUBLE:
        xf, scale = xf.cast(DType.F64), scale.cast(DType.F64)
    scaled = _round_through(_round_through(xf, precision) / _round_through(scale, precision), precision)
    if integer_range(target) is not None:
        scaled = scaled.round()
    if y_zero_point is not None:
        zero = float_of(_param(y_zero_point, x, axis, block_size, "QuantizeLinear y_zero_point"))
        scaled = scaled + zero.cast(scaled.dtype)
    return _saturate(scaled, target, saturate)


@op("DequantizeLinear")
def dequantize_linear(
    x: AnyTensor,
    x_scale: AnyTensor,
    x_zero_point: AnyTensor | None = None,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: int = 0,
) -> AnyTensor:
    """``(x - x_zero_point) * x_scale``: Float, in ``x_scale``'s dtype (f64 for a DOUBLE ``output_dtype``).

    ``x`` is a quantized tensor (Int for the integer types, f32 holding float8
    values); the scale and zero point are per tensor, per axis or per block
    as in ``quantize_linear``.
    """
    scale = float_of(_param(x_scale, x, axis, block_size, "DequantizeLinear x_scale"))
    values = float_of(x).cast(DType.F64 if scale.dtype == DType.F64 else DType.F32)
    if x_zero_point is not None:
        zero = float_of(_param(x_zero_point, x, axis, block_size, "DequantizeLinear x_zero_point"))
        values = values - zero.cast(values.dtype)
    out = values * scale.cast(values.dtype)
    if output_dtype == _T.DOUBLE:
        return out.cast(DType.F64)
    return out if not output_dtype or out.dtype == DType.F32 else out.cast(DType.F32)


@op("DynamicQuantizeLinear")
def dynamic_quantize_linear(x: AnyTensor) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``(y, y_scale, y_zero_point)``: ``x`` quantized to uint8 over its range widened to include 0.

    ``y_scale = (max(x, 0) - min(x, 0)) / 255`` (1 / 255 for an all-zero ``x``),
    ``y_zero_point = round(clamp(-min(x, 0) / y_scale, 0, 255))``,
    ``y = clamp(round(x / y_scale) + y_zero_point, 0, 255)``; scale and zero
    point are scalars (f32 and Int).
    """
    xf = float_of(x)
    if not math.prod(xf.dims()):
        raise ValueError(f"DynamicQuantizeLinear: expected a non-empty x, found shape {list(xf.dims())}")
    native = dynamic_quantize_u8(xf)
    if native is not None:
        # float32 without NaN or infinity: one vectorized range pass and one quantizing pass
        q, native_scale, native_zero = native
        device = x.device()
        return (
            q,
            Tensor.from_numpy(np.asarray(native_scale, np.float32), device),
            Tensor.from_numpy(np.asarray(native_zero, dtype=np.int64), device),
        )
    # One NumPy pass per step over the values (an int8 model runs this before every product).
    values = np.asarray(xf.to_numpy())
    high, low = float(values.max()), float(values.min())
    # the reference computes the scalars in float32: round each step through it
    top, bottom = np.float32(max(0.0, high)), np.float32(min(0.0, low))
    scale = np.float32(1.0 if top == bottom else top - bottom) / np.float32(255)
    zero = np.rint(np.clip(np.float32(0) - bottom / scale, 0, 255))
    # x / y_scale in x's float type, rounded half to even, as the reference
    y = np.clip(np.rint(values / values.dtype.type(scale)) + zero, 0, 255).astype(np.int64)
    device = x.device()
    as_dtype = np.float64 if xf.dtype == DType.F64 else np.float32
    scale_t = Tensor.from_numpy(np.asarray(scale, as_dtype), device)
    zero_t = Tensor.from_numpy(np.asarray(int(zero), dtype=np.int64), device)
    return Tensor.from_numpy(y, device), scale_t, zero_t


def _centered(q: AnyTensor, zero_point: AnyTensor | None, per_row: bool = False) -> AnyTensor:
    """``q - zero_point`` in f64 (exact for these integers); a 1-D ``per_row`` zero point is per row."""
    values = float_of(q).cast(DType.F64)
    if zero_point is None:
        return values
    zero = float_of(zero_point).cast(DType.F64)
    if per_row and zero.rank() == 1 and zero.dims()[0] > 1:
        zero = zero.reshape((-1, 1))
    return values - to_rank(zero, values.rank())


def _requantize_factor(
    scales: Sequence[AnyTensor], scale_type: int, rank: int, per_row: bool = False
) -> AnyTensor:
    """``a_scale * b_scale / y_scale`` as the reference computes it (in the scales' type), then in f64."""
    a, b, y = (float_of(s) for s in scales)
    if per_row and a.rank() == 1 and a.dims()[0] > 1:
        a = a.reshape((-1, 1))
    a, b, y = (to_rank(t, max(rank, t.rank())) for t in (a, b, y))
    product = _round_through(a * b, scale_type)
    return _round_through(product / y, scale_type).cast(DType.F64)


def _scalar_like(zero_point: AnyTensor, like: AnyTensor) -> AnyTensor:
    """A (per-tensor) zero point as Float in ``like``'s dtype and rank, to add to it."""
    return to_rank(float_of(zero_point).cast(like.dtype).reshape((-1,)), like.rank())


@op("QLinearMatMul", static=(None, None, None, "b"))
def q_linear_matmul(
    a: AnyTensor,
    a_scale: AnyTensor,
    a_zero_point: AnyTensor,
    b_scale: AnyTensor,
    b_zero_point: AnyTensor,
    y_scale: AnyTensor,
    y_zero_point: AnyTensor,
    *,
    b: AnyTensor | np.ndarray[Any, Any],
    input_types: tuple[int, ...] = (),
) -> AnyTensor:
    """Quantized matmul: ``(a - a_zp) @ (b - b_zp) * (a_scale * b_scale / y_scale) + y_zp``, saturated.

    Quantized inputs are Int tensors, the result one in ``y_zero_point``'s
    type (uint8 or int8), rounded half to even and clamped. ``a``'s scale and
    zero point may be per row, ``b``'s per column (1-D). ``b`` is a keyword
    (the graph's constant array when it is one): a constant int8 ``b`` times
    a uint8 ``a`` sums on the int8 tiles (``b`` packed once), other types in f64;
    both sums are exact, and the rescaling is the same.
    """
    target = _quantized_type("QLinearMatMul", y_zero_point, input_types, 7)
    exact = integer_product(a, a_zero_point, b, b_zero_point)
    if exact is not None:
        product = exact.float().cast(DType.F64)
    else:
        product = mat_mul(_centered(a, a_zero_point, per_row=True), _centered(as_tensor(b, a), b_zero_point))
    factor = _requantize_factor((a_scale, b_scale, y_scale), _type_of(input_types, 1), product.rank(), True)
    return _saturate((product * factor).round() + _scalar_like(y_zero_point, product), target)


def _int8_conv(
    x: AnyTensor,
    w: AnyTensor,
    x_zero_point: AnyTensor | None,
    w_zero_point: AnyTensor | None,
    settings: tuple[Any, ...],
) -> AnyTensor | None:
    """``conv(x - x_zp, w - w_zp)`` exactly on the int8 product (Int, ONNX's int32 values), for a 1-d or
    2-d convolution of uint8 ``x`` by int8 ``w`` with a per-tensor ``x_zp`` and a per-tensor or
    per-channel ``w_zp``; None when those do not hold (the f64 path computes it)."""
    if x.kind is not Int or w.kind is not Int or x.rank() not in (3, 4) or w.rank() != x.rank():
        return None
    x_zero = _zero_points(x_zero_point)
    w_zero = _zero_points(w_zero_point)
    if x_zero is None or w_zero is None or len(x_zero) != 1 or len(w_zero) not in (1, w.dims()[0]):
        return None
    auto_pad, dilations, group, kernel_shape, pads, strides = settings
    kernel = list(kernel_shape or w.dims()[2:])
    if list(w.dims()[2:]) != kernel:
        return None
    s, d, p = _settings(x, kernel, strides, dilations, pads, auto_pad)
    one_d = x.rank() == 3
    x2: AnyTensor = x
    w2: AnyTensor = w
    if one_d:
        # a 1-d convolution is a 2-d one over a height of 1
        x2, w2 = x.unsqueeze_dim(2), w.unsqueeze_dim(2)
        s, d, p = [1, *s], [1, *d], [(0, 0), *p]
    if min(s) < 1 or min(d) < 1 or min(min(pair) for pair in p) < 0:
        return None
    out = int8_conv2d(
        x2, x_zero[0], w2, w_zero, (s[0], s[1]), (p[0][0], p[1][0], p[0][1], p[1][1]), (d[0], d[1]), group
    )
    return out.squeeze_dim(2) if out is not None and one_d else out


def _conv_centered(
    x: AnyTensor,
    w: AnyTensor,
    x_zero_point: AnyTensor | None,
    w_zero_point: AnyTensor | None,
    bias: AnyTensor | None,
    settings: tuple[Any, ...],
) -> AnyTensor:
    """``conv(x - x_zp, w - w_zp) + bias`` in f64 (exact for these integers); ``w_zp`` may be per channel.

    ``settings`` are Conv's attributes in ``conv``'s order: auto_pad, dilations, group, kernel_shape,
    pads, strides.
    """
    if x.rank() < 3:
        raise ValueError(
            f"expected x of rank 3 or more ([batch, channels, *spatial]), found {list(x.dims())}"
        )
    xs = _centered(x, x_zero_point)
    ws = float_of(w).cast(DType.F64)
    if w_zero_point is not None:
        zero = float_of(w_zero_point).cast(DType.F64)
        if zero.rank() == 1 and zero.dims()[0] > 1:
            zero = zero.reshape((-1,) + (1,) * (ws.rank() - 1))
        ws = ws - to_rank(zero, ws.rank())
    biased = None if bias is None else float_of(bias).cast(DType.F64)
    result: AnyTensor = conv(xs, ws, biased, *settings)
    return result


def _packed_conv(
    x: AnyTensor,
    w: object,
    x_zero_point: AnyTensor | None,
    w_zero_point: AnyTensor | None,
    settings: tuple[Any, ...],
    terms: Callable[[int], Requant | None] | None = None,
) -> AnyTensor | None:
    """The convolution on a constant int8 ``w`` packed once: the exact sums (``terms`` None) or
    QLinearConv's requantized output (``terms(c_out)`` gives its terms); None where that path does not
    apply (the caller's general path computes it)."""
    xi = as_int8_input(x)
    packed = packed_conv(w, w_zero_point, int(settings[2]), x.device()) if xi is not None else None
    if xi is None or packed is None:
        return None
    geometry = conv_geometry(xi, packed.dims(), settings)
    if geometry is None:
        return None
    strides, pads, dilations, one_d = geometry
    x2: AnyTensor = xi.unsqueeze_dim(2) if one_d else xi
    if terms is None:
        x_zero = _zero_points(x_zero_point)
        if x_zero is None or len(x_zero) != 1:
            return None
        out = packed.conv(x2, x_zero[0], strides, pads, dilations)
    else:
        rq = terms(packed.dims()[0])
        if rq is None:
            return None
        out = packed.qlinear(
            x2, rq.x_zero, strides, pads, dilations, rq.scale, rq.bias, rq.y_zero, rq.lo, rq.hi
        )
    return out.squeeze_dim(2) if out is not None and one_d else out


@op("ConvInteger", static=(None, "w"))
def conv_integer(
    x: AnyTensor,
    x_zero_point: AnyTensor | None = None,
    w_zero_point: AnyTensor | None = None,
    auto_pad: str = "NOTSET",
    dilations: tuple[int, ...] | None = None,
    group: int = 1,
    kernel_shape: tuple[int, ...] | None = None,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
    *,
    w: AnyTensor | np.ndarray[Any, Any],
) -> AnyTensor:
    """Integer convolution of ``x - x_zero_point`` by ``w - w_zero_point`` (per output channel if 1-D): Int.

    The attributes are Conv's; padding adds zeros after the zero point is subtracted. ``w`` is a
    keyword (the graph's constant array when it is one): a constant int8 ``w`` is packed once and a
    uint8 ``x`` convolved on the int8 product; other operands sum in f64 (exact below 2**53).
    """
    settings = (auto_pad, dilations, group, kernel_shape, pads, strides)
    exact = _packed_conv(x, w, x_zero_point, w_zero_point, settings)
    if exact is not None:
        return exact
    wt = as_tensor(w, x)
    exact = _int8_conv(x, wt, x_zero_point, w_zero_point, settings)
    if exact is not None:
        return exact
    return _conv_centered(x, wt, x_zero_point, w_zero_point, None, settings).round().int()


@op("QLinearConv", static=(None, None, None, "w"))
def q_linear_conv(
    x: AnyTensor,
    x_scale: AnyTensor,
    x_zero_point: AnyTensor,
    w_scale: AnyTensor,
    w_zero_point: AnyTensor,
    y_scale: AnyTensor,
    y_zero_point: AnyTensor,
    bias: AnyTensor | None = None,
    auto_pad: str = "NOTSET",
    dilations: tuple[int, ...] | None = None,
    group: int = 1,
    kernel_shape: tuple[int, ...] | None = None,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
    input_types: tuple[int, ...] = (),
    *,
    w: AnyTensor | np.ndarray[Any, Any],
) -> AnyTensor:
    """Quantized convolution: ``conv(x - x_zp, w - w_zp) + bias``, times ``x_scale * w_scale / y_scale``,
    plus ``y_zp``, rounded half to even and clamped to ``y_zero_point``'s type (uint8 or int8).

    ``w_scale`` and ``w_zero_point`` may be per output channel (1-D); ``bias``
    is the int32 bias, already at scale ``x_scale * w_scale``. ``w`` is a keyword (the graph's
    constant array when it is one): a constant int8 ``w`` is packed once, and a uint8 ``x`` runs in
    one pass from input to requantized output (a U8 tensor for a uint8 output), with the f64 path's
    arithmetic; other operands take that path.
    """
    target = _quantized_type("QLinearConv", y_zero_point, input_types, 7)
    settings = (auto_pad, dilations, group, kernel_shape, pads, strides)
    scale_type = _type_of(input_types, 1)

    def terms(c_out: int) -> Requant | None:
        zeros = (x_zero_point, w_zero_point, y_zero_point)
        return requant_terms((x_scale, w_scale, y_scale), zeros, bias, target, c_out, scale_type)

    fast = _packed_conv(x, w, x_zero_point, w_zero_point, settings, terms)
    if fast is not None:
        return fast
    wt = as_tensor(w, x)
    exact = _int8_conv(x, wt, x_zero_point, w_zero_point, settings)
    if exact is not None:
        # the same f64 values the f64 path sums (exact integers below 2**53)
        summed = exact.float().cast(DType.F64)
        if bias is not None:
            summed = summed + float_of(bias).cast(DType.F64).reshape((1, -1) + (1,) * (summed.rank() - 2))
    else:
        summed = _conv_centered(x, wt, x_zero_point, w_zero_point, bias, settings)
    ws = float_of(w_scale)
    if ws.rank() == 1 and ws.dims()[0] > 1:
        ws = ws.reshape((1, -1) + (1,) * (summed.rank() - 2))
    factor = _requantize_factor((x_scale, ws, y_scale), scale_type, summed.rank())
    return _saturate(summed * factor + _scalar_like(y_zero_point, summed), target)


# the ONNX type ferrum's dtype holds when the runner does not say (a bare call)
_DEFAULT_TYPES = {DType.F32: _T.FLOAT, DType.F64: _T.DOUBLE, DType.I64: _T.INT64, DType.Bool: _T.BOOL}


@op("BitCast")
def bit_cast(x: AnyTensor, to: int = 1, input_types: tuple[int, ...] = ()) -> AnyTensor:
    """``x``'s bits read as ONNX type ``to`` (of the same bit width): float32 1.0 is int32 1065353216.

    ``x``'s own ONNX type is ``input_types[0]`` (the runner passes it), else the
    one ferrum's dtype holds (f32: FLOAT, i64: INT64...). The bits are those of
    the declared type (ferrum computes int8..int32 in i64 and float16 in f32):
    NumPy converts to it, views the bytes, and the result comes back in the
    type ferrum computes ``to`` in.
    """
    source = _type_of(input_types, 0) or _DEFAULT_TYPES.get(x.dtype, 0)
    if not source:
        raise ValueError(f"BitCast: x's ONNX type is unknown (ferrum dtype {x.dtype}); pass input_types")
    src, dst = numpy_dtype(source, "BitCast: "), numpy_dtype(to, "BitCast: ")
    if src.itemsize != dst.itemsize or src.kind in "OSU" or dst.kind in "OSU":
        raise ValueError(
            f"BitCast: expected a target of x's bit width ({src.itemsize * 8}-bit {src.name}), "
            f"found {dst.itemsize * 8}-bit {dst.name}"
        )
    bits = np.asarray(x.to_numpy()).astype(src).view(dst)
    return Tensor.from_numpy(np.array(compute_dtype(bits)), x.device())
