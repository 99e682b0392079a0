"""Comparisons, boolean and bitwise logic, Where, IsNaN and IsInf."""

from __future__ import annotations

from ferrum._ferrum import Bool
from ferrum.onnx.ops._util import AnyTensor, broadcast, broadcast_all, same_kind
from ferrum.onnx.ops.registry import op

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
def equal(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    return _compare(a, b, "equal")


@op("Greater")
def greater(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    return _compare(a, b, "greater")


@op("GreaterOrEqual")
def greater_or_equal(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    return _compare(a, b, "greater_equal")


@op("Less")
def less(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    return _compare(a, b, "lower")


@op("LessOrEqual")
def less_or_equal(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    return _compare(a, b, "lower_equal")


@op("And")
def and_(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, b)
    return a.bool_and(b)


@op("Or")
def or_(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, b)
    return a.bool_or(b)


@op("Xor")
def xor(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, b)
    return a.bool_xor(b)


@op("Not")
def not_(x: AnyTensor) -> AnyTensor:
    return x.bool_not()


@op("Where")
def where(condition: AnyTensor, a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """``a`` where ``condition`` holds, else ``b`` (all three broadcast)."""
    condition, a, b = broadcast_all([condition, a, same_kind(b, a)])
    return b.mask_where(condition, a)


@op("IsNaN")
def is_nan(x: AnyTensor) -> AnyTensor:
    return x.is_nan()


@op("IsInf")
def is_inf(x: AnyTensor, detect_negative: int = 1, detect_positive: int = 1) -> AnyTensor:
    inf = x.is_inf()
    if not detect_negative:
        inf = inf.bool_and(x.greater_elem(0.0))
    if not detect_positive:
        inf = inf.bool_and(x.lower_elem(0.0))
    return inf


@op("BitShift")
def bit_shift(a: AnyTensor, b: AnyTensor, direction: str = "LEFT") -> AnyTensor:
    a, b = broadcast(a, b)
    if direction == "LEFT":
        return a.bitwise_left_shift(b)
    if direction == "RIGHT":
        return a.bitwise_right_shift(b)
    raise ValueError(f"BitShift direction must be LEFT or RIGHT, found {direction!r}")


@op("BitwiseAnd")
def bitwise_and(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, b)
    return a.bitwise_and(b)


@op("BitwiseOr")
def bitwise_or(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, b)
    return a.bitwise_or(b)


@op("BitwiseXor")
def bitwise_xor(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, b)
    return a.bitwise_xor(b)


@op("BitwiseNot")
def bitwise_not(x: AnyTensor) -> AnyTensor:
    return x.bitwise_not()
