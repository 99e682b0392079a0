"""Helpers shared by the op families: NumPy-style broadcasting and reading integer arguments.

ferrum broadcasts only between equal ranks over size-1 dims (Burn's rule);
ONNX broadcasts as NumPy does, so the lower-rank operand gets leading
size-1 dims first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from ferrum._ferrum import Bool, Float, Int, Tensor

__all__ = ["AnyTensor", "IntArg", "axis", "broadcast", "broadcast_all", "float_of", "ints", "to_rank"]

AnyTensor: TypeAlias = "Tensor[Any, Any, Any]"
IntArg: TypeAlias = "int | Sequence[int] | Tensor[Any, Any, Any] | None"


def to_rank(x: AnyTensor, rank: int) -> AnyTensor:
    """``x`` with leading size-1 dims up to ``rank``."""
    missing = rank - x.rank()
    return x.reshape((1,) * missing + tuple(x.dims())) if missing > 0 else x


def broadcast(a: AnyTensor, b: AnyTensor) -> tuple[AnyTensor, AnyTensor]:
    """``a`` and ``b`` at one rank, so ferrum's size-1 broadcasting gives NumPy's result."""
    rank = max(a.rank(), b.rank())
    return to_rank(a, rank), to_rank(b, rank)


def broadcast_all(tensors: Sequence[AnyTensor]) -> list[AnyTensor]:
    """Every tensor expanded to the common NumPy broadcast shape."""
    shape = np.broadcast_shapes(*(tuple(t.dims()) for t in tensors))
    return [to_rank(t, len(shape)).expand(shape) if tuple(t.dims()) != shape else t for t in tensors]


MAX_ELEMENTS = 1 << 31
"""The most elements an op may create from a shape the file gives (a hostile file cannot ask for more)."""


def check_size(shape: Sequence[int], op: str) -> tuple[int, ...]:
    """``shape`` as a tuple, when its dims are non-negative and its size at most ``MAX_ELEMENTS``."""
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"{op}: negative dim in shape {list(dims)}")
    if math.prod(dims) > MAX_ELEMENTS:
        raise ValueError(f"{op}: shape {list(dims)} has {math.prod(dims)} elements, more than {MAX_ELEMENTS}")
    return dims


def ints(value: IntArg) -> list[int] | None:
    """An integer argument given as a literal or as a (run-time) Int tensor."""
    if value is None:
        return None
    if isinstance(value, Tensor):
        return [int(v) for v in np.asarray(value.to_numpy()).reshape(-1)]
    if isinstance(value, (int, np.integer)):
        # A rank-0 constant input (CumSum's axis, Unsqueeze's axes in some exports) folds to an int.
        return [int(value)]
    return [int(v) for v in value]


def axis(value: int, rank: int) -> int:
    """A possibly negative ONNX axis as a dim of a rank-``rank`` tensor."""
    bound = rank if rank > 0 else 1  # rank 0 takes the axes rank 1 does
    if not -bound <= value < bound:
        raise ValueError(f"axis {value} is out of range for a rank-{rank} tensor")
    return value + rank if value < 0 else value


def float_of(x: AnyTensor) -> AnyTensor:
    """``x`` as a Float tensor (Int and Bool converted, Float unchanged)."""
    return x if x.kind is Float else x.float()


def same_kind(x: AnyTensor, like: AnyTensor) -> AnyTensor:
    """``x`` converted to the kind (and float dtype) of ``like``."""
    if like.kind is Float:
        if x.kind is not Float:
            x = x.float()
        return x.cast(like.dtype) if x.dtype != like.dtype else x
    if like.kind is Int:
        return x if x.kind is Int else x.int()
    if like.kind is Bool:
        return x if x.kind is Bool else x.bool()
    return x


def pool_pads(
    size: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int] | None,
    auto_pad: str,
) -> list[tuple[int, int]]:
    """Each spatial dim's (begin, end) padding of a convolution or pool window, from ONNX's
    ``pads`` (``[begin..., end...]``) or ``auto_pad`` (SAME_UPPER puts the odd one at the end)."""
    n = len(size)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(n):
            target = -(-size[i] // strides[i])
            total = max(0, (target - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size[i])
            small = total // 2
            out.append((small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small))
        return out
    if auto_pad == "VALID" or not pads:
        return [(0, 0)] * n
    if len(pads) != 2 * n:
        raise ValueError(f"pads {list(pads)} must have two entries per spatial dim ({2 * n})")
    return [(pads[i], pads[i + n]) for i in range(n)]
