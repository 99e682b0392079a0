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
    """Add: ``a + b`` element-wise, with NumPy broadcasting.

    The lower-rank operand gets leading size-1 dims, then size-1 dims stretch;
    ``b`` is converted to ``a``'s kind first. The result has the broadcast
    shape and ``a``'s kind. Shapes that do not broadcast raise
    ``ShapeError``; Bool operands raise ``KindError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> a = Tensor.from_numpy(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), device)
        >>> b = Tensor.from_numpy(np.array([10.0, 20.0], np.float32), device)
        >>> add(a, b).to_numpy().tolist()
        [[11.0, 22.0], [13.0, 24.0]]
    """
    a, b = broadcast(a, same_kind(b, a))
    return a + b


@op("Sub")
def sub(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Sub: ``a - b`` element-wise, with NumPy broadcasting.

    The lower-rank operand gets leading size-1 dims, then size-1 dims stretch;
    ``b`` is converted to ``a``'s kind first. The result has the broadcast
    shape and ``a``'s kind. Shapes that do not broadcast raise
    ``ShapeError``; Bool operands raise ``KindError``.
    """
    a, b = broadcast(a, same_kind(b, a))
    return a - b


@op("Mul")
def mul(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Mul: ``a * b`` element-wise, with NumPy broadcasting.

    The lower-rank operand gets leading size-1 dims, then size-1 dims stretch;
    ``b`` is converted to ``a``'s kind first. The result has the broadcast
    shape and ``a``'s kind. Shapes that do not broadcast raise
    ``ShapeError``; Bool operands raise ``KindError``.
    """
    a, b = broadcast(a, same_kind(b, a))
    return a * b


@op("Div")
def div(a: AnyTensor, b: AnyTensor) -> AnyTensor:
    """Div: ``a / b`` element-wise, with NumPy broadcasting (Int division truncates toward zero).

    The lower-rank operand gets leading size-1 dims, then size-1 dims stretch;
    ``b`` is converted to ``a``'s kind first. The result has the broadcast
    shape and ``a``'s kind. Shapes that do not broadcast raise
    ``ShapeError``; Bool operands raise ``KindError``.
    """
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
    """Abs: ``|x|``, element-wise.

    ``x`` is a Float or Int tensor of any shape; the result has its shape and dtype.
    A Bool ``x`` raises ``KindError``.
    """
    return x.abs()


@op("Neg")
def neg(x: AnyTensor) -> AnyTensor:
    """Neg: ``-x``, element-wise.

    ``x`` is a Float or Int tensor of any shape; the result has its shape and dtype.
    A Bool ``x`` raises ``KindError``.
    """
    return -x


@op("Sign")
def sign(x: AnyTensor) -> AnyTensor:
    """Sign (since opset 9): -1, 0 or 1 by the sign of ``x``, element-wise.

    ``x`` is a Float or Int tensor of any shape; the result has its shape and dtype.
    A Bool ``x`` raises ``KindError``.
    """
    return x.sign()


@op("Ceil")
def ceil(x: AnyTensor) -> AnyTensor:
    """Ceil: the smallest integer not below ``x``, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.ceil()


@op("Floor")
def floor(x: AnyTensor) -> AnyTensor:
    """Floor: the largest integer not above ``x``, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.floor()


@op("Round")
def round_(x: AnyTensor) -> AnyTensor:
    """Half to even, as ONNX and NumPy."""
    return x.round()


@op("Sqrt")
def sqrt(x: AnyTensor) -> AnyTensor:
    """Sqrt: the square root (NaN below 0), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.sqrt()


@op("Exp")
def exp(x: AnyTensor) -> AnyTensor:
    """Exp: ``e ** x``, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.exp()


@op("Log")
def log(x: AnyTensor) -> AnyTensor:
    """Log: the natural logarithm (NaN below 0, ``-inf`` at 0), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.log()


@op("Reciprocal")
def reciprocal(x: AnyTensor) -> AnyTensor:
    """Reciprocal: ``1 / x``, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.recip()


@op("Sin")
def sin(x: AnyTensor) -> AnyTensor:
    """Sin (since opset 7): the sine (radians), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.sin()


@op("Cos")
def cos(x: AnyTensor) -> AnyTensor:
    """Cos (since opset 7): the cosine (radians), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.cos()


@op("Tan")
def tan(x: AnyTensor) -> AnyTensor:
    """Tan (since opset 7): the tangent (radians), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.tan()


@op("Sinh")
def sinh(x: AnyTensor) -> AnyTensor:
    """Sinh (since opset 9): the hyperbolic sine, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.sinh()


@op("Cosh")
def cosh(x: AnyTensor) -> AnyTensor:
    """Cosh (since opset 9): the hyperbolic cosine, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.cosh()


@op("Asin")
def asin(x: AnyTensor) -> AnyTensor:
    """Asin (since opset 7): the arcsine, in radians (NaN outside [-1, 1]), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.asin()


@op("Acos")
def acos(x: AnyTensor) -> AnyTensor:
    """Acos (since opset 7): the arccosine, in radians (NaN outside [-1, 1]), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.acos()


@op("Atan")
def atan(x: AnyTensor) -> AnyTensor:
    """Atan (since opset 7): the arctangent, in radians, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.atan()


@op("Asinh")
def asinh(x: AnyTensor) -> AnyTensor:
    """Asinh (since opset 9): the inverse hyperbolic sine, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.asinh()


@op("Acosh")
def acosh(x: AnyTensor) -> AnyTensor:
    """Acosh (since opset 9): the inverse hyperbolic cosine (NaN below 1), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.acosh()


@op("Atanh")
def atanh(x: AnyTensor) -> AnyTensor:
    """Atanh (since opset 9): the inverse hyperbolic tangent (NaN outside [-1, 1]), element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
    return x.atanh()


@op("Erf")
def erf(x: AnyTensor) -> AnyTensor:
    """Erf (since opset 9): the Gauss error function, element-wise.

    ``x`` is a Float tensor of any shape; the result has its shape and dtype.
    Another kind raises ``KindError``.
    """
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
    """Mean: the element-wise mean of one or more tensors, with NumPy broadcasting.

    Each input is converted to the first one's kind and given leading size-1
    dims up to the highest rank; the result has the broadcast shape and the
    first input's kind (an Int mean stays Int). Shapes that do not broadcast
    raise ``ShapeError``.
    """
    return _fold(tensors, "__add__") / float(len(tensors))


@op("Max")
def max_(*tensors: AnyTensor) -> AnyTensor:
    """Max: the element-wise maximum of one or more tensors, with NumPy broadcasting.

    Each input is converted to the first one's kind and given leading size-1
    dims up to the highest rank; the result has the broadcast shape and the
    first input's kind. Shapes that do not broadcast raise ``ShapeError``.
    """
    return _fold(tensors, "max_pair")


@op("Min")
def min_(*tensors: AnyTensor) -> AnyTensor:
    """Min: the element-wise minimum of one or more tensors, with NumPy broadcasting.

    Each input is converted to the first one's kind and given leading size-1
    dims up to the highest rank; the result has the broadcast shape and the
    first input's kind. Shapes that do not broadcast raise ``ShapeError``.
    """
    return _fold(tensors, "min_pair")
