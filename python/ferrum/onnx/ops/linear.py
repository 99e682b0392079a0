"""Products: Gemm, MatMul, MatMulInteger.

A Gemm (or a MatMul by a rank-2 constant) whose weight is a constant becomes
a ``Linear`` layer (weight ``[d_input, d_output]``, as Burn's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, DType, Tensor
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


@op("MatMulInteger")
def mat_mul_integer(
    a: AnyTensor, b: AnyTensor, a_zero_point: AnyTensor | None = None, b_zero_point: AnyTensor | None = None
) -> AnyTensor:
    """Integer matmul after subtracting the zero points (exact in f64 below 2**53)."""
    af = a.float().cast(DType.F64)
    bf = b.float().cast(DType.F64)
    if a_zero_point is not None:
        zp = a_zero_point.float().cast(DType.F64)
        af = af - (zp.reshape((-1, 1)) if zp.rank() == 1 and zp.dims()[0] > 1 else to_rank(zp, af.rank()))
    if b_zero_point is not None:
        zp = b_zero_point.float().cast(DType.F64)
        bf = bf - to_rank(zp, bf.rank())
    product: AnyTensor = mat_mul(af, bf)
    return product.round().int()
