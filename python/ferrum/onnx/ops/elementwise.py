"""Element-wise arithmetic and math: Add, Mul, Pow, Sqrt, Exp, Sin, Erf, Sum, Max, Mod, ..."""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import reduce
from typing import Protocol

from ferrum._ferrum import Float, Int
from ferrum.onnx.ops._util import AnyTensor, broadcast, float_of, same_kind, to_rank
from ferrum.onnx.ops.registry import define, op

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


_BROADCAST = """The lower-rank operand gets leading size-1 dims, then size-1 dims stretch;
``b`` is converted to ``a``'s kind first. The result has the broadcast
shape and ``a``'s kind. Shapes that do not broadcast raise
``ShapeError``; Bool operands raise ``KindError``."""

_NUMERIC = """``x`` is a Float or Int tensor of any shape; the result has its shape and dtype.
A Bool ``x`` raises ``KindError``."""

_FLOAT = """``x`` is a Float tensor of any shape; the result has its shape and dtype.
Another kind raises ``KindError``."""


def _arithmetic(
    onnx_name: str,
    name: str,
    kernel: Callable[[AnyTensor, AnyTensor], AnyTensor],
    summary: str,
    example: str = "",
) -> Callable[[AnyTensor, AnyTensor], AnyTensor]:
    """The op ``kernel(a, b)`` after NumPy broadcasting, ``b`` in ``a``'s kind."""

    def fn(a: AnyTensor, b: AnyTensor) -> AnyTensor:
        a, b = broadcast(a, same_kind(b, a))
        return kernel(a, b)

    return define(onnx_name, name, fn, f"{summary}\n\n{_BROADCAST}\n{example}", __name__)


def _unary(
    onnx_name: str,
    name: str,
    fn: Callable[[AnyTensor], AnyTensor],
    what: str,
    since: int | None = None,
    kinds: str = _FLOAT,
) -> Callable[[AnyTensor], AnyTensor]:
    """The element-wise op ``fn`` (one tensor method); its docstring says ``what`` it computes, from
    which opset (``since``, for the docstring only) and the kinds it takes."""
    header = f"{onnx_name} (since opset {since})" if since else onnx_name
    return define(onnx_name, name, fn, f"{header}: {what}, element-wise.\n\n{kinds}\n", __name__)


add = _arithmetic(
    "Add",
    "add",
    operator.add,
    "Add: ``a + b`` element-wise, with NumPy broadcasting.",
    """
Example:
    >>> import numpy as np
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> device = NdArray.device()
    >>> a = Tensor.from_numpy(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), device)
    >>> b = Tensor.from_numpy(np.array([10.0, 20.0], np.float32), device)
    >>> add(a, b).to_numpy().tolist()
    [[11.0, 22.0], [13.0, 24.0]]
""",
)
sub = _arithmetic("Sub", "sub", operator.sub, "Sub: ``a - b`` element-wise, with NumPy broadcasting.")
mul = _arithmetic("Mul", "mul", operator.mul, "Mul: ``a * b`` element-wise, with NumPy broadcasting.")
div = _arithmetic(
    "Div",
    "div",
    operator.truediv,
    "Div: ``a / b`` element-wise, with NumPy broadcasting (Int division truncates toward zero).",
)


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


abs_ = _unary("Abs", "abs_", lambda x: x.abs(), "``|x|``", kinds=_NUMERIC)
neg = _unary("Neg", "neg", lambda x: -x, "``-x``", kinds=_NUMERIC)
sign = _unary("Sign", "sign", lambda x: x.sign(), "-1, 0 or 1 by the sign of ``x``", 9, _NUMERIC)
ceil = _unary("Ceil", "ceil", lambda x: x.ceil(), "the smallest integer not below ``x``")
floor = _unary("Floor", "floor", lambda x: x.floor(), "the largest integer not above ``x``")


@op("Round")
def round_(x: AnyTensor) -> AnyTensor:
    """Half to even, as ONNX and NumPy."""
    return x.round()


sqrt = _unary("Sqrt", "sqrt", lambda x: x.sqrt(), "the square root (NaN below 0)")
exp = _unary("Exp", "exp", lambda x: x.exp(), "``e ** x``")
log = _unary("Log", "log", lambda x: x.log(), "the natural logarithm (NaN below 0, ``-inf`` at 0)")
reciprocal = _unary("Reciprocal", "reciprocal", lambda x: x.recip(), "``1 / x``")
sin = _unary("Sin", "sin", lambda x: x.sin(), "the sine (radians)", 7)
cos = _unary("Cos", "cos", lambda x: x.cos(), "the cosine (radians)", 7)
tan = _unary("Tan", "tan", lambda x: x.tan(), "the tangent (radians)", 7)
sinh = _unary("Sinh", "sinh", lambda x: x.sinh(), "the hyperbolic sine", 9)
cosh = _unary("Cosh", "cosh", lambda x: x.cosh(), "the hyperbolic cosine", 9)
asin = _unary("Asin", "asin", lambda x: x.asin(), "the arcsine, in radians (NaN outside [-1, 1])", 7)
acos = _unary("Acos", "acos", lambda x: x.acos(), "the arccosine, in radians (NaN outside [-1, 1])", 7)
atan = _unary("Atan", "atan", lambda x: x.atan(), "the arctangent, in radians", 7)
asinh = _unary("Asinh", "asinh", lambda x: x.asinh(), "the inverse hyperbolic sine", 9)
acosh = _unary("Acosh", "acosh", lambda x: x.acosh(), "the inverse hyperbolic cosine (NaN below 1)", 9)
atanh = _unary(
    "Atanh", "atanh", lambda x: x.atanh(), "the inverse hyperbolic tangent (NaN outside [-1, 1])", 9
)
erf = _unary("Erf", "erf", lambda x: x.erf(), "the Gauss error function", 9)


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
    """Mean: the element-wise mean of one or more tensors, with NumPy broadcasting.

    Each input is converted to the first one's kind and given leading size-1
    dims up to the highest rank; the result has the broadcast shape and the
    first input's kind (an Int mean stays Int). Shapes that do not broadcast
    raise ``ShapeError``.
    """
    return _fold(tensors, "__add__") / float(len(tensors))


class _Variadic(Protocol):
    """The signature of the ops over one or more tensors."""

    def __call__(self, *tensors: AnyTensor) -> AnyTensor: ...


def _extremum(onnx_name: str, name: str, pair: str, which: str) -> _Variadic:
    """Max or Min: ``pair`` (``max_pair``, ``min_pair``) folded over the broadcast inputs."""

    def fn(*tensors: AnyTensor) -> AnyTensor:
        return _fold(tensors, pair)

    doc = f"""{onnx_name}: the element-wise {which} of one or more tensors, with NumPy broadcasting.

Each input is converted to the first one's kind and given leading size-1
dims up to the highest rank; the result has the broadcast shape and the
first input's kind. Shapes that do not broadcast raise ``ShapeError``.
"""
    return define(onnx_name, name, fn, doc, __name__)


max_ = _extremum("Max", "max_", "max_pair", "maximum")
min_ = _extremum("Min", "min_", "min_pair", "minimum")
