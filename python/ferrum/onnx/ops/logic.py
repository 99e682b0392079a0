"""Comparisons, boolean and bitwise logic, Where, IsNaN and IsInf."""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Bool, Device, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.ops._util import AnyTensor, broadcast, broadcast_all, same_kind
from ferrum.onnx.ops.registry import op
from ferrum.onnx.values import StringTensor, as_strings, is_strings

__all__ = [
    "and_",
    "bit_shift",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "equal",
    "greater",
    "greater_or_equal",
    "is_inf",
    "is_nan",
    "less",
    "less_or_equal",
    "not_",
    "or_",
    "where",
    "xor",
]


def _compare(a: AnyTensor, b: AnyTensor, method: str) -> AnyTensor:
    if a.kind is Bool:
        a = a.int()
    a, b = broadcast(a, same_kind(b, a))
    return getattr(a, method)(b)  # type: ignore[no-any-return]


@op("Equal")
def equal(
    a: AnyTensor | StringTensor, b: AnyTensor | StringTensor, device: Device[Any] | None = None
) -> AnyTensor:
    """Equal: ``a == b`` element-wise, as a Bool tensor, with NumPy broadcasting.

    ``b`` is converted to ``a``'s kind (a Bool ``a`` is compared as Int); the
    result has the broadcast shape. Shapes that do not broadcast raise
    ``ShapeError``. Two string tensors (``ferrum.onnx.values``) compare their
    strings, the result on ``device``; a string tensor and a ferrum tensor
    raise ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> a = Tensor.from_numpy(np.array([[1, 2], [3, 4]]), device)
        >>> equal(a, Tensor.from_numpy(np.array([1, 4]), device)).to_numpy().tolist()
        [[True, False], [False, True]]
    """
    if is_strings(a) or is_strings(b):
        x, y = as_strings(a, "Equal: input 0"), as_strings(b, "Equal: input 1")
        try:
            same = np.array(np.equal(x, y), dtype=bool)
        except ValueError as exc:
            raise ValueError(f"Equal: shapes {list(x.shape)} and {list(y.shape)} do not broadcast") from exc
        return Tensor.from_numpy(same, device if device is not None else NdArray.device())
    assert isinstance(a, Tensor) and isinstance(b, Tensor)
    return _compare(a, b, "equal")


