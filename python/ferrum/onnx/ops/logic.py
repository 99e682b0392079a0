"""Comparisons, boolean and bitwise logic, Where, IsNaN and IsInf."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ferrum._ferrum import Bool, Device, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.ops._util import AnyTensor, broadcast, broadcast_all, same_kind
from ferrum.onnx.ops.registry import define, op
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


_COMPARED = """``b`` is converted to ``a``'s kind (a Bool ``a`` is compared as Int); the
result has the broadcast shape. Shapes that do not broadcast raise
``ShapeError``."""


def _comparison(
    onnx_name: str, name: str, method: str, summary: str
) -> Callable[[AnyTensor, AnyTensor], AnyTensor]:
    """The op comparing ``a`` and ``b`` with the tensor method ``method``."""

    def fn(a: AnyTensor, b: AnyTensor) -> AnyTensor:
        return _compare(a, b, method)

    doc = f"{summary} element-wise, as a Bool tensor, with NumPy broadcasting.\n\n{_COMPARED}\n"
    return define(onnx_name, name, fn, doc, __name__)


def _broadcasting(method: str) -> Callable[[AnyTensor, AnyTensor], AnyTensor]:
    """``a.method(b)`` after NumPy broadcasting (no kind conversion: the method checks the kinds)."""

    def fn(a: AnyTensor, b: AnyTensor) -> AnyTensor:
        a, b = broadcast(a, b)
        return getattr(a, method)(b)  # type: ignore[no-any-return]

    return fn


def _logical(
    onnx_name: str, name: str, method: str, what: str
) -> Callable[[AnyTensor, AnyTensor], AnyTensor]:
    """And, Or, Xor: the logical ``what`` of two Bool tensors."""
    doc = f"""{onnx_name}: the logical {what} of two Bool tensors, element-wise, with NumPy broadcasting.

The result is Bool, in the broadcast shape. A non-Bool operand raises
``KindError``, shapes that do not broadcast ``ShapeError``.
"""
    return define(onnx_name, name, _broadcasting(method), doc, __name__)


def _bitwise(onnx_name: str, name: str, what: str) -> Callable[[AnyTensor, AnyTensor], AnyTensor]:
    """BitwiseAnd, BitwiseOr, BitwiseXor: the bitwise ``what`` of two Int tensors (the method ``name``)."""
    doc = f"""{onnx_name} (since opset 18): the bitwise {what} of two Int tensors, element-wise (broadcast).

ferrum computes integers in i64 (the backend converts back to the declared
type). The result is Int, in the broadcast shape. A non-Int operand raises
``KindError``, shapes that do not broadcast ``ShapeError``.
"""
    return define(onnx_name, name, _broadcasting(name), doc, __name__)


def _unary(
    onnx_name: str, name: str, fn: Callable[[AnyTensor], AnyTensor], summary: str, rest: str
) -> Callable[[AnyTensor], AnyTensor]:
    """The op ``fn`` (one tensor method) on one tensor, its docstring the summary and the rest."""
    return define(onnx_name, name, fn, f"{summary}\n\n{rest}\n", __name__)


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


greater = _comparison("Greater", "greater", "greater", "Greater: ``a > b``")
greater_or_equal = _comparison(
    "GreaterOrEqual", "greater_or_equal", "greater_equal", "GreaterOrEqual (since opset 12): ``a >= b``"
)
less = _comparison("Less", "less", "lower", "Less: ``a < b``")
less_or_equal = _comparison(
    "LessOrEqual", "less_or_equal", "lower_equal", "LessOrEqual (since opset 12): ``a <= b``"
)

and_ = _logical("And", "and_", "bool_and", "AND")
or_ = _logical("Or", "or_", "bool_or", "OR")
xor = _logical("Xor", "xor", "bool_xor", "exclusive OR")
not_ = _unary(
    "Not",
    "not_",
    lambda x: x.bool_not(),
    "Not: the logical negation of a Bool tensor, element-wise.",
    "The result is Bool, in ``x``'s shape. A non-Bool ``x`` raises ``KindError``.",
)


@op("Where")
def where(condition: AnyTensor, a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """``a`` where ``condition`` holds, else ``b`` (all three broadcast)."""
    condition, a, b = broadcast_all([condition, a, same_kind(b, a)])
    return b.mask_where(condition, a)


is_nan = _unary(
    "IsNaN",
    "is_nan",
    lambda x: x.is_nan(),
    "IsNaN (since opset 9): whether each element of a Float tensor is NaN.",
    "The result is Bool, in ``x``'s shape. A non-Float ``x`` raises ``KindError``.",
)


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


bitwise_and = _bitwise("BitwiseAnd", "bitwise_and", "AND")
bitwise_or = _bitwise("BitwiseOr", "bitwise_or", "OR")
bitwise_xor = _bitwise("BitwiseXor", "bitwise_xor", "exclusive OR")
bitwise_not = _unary(
    "BitwiseNot",
    "bitwise_not",
    lambda x: x.bitwise_not(),
    "BitwiseNot (since opset 18): the bitwise complement of an Int tensor, element-wise.",
    "ferrum computes integers in i64 (the backend converts back to the declared\ntype). The result is Int, "
    "in ``x``'s shape. A non-Int ``x`` raises\n``KindError``.",
)
