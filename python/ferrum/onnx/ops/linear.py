"""Products: Gemm, MatMul, MatMulInteger.

A Gemm (or a MatMul by a rank-2 constant) whose weight is a constant becomes
a ``Linear`` layer (weight ``[d_input, d_output]``, as Burn's). A
MatMulInteger (and QLinearMatMul, in ``quantize``) by a constant int8 matrix
runs on the int8 tiles: the matrix is packed once, at its first product, and
each uint8 input is multiplied exactly in int32.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ferrum._ferrum import Device, DType, Int, Int8Matrix, Tensor
from ferrum.module import Param
from ferrum.nn.linear import Linear
from ferrum.onnx.ops._util import AnyTensor, to_rank
from ferrum.onnx.ops._util import broadcast as broadcast_pair
from ferrum.onnx.ops.registry import LayerPlan, NodeInfo, op

__all__ = ["gemm", "mat_mul", "mat_mul_integer"]


def _gemm_layer(info: NodeInfo, device: Device[Any]) -> LayerPlan | None:
    kw = info.kwargs
    b = info.constants[1]
    c = info.constants[2] if len(info.constants) > 2 else None
    has_c = len(info.present) > 2 and info.present[2]
    if b is None or b.dtype.kind != "f" or b.ndim != 2 or kw.get("trans_a", 0) or kw.get("alpha", 1.0) != 1.0:
        return None
    if has_c and (c is None or kw.get("beta", 1.0) != 1.0):
        return None
    stored = Tensor.from_numpy(b, device)
    # a transposed view: Linear's [d_input, d_output] weight without copying ONNX's [d_output, d_input]
    weight = stored.transpose() if kw.get("trans_b", 0) else stored
    d_out = weight.dims()[1]
    bias = None
    if c is not None:
        if c.size == 1:
            c = np.full((d_out,), c.reshape(-1)[0], dtype=c.dtype)
        elif c.shape not in ((d_out,), (1, d_out)):
            return None
        bias = Param(Tensor.from_numpy(np.ascontiguousarray(c.reshape(d_out)), device))
    layer = Linear(weight=Param(weight), bias=bias)
    return LayerPlan(layer, (0,))


@op("Gemm", layer=_gemm_layer)
def gemm(
    a: AnyTensor,
    b: AnyTensor,
    c: AnyTensor | None = None,
    alpha: float = 1.0,
    beta: float = 1.0,
    trans_a: int = 0,
    trans_b: int = 0,
    broadcast: int = 0,
) -> AnyTensor:
    """``alpha * A' @ B' + beta * C`` with ``A'``/``B'`` transposed when asked."""
    del broadcast
    a2 = a.transpose() if trans_a else a
    b2 = b.transpose() if trans_b else b
    out = a2 @ b2
    if alpha != 1.0:
        out = out * alpha
    if c is not None:
        cc = c * beta if beta != 1.0 else c
        out, cc = broadcast_pair(out, cc)
        out = out + cc
    return out


def _matmul_layer(info: NodeInfo, device: Device[Any]) -> LayerPlan | None:
    w = info.constants[1]
    if w is None or w.dtype.kind != "f" or w.ndim != 2 or info.constants[0] is not None:
        return None
    if info.ranks[0] is None or info.ranks[0] < 2:
        return None
    return LayerPlan(Linear(weight=Param(Tensor.from_numpy(w, device)), bias=None), (0,))


@op("MatMul", layer=_matmul_layer)
def mat_mul(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """NumPy's ``matmul``: batch dims broadcast, rank-1 operands promoted and their dim dropped."""
    ra, rb = a.rank(), b.rank()
    if ra == 1:
        a = a.reshape((1, -1))
    if rb == 1:
        b = b.reshape((-1, 1))
    rank = max(a.rank(), b.rank())
    a, b = to_rank(a, rank), to_rank(b, rank)
    if rank > 2:
        batch = np.broadcast_shapes(tuple(a.dims()[:-2]), tuple(b.dims()[:-2]))
        a = a.expand(tuple(batch) + tuple(a.dims()[-2:]))
        b = b.expand(tuple(batch) + tuple(b.dims()[-2:]))
    out = a @ b
    dims = list(out.dims())
    if rb == 1:
        dims.pop(-1)
    if ra == 1:
        dims.pop(-1 if rb == 1 else -2)
    return out.reshape(tuple(dims)) if (ra == 1 or rb == 1) else out


