"""``Reduction``: how an element-wise loss becomes one value, shared by every loss of ``ferrum.nn.loss``
(which re-exports it), and the shape check of the losses that compare two tensors element-wise.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> device = NdArray.device()
    >>> reduce_loss(Tensor.from_data([1.0, 3.0], device), Reduction.Sum).into_scalar()
    4.0
"""

from __future__ import annotations

import enum
from typing import Any

from ferrum._ferrum import Float, ShapeError, Tensor
from ferrum.nn.type_vars import B
from ferrum.tensor.rank import D1

__all__ = ["Reduction", "check_same_shape", "reduce_loss"]


class Reduction(enum.Enum):
    """How an element-wise loss becomes one value: ``Mean`` (also ``Auto``) or ``Sum``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import MseLoss
        >>> device = NdArray.device()
        >>> output, target = Tensor.from_data([1.0, 3.0], device), Tensor.zeros((2,), device)
        >>> MseLoss().forward(output, target, Reduction.Sum).into_scalar()
        10.0
    """

    Mean = "Mean"
    Sum = "Sum"
    Auto = "Auto"


def reduce_loss(loss: Tensor[B, Any, Float], reduction: Reduction) -> Tensor[B, D1, Float]:
    """``loss`` summed (``Sum``) or averaged (``Mean``, ``Auto``) into a rank-1 tensor of one element."""
    if not isinstance(reduction, Reduction):
        raise TypeError(f"reduction must be a Reduction (Mean, Sum or Auto), found {reduction!r}")
    return loss.sum() if reduction is Reduction.Sum else loss.mean()


def check_same_shape(
    op: str, a: Tensor[Any, Any, Any], b: Tensor[Any, Any, Any], names: tuple[str, str]
) -> None:
    """Raise ``ShapeError`` naming ``op`` and both tensors (``names``) unless they have one shape."""
    if a.dims() != b.dims():
        raise ShapeError(
            f"{op}: {names[0]} {list(a.dims())} and {names[1]} {list(b.dims())} must have the same shape"
        )
