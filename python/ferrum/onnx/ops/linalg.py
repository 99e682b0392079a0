"""Linear algebra: Det.

The determinant is an LU factorization with partial pivoting written in
ferrum's tensor ops (argmax, gather, slices, arithmetic), one elimination step
per row for the whole batch at once, so it is differentiable where the
determinant is.
"""

from __future__ import annotations

import math

from ferrum._ferrum import Tensor
from ferrum.onnx.ops._util import AnyTensor, same_kind
from ferrum.onnx.ops.registry import op

__all__ = ["det"]


@op("Det")
def det(x: AnyTensor) -> AnyTensor:
    """Det (since opset 11): the determinant of each square matrix in the last two dims of ``x``.

    ``x`` is ``[..., n, n]``; the result is ``[...]`` (rank 0 for a single
    matrix). A singular matrix gives 0. Computed by Gaussian elimination with
    partial pivoting (the row of largest magnitude is the pivot, each row swap
    flips the sign), as LAPACK's ``getrf`` that NumPy calls; ``n == 0`` gives 1.
    ``x`` is a Float tensor of rank >= 2; matrices that are not square raise
    ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]]], np.float32),
        ...                       NdArray.device())
        >>> det(x).to_numpy().astype(float).round(4).tolist()
        [-2.0, -1.0]
    """
    dims = tuple(x.dims())
    if len(dims) < 2 or dims[-1] != dims[-2]:
        raise ValueError(f"Det: the last two dims of {list(dims)} must be a square matrix")
    batch, n = dims[:-2], dims[-1]
    count = math.prod(batch)
    if n == 0:
        return x.sum_dims([x.rank() - 2, x.rank() - 1]).reshape(batch).full_like(1.0)
    m: AnyTensor = x.reshape((count, n, n))
    device = x.device()
    result: AnyTensor | None = None
    flips: AnyTensor | None = None
    for size in range(n, 0, -1):
        # the pivot: the row whose first entry is largest in magnitude, swapped into row 0
        pivot_row = m.slice([None, None, (0, 1)]).abs().argmax(1)  # [count, 1, 1]
        rows = Tensor.arange(0, size, device).reshape((1, size, 1)).expand((count, size, 1))
        chosen = pivot_row.expand((count, size, 1))
        order = rows.mask_where(rows.equal(chosen), rows.zeros_like()).mask_where(rows.equal_elem(0), chosen)
        m = m.gather(1, order.expand((count, size, size)))
        swapped = pivot_row.not_equal_elem(0)
        flips = swapped if flips is None else flips.bool_xor(swapped)
        pivot = m.slice([None, (0, 1), (0, 1)])  # [count, 1, 1]
        result = pivot if result is None else result * pivot
        if size > 1:
            # A zero pivot means a zero column: the determinant is already 0, and dividing by 1
            # instead keeps the remaining steps finite.
            safe = pivot.mask_fill(pivot.equal_elem(0.0), 1.0)
            factors = m.slice([None, (1, size), (0, 1)]) / safe
            m = m.slice([None, (1, size), (1, size)]) - factors * m.slice([None, (0, 1), (1, size)])
    assert result is not None and flips is not None
    # (-1) ** (number of swaps), as 1 - 2 * (odd number of swaps)
    sign = same_kind(flips, x) * -2.0 + 1.0
    return (result * sign).reshape(batch)