#: Constant integer matrices packed for the int8 tiles (None: values outside int8), by the identity
#: of the graph's array (kept alive here, so the identity is not reused) and the zero points.
_PACKED: dict[tuple[int, tuple[int, ...]], tuple[np.ndarray[Any, Any], Int8Matrix | None]] = {}
#: The same by content, for code that makes its array anew at each call (generated code writes
#: small constants inline); looked up only when the identity misses.
_BY_CONTENT: dict[tuple[bytes, tuple[int, ...]], Int8Matrix | None] = {}
_PACKED_MAX = 64


def _zero_points(zero_point: AnyTensor | None) -> list[int] | None:
    """A zero point's values (``[0]`` when absent); None when it is not integer."""
    if zero_point is None:
        return [0]
    if zero_point.kind is not Int or zero_point.rank() > 1:
        return None
    return [int(v) for v in np.asarray(zero_point.to_numpy()).reshape(-1)]


def _packed(b: object, b_zero_point: AnyTensor | None, device: Device[Any]) -> Int8Matrix | None:
    """A constant ``[k, n]`` matrix ``b`` with its zero points (1 or n), packed once; None when ``b``
    is computed at run time or a value is outside int8 (uint8 weights keep the general path).

    The graph's integer constants arrive widened to int64, so the values decide: the int8 product
    of values that fit is exact whatever the declared type.
    """
    if not isinstance(b, np.ndarray) or b.dtype.kind not in "iu" or b.ndim != 2:
        return None
    zero = _zero_points(b_zero_point)
    if zero is None or len(zero) not in (1, b.shape[1]):
        return None
    key = (id(b), tuple(zero))
    cached = _PACKED.get(key)
    if cached is not None and cached[0] is b:
        return cached[1]
    digest = hashlib.blake2b(f"{b.shape}{b.dtype.str}".encode() + np.ascontiguousarray(b).tobytes()).digest()
    content = (digest, tuple(zero))
    if content in _BY_CONTENT:
        packed = _BY_CONTENT[content]
    else:
        packed = Int8Matrix.pack(Tensor.from_numpy(b.astype(np.int64), device), zero)
        if len(_BY_CONTENT) >= _PACKED_MAX:
            _BY_CONTENT.pop(next(iter(_BY_CONTENT)))
        _BY_CONTENT[content] = packed
    if len(_PACKED) >= _PACKED_MAX:
        _PACKED.pop(next(iter(_PACKED)))
    _PACKED[key] = (b, packed)
    return packed


def integer_product(
    a: AnyTensor, a_zero_point: AnyTensor | None, b: object, b_zero_point: AnyTensor | None
) -> AnyTensor | None:
    """``(a - a_zero_point) @ (b - b_zero_point)`` on the int8 tiles when ``b`` is a constant int8
    matrix and ``a``'s values and zero point fit uint8 (Int, exact in int32); else None."""
    if a.kind is not Int or a.rank() < 1:
        return None
    packed = _packed(b, b_zero_point, a.device())
    zero = _zero_points(a_zero_point)
    if packed is None or zero is None:
        return None
    return packed.matmul(a, zero) if len(zero) == 1 or a.rank() == 2 else None


def as_tensor(value: object, like: AnyTensor) -> AnyTensor:
    """A static input as a tensor on ``like``'s device: a graph constant (array, tuple or number) or a
    tensor computed at run time."""
    if isinstance(value, Tensor):
        return value
    return Tensor.from_numpy(np.asarray(value), like.device())


@op("MatMulInteger", static=(None, "b"))
def mat_mul_integer(
    a: AnyTensor,
    a_zero_point: AnyTensor | None = None,
    b_zero_point: AnyTensor | None = None,
    *,
    b: AnyTensor | np.ndarray[Any, Any],
) -> AnyTensor:
    """Integer matmul after subtracting the zero points: Int, ONNX's int32 values.

    ``b`` is a keyword (the graph's constant array when it is one): a
    constant int8 ``b`` times a uint8 ``a`` runs on the int8 tiles (``b``
    packed once); other types compute in f64 (exact below 2**53). ``a``'s
    zero point is a scalar or one per row of a matrix, ``b``'s a scalar or
    one per column.
    """
    fast = integer_product(a, a_zero_point, b, b_zero_point)
    if fast is not None:
        return fast
    af = a.float().cast(DType.F64)
    b = as_tensor(b, a)
    bf = b.float().cast(DType.F64)
    if a_zero_point is not None:
        zp = a_zero_point.float().cast(DType.F64)
        af = af - (zp.reshape((-1, 1)) if zp.rank() == 1 and zp.dims()[0] > 1 else to_rank(zp, af.rank()))
    if b_zero_point is not None:
        zp = b_zero_point.float().cast(DType.F64)
        bf = bf - to_rank(zp, bf.rank())
    product: AnyTensor = mat_mul(af, bf)
    return product.round().int()
