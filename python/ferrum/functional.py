"""Module ops as functions, as in Burn's ``burn::tensor::module`` (PyTorch users know it as ``F``).

The layers of ``ferrum.nn`` call these with their parameters; use them
directly for custom layers. Burn's option structs are keyword arguments here
(``stride=``, ``padding=``, ...) with Burn's defaults. All are differentiable
on an autodiff backend; Int outputs (pool indices) carry no gradient.

Example:
    >>> from ferrum import Tensor, functional as F
    >>> from ferrum.backend import NdArray
    >>> device = NdArray.device()
    >>> x = Tensor.ones((1, 1, 4, 4), device)
    >>> F.conv2d(x, Tensor.ones((2, 1, 3, 3), device), padding=(1, 1)).dims()
    (1, 2, 4, 4)
    >>> F.max_pool2d(x, (2, 2)).dims()
    (1, 1, 2, 2)
"""

from __future__ import annotations

import enum
import math
from typing import Any, Literal

import ferrum._ferrum as _ferrum
from ferrum._ferrum import (
    ArgumentError,
    Bool,
    Int,
    ShapeError,
    Tensor,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv2d_fused,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    deform_conv2d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    unfold4d,
)
from ferrum.tensor.rank import D1, D2, D3, D4
from ferrum.tensor.type_vars import B, D

__all__ = [
    "InterpolateMode",
    "InterpolateModeName",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "attention",
    "avg_pool1d",
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "conv2d_fused",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "deform_conv2d",
    "embedding",
    "interpolate",
    "linear",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "unfold4d",
]



class InterpolateMode(enum.Enum):
    """Burn's ``ops::InterpolateMode``: ``Nearest``, ``Bilinear`` (corners aligned), ``Bicubic``."""

    Nearest = "nearest"
    Bilinear = "bilinear"
    Bicubic = "bicubic"


InterpolateModeName = Literal["nearest", "bilinear", "bicubic"]
"""The modes as PyTorch users spell them, accepted by ``interpolate`` beside ``InterpolateMode``."""


def interpolate(
    x: Tensor[B, D4], output_size: tuple[int, int], mode: InterpolateMode | InterpolateModeName
) -> Tensor[B, D4]:
    """``[batch, channels, h, w]`` resized to ``output_size``.

    ``mode`` is an ``InterpolateMode`` or its name as PyTorch spells it:
    ``"nearest"``, ``"bilinear"``, ``"bicubic"``. The semantics stay Burn's:
    bilinear and bicubic align the corners (PyTorch's ``align_corners=True``,
    not its default), nearest takes the source pixel ``floor(i * in / out)``.

    Example:
        >>> from ferrum import Tensor, functional as F
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_floats([[[[0.0, 2.0]]]], NdArray.device())
        >>> F.interpolate(x, (1, 3), F.InterpolateMode.Bilinear).to_data().to_list()
        [[[[0.0, 1.0, 2.0]]]]
        >>> F.interpolate(x, (1, 4), "nearest").to_data().to_list()
        [[[[0.0, 0.0, 2.0, 2.0]]]]
    """
    if isinstance(mode, str):
        names = [m.value for m in InterpolateMode]
        if mode not in names:
            raise ArgumentError(
                f"interpolate: mode must be an InterpolateMode or one of {', '.join(map(repr, names))},"
                f" found {mode!r}"
            )
        mode = InterpolateMode(mode)
    if not isinstance(mode, InterpolateMode):
        raise TypeError(f"interpolate: mode must be an InterpolateMode or its name, found {mode!r}")
    return _ferrum.interpolate(x, output_size, mode.value)


def embedding(weights: Tensor[B, D2], indices: Tensor[B, D2, Int]) -> Tensor[B, D3]:
    """Rows of ``weights`` ``[n, d]`` picked by ``indices`` ``[batch, seq]``: ``[batch, seq, d]``.

    Example:
        >>> from ferrum import Tensor, functional as F
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> table = Tensor.from_floats([[0.0], [1.0]], device)
        >>> F.embedding(table, Tensor.from_ints([[1, 0, 1]], device)).to_data().to_list()
        [[[1.0], [0.0], [1.0]]]
    """
    dims, wdims = indices.dims(), weights.dims()
    if len(dims) != 2 or len(wdims) != 2:
        raise ShapeError(
            "embedding: expected weights [n, d] and indices [batch, seq],"
            f" found {list(wdims)} and {list(dims)}"
        )
    batch, seq = dims
    return weights.select(0, indices.reshape((batch * seq,))).reshape((batch, seq, wdims[1]))


def linear(x: Tensor[B, D], weight: Tensor[B, D2], bias: Tensor[B, D1] | None = None) -> Tensor[B, D]:
    """``x @ weight + bias`` over the last dim, with Burn's weight layout ``[d_input, d_output]``
    (torch's ``F.linear`` takes the transpose).

    Example:
        >>> from ferrum import Tensor, functional as F
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> weight, bias = Tensor.ones((3, 4), device), Tensor.ones((4,), device)
        >>> F.linear(Tensor.ones((2, 3), device), weight, bias).dims()
        (2, 4)
    """
    dims, (d_in, d_out) = x.dims(), weight.dims()
    if not dims or dims[-1] != d_in:
        raise ShapeError(
            f"linear: expected an input [..., {d_in}] for a weight [{d_in}, {d_out}], found {list(dims)}"
        )
    rank = len(dims)
    flat: Tensor[B, D2] = x.reshape((-1, d_in))
    out: Tensor[B, Any] = (flat @ weight).reshape((*dims[:-1], d_out))
    if bias is not None:
        out = out + bias.reshape((1,) * (rank - 1) + (d_out,))
    return out


def attention(
    query: Tensor[B, D4], key: Tensor[B, D4], value: Tensor[B, D4], mask: Tensor[B, D4, Bool] | None = None
) -> Tensor[B, D4]:
    """Scaled dot-product attention ``softmax(q k^T / sqrt(d)) v`` over ``[batch, heads, seq, d]``;
    ``mask`` (true = not allowed) broadcasts onto ``[batch, heads, seq_q, seq_k]`` and its scores
    become ``-inf``, as Burn's ``attention`` (a fully masked row gives NaN).

    Example:
        >>> from ferrum import Tensor, functional as F
        >>> from ferrum.backend import NdArray
        >>> q = Tensor.ones((1, 2, 3, 4), NdArray.device())
        >>> F.attention(q, q, q).dims()
        (1, 2, 3, 4)
    """
    q, k, v = query.dims(), key.dims(), value.dims()
    if len(q) != 4 or len(k) != 4 or k != v or q[3] != k[3] or q[:2] != k[:2]:
        raise ShapeError(
            "attention: expected query [batch, heads, seq_q, d] and key, value [batch, heads, seq_k, d],"
            f" found {list(q)}, {list(k)} and {list(v)}"
        )
    weights = _ferrum.masked_softmax(query @ key.transpose(), mask, 1.0 / math.sqrt(q[3]), -math.inf)
    return weights @ value