@op("Greater")
def greater(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Greater: ``a > b`` element-wise, as a Bool tensor, with NumPy broadcasting.

    ``b`` is converted to ``a``'s kind (a Bool ``a`` is compared as Int); the
    result has the broadcast shape. Shapes that do not broadcast raise
    ``ShapeError``.
    """
    return _compare(a, b, "greater")


@op("GreaterOrEqual")
def greater_or_equal(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """GreaterOrEqual (since opset 12): ``a >= b`` element-wise, as a Bool tensor, with NumPy broadcasting.

    ``b`` is converted to ``a``'s kind (a Bool ``a`` is compared as Int); the
    result has the broadcast shape. Shapes that do not broadcast raise
    ``ShapeError``.
    """
    return _compare(a, b, "greater_equal")


@op("Less")
def less(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Less: ``a < b`` element-wise, as a Bool tensor, with NumPy broadcasting.

    ``b`` is converted to ``a``'s kind (a Bool ``a`` is compared as Int); the
    result has the broadcast shape. Shapes that do not broadcast raise
    ``ShapeError``.
    """
    return _compare(a, b, "lower")


@op("LessOrEqual")
def less_or_equal(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """LessOrEqual (since opset 12): ``a <= b`` element-wise, as a Bool tensor, with NumPy broadcasting.

    ``b`` is converted to ``a``'s kind (a Bool ``a`` is compared as Int); the
    result has the broadcast shape. Shapes that do not broadcast raise
    ``ShapeError``.
    """
    return _compare(a, b, "lower_equal")


@op("And")
def and_(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """And: the logical AND of two Bool tensors, element-wise, with NumPy broadcasting.

    The result is Bool, in the broadcast shape. A non-Bool operand raises
    ``KindError``, shapes that do not broadcast ``ShapeError``.
    """
    a, b = broadcast(a, b)
    return a.bool_and(b)


@op("Or")
def or_(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Or: the logical OR of two Bool tensors, element-wise, with NumPy broadcasting.

    The result is Bool, in the broadcast shape. A non-Bool operand raises
    ``KindError``, shapes that do not broadcast ``ShapeError``.
    """
    a, b = broadcast(a, b)
    return a.bool_or(b)


@op("Xor")
def xor(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Xor: the logical exclusive OR of two Bool tensors, element-wise, with NumPy broadcasting.

    The result is Bool, in the broadcast shape. A non-Bool operand raises
    ``KindError``, shapes that do not broadcast ``ShapeError``.
    """
    a, b = broadcast(a, b)
    return a.bool_xor(b)


@op("Not")
def not_(x: AnyTensor) -> AnyTensor:
    """Not: the logical negation of a Bool tensor, element-wise.

    The result is Bool, in ``x``'s shape. A non-Bool ``x`` raises ``KindError``.
    """
    return x.bool_not()


@op("Where")
def where(condition: AnyTensor, a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """``a`` where ``condition`` holds, else ``b`` (all three broadcast)."""
    condition, a, b = broadcast_all([condition, a, same_kind(b, a)])
    return b.mask_where(condition, a)


@op("IsNaN")
def is_nan(x: AnyTensor) -> AnyTensor:
    """IsNaN (since opset 9): whether each element of a Float tensor is NaN.

    The result is Bool, in ``x``'s shape. A non-Float ``x`` raises ``KindError``.
    """
    return x.is_nan()


@op("IsInf")
def is_inf(x: AnyTensor, detect_negative: int = 1, detect_positive: int = 1) -> AnyTensor:
    """IsInf (since opset 10): whether each element of a Float tensor is infinite.

    The attributes choose the sign: ``detect_negative=0`` ignores ``-inf``,
    ``detect_positive=0`` ignores ``+inf`` (both 1 by default). The result is
    Bool, in ``x``'s shape. A non-Float ``x`` raises ``KindError``.
    """
    inf = x.is_inf()
    if not detect_negative:
        inf = inf.bool_and(x.greater_elem(0.0))
    if not detect_positive:
        inf = inf.bool_and(x.lower_elem(0.0))
    return inf


@op("BitShift")
def bit_shift(a: AnyTensor, b: AnyTensor, direction: str = "LEFT") -> AnyTensor:
    """BitShift (since opset 11): ``a << b`` or ``a >> b`` element-wise, as ``direction`` says.

    ``direction`` is ``"LEFT"`` or ``"RIGHT"``; ``a`` and ``b`` are Int tensors
    that broadcast as in NumPy; the result is Int, in the broadcast shape.
    Another ``direction`` raises ``ValueError``, a non-Int operand ``KindError``.
    """
    a, b = broadcast(a, b)
    if direction == "LEFT":
        return a.bitwise_left_shift(b)
    if direction == "RIGHT":
        return a.bitwise_right_shift(b)
    raise ValueError(f"BitShift direction must be LEFT or RIGHT, found {direction!r}")


@op("BitwiseAnd")
def bitwise_and(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """BitwiseAnd (since opset 18): the bitwise AND of two Int tensors, element-wise (broadcast).

    ferrum computes integers in i64 (the backend converts back to the declared
    type). The result is Int, in the broadcast shape. A non-Int operand raises
    ``KindError``, shapes that do not broadcast ``ShapeError``.
    """
    a, b = broadcast(a, b)
    return a.bitwise_and(b)


@op("BitwiseOr")
def bitwise_or(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """BitwiseOr (since opset 18): the bitwise OR of two Int tensors, element-wise (broadcast).

    ferrum computes integers in i64 (the backend converts back to the declared
    type). The result is Int, in the broadcast shape. A non-Int operand raises
    ``KindError``, shapes that do not broadcast ``ShapeError``.
    """
    a, b = broadcast(a, b)
    return a.bitwise_or(b)


@op("BitwiseXor")
def bitwise_xor(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """BitwiseXor (since opset 18): the bitwise exclusive OR of two Int tensors, element-wise (broadcast).

    ferrum computes integers in i64 (the backend converts back to the declared
    type). The result is Int, in the broadcast shape. A non-Int operand raises
    ``KindError``, shapes that do not broadcast ``ShapeError``.
    """
    a, b = broadcast(a, b)
    return a.bitwise_xor(b)


@op("BitwiseNot")
def bitwise_not(x: AnyTensor) -> AnyTensor:
    """BitwiseNot (since opset 18): the bitwise complement of an Int tensor, element-wise.

    ferrum computes integers in i64 (the backend converts back to the declared
    type). The result is Int, in ``x``'s shape. A non-Int ``x`` raises
    ``KindError``.
    """
    return x.bitwise_not()
