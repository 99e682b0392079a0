"""Element-wise arithmetic and math: Add, Mul, Pow, Sqrt, Exp, Sin, Erf, Sum, Max, Mod, ..."""

from __future__ import annotations

from functools import reduce

from ferrum._ferrum import Float, Int
from ferrum.onnx.ops._util import AnyTensor, broadcast, float_of, same_kind, to_rank
from ferrum.onnx.ops.registry import op

__all__ = [
    "abs_",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "ceil",
    "cos",
    "cosh",
    "div",
    "erf",
    "exp",
    "floor",
    "log",
    "max_",
    "mean",
    "min_",
    "mod",
    "mul",
    "neg",
    "pow_",
    "reciprocal",
    "round_",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "sub",
    "sum_",
    "tan",
]


@op("Add")
def add(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, same_kind(b, a))
    return a + b


@op("Sub")
def sub(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, same_kind(b, a))
    return a - b


@op("Mul")
def mul(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, same_kind(b, a))
    return a * b


@op("Div")
def div(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    a, b = broadcast(a, same_kind(b, a))
    return a / b


@op("Pow")
def pow_(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """``a ** b`` in ``a``'s type (an Int base with a Float exponent is computed in float, then truncated)."""
    a, b = broadcast(a, b)
    if a.kind is Int and b.kind is Int:
        return a.powi(b)
    result = float_of(a).powf(same_kind(b, float_of(a)))
    return same_kind(result, a)


@op("Mod")
def mod(a: AnyTensor, b: AnyTensor, fmod: int = 0) -> AnyTensor:
    """``fmod=0``: the divisor's sign (Python's ``%``); ``fmod=1``: the dividend's sign (C's fmod)."""
    a, b = broadcast(a, same_kind(b, a))
    if not fmod:
        return a.remainder(b)
    if a.kind is Float:
        return a.fmod(b)
    # C's fmod on integers: truncated division's remainder.
    return a - (a / b) * b


@op("Abs")
def abs_(x: AnyTensor) -> AnyTensor:
    return x.abs()


@op("Neg")
def neg(x: AnyTensor) -> AnyTensor:
    return -x


@op("Sign")
def sign(x: AnyTensor) -> AnyTensor:
    return x.sign()


@op("Ceil")
def ceil(x: AnyTensor) -> AnyTensor:
    return x.ceil()


@op("Floor")
def floor(x: AnyTensor) -> AnyTensor:
    return x.floor()


@op("Round")
def round_(x: AnyTensor) -> AnyTensor:
    """Half to even, as ONNX and NumPy."""
    return x.round()


@op("Sqrt")
def sqrt(x: AnyTensor) -> AnyTensor:
    return x.sqrt()


@op("Exp")
def exp(x: AnyTensor) -> AnyTensor:
    return x.exp()


@op("Log")
def log(x: AnyTensor) -> AnyTensor:
    return x.log()


@op("Reciprocal")
def reciprocal(x: AnyTensor) -> AnyTensor:
    return x.recip()


@op("Sin")
def sin(x: AnyTensor) -> AnyTensor:
    return x.sin()


@op("Cos")
def cos(x: AnyTensor) -> AnyTensor:
    return x.cos()


@op("Tan")
def tan(x: AnyTensor) -> AnyTensor:
    return x.tan()


@op("Sinh")
def sinh(x: AnyTensor) -> AnyTensor:
    return x.sinh()


@op("Cosh")
def cosh(x: AnyTensor) -> AnyTensor:
    return x.cosh()


@op("Asin")
def asin(x: AnyTensor) -> AnyTensor:
    return x.asin()


@op("Acos")
def acos(x: AnyTensor) -> AnyTensor:
    return x.acos()


@op("Atan")
def atan(x: AnyTensor) -> AnyTensor:
    return x.atan()


@op("Asinh")
def asinh(x: AnyTensor) -> AnyTensor:
    return x.asinh()


@op("Acosh")
def acosh(x: AnyTensor) -> AnyTensor:
    return x.acosh()


@op("Atanh")
def atanh(x: AnyTensor) -> AnyTensor:
    return x.atanh()


@op("Erf")
def erf(x: AnyTensor) -> AnyTensor:
    return x.erf()


def _fold(tensors: tuple[AnyTensor, ...], pair: str) -> AnyTensor:
    rank = max(t.rank() for t in tensors)
    first = tensors[0]
    aligned = [to_rank(same_kind(t, first), rank) for t in tensors]
    return reduce(lambda a, b: getattr(a, pair)(b), aligned)


@op("Sum")
def sum_(*tensors: AnyTensor) -> AnyTensor:
    """The element-wise sum of any number of tensors (broadcast)."""
    return _fold(tensors, "__add__")


@op("Mean")
def mean(*tensors: AnyTensor) -> AnyTensor:
    return _fold(tensors, "__add__") / float(len(tensors))


@op("Max")
def max_(*tensors: AnyTensor) -> AnyTensor:
    return _fold(tensors, "max_pair")


@op("Min")
def min_(*tensors: AnyTensor) -> AnyTensor:
    return _fold(tensors, "min_pair")
