"""Element-wise arithmetic against NumPy: binary ops with broadcasting and the
Python operators, scalar ops, Int division and remainder rules, powers,
clamping, and the unary Float math functions."""

import math
from collections.abc import Callable
from operator import methodcaller
from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import (
    DEVICE,
    FLOAT_DTYPES,
    NUM_DTYPES,
    Array,
    T,
    arrays,
    assert_close,
    assert_equal,
    broadcastable_shapes,
    dtypes,
    layouts,
    ref,
    shapes,
    tensor,
)


def nonzero(a: Array) -> Array:
    """``a`` with zeros replaced by 1, for divisors."""
    return np.where(a == 0, np.ones_like(a), a)


def trunc_div(a: Array, b: Array) -> Array:
    """Integer division truncating toward zero."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


# --------------------------------------------------------------------------- binary ops, broadcasting

BINARY: dict[str, tuple[Callable[[T, T], T], Callable[[Array, Array], Array]]] = {
    "add": (lambda x, y: x.add(y), np.add),
    "sub": (lambda x, y: x.sub(y), np.subtract),
    "mul": (lambda x, y: x.mul(y), np.multiply),
    "max_pair": (lambda x, y: x.max_pair(y), np.maximum),
    "min_pair": (lambda x, y: x.min_pair(y), np.minimum),
    "+": (lambda x, y: x + y, np.add),
    "-": (lambda x, y: x - y, np.subtract),
    "*": (lambda x, y: x * y, np.multiply),
}


@settings(max_examples=50, deadline=None)
@given(
    st.data(),
    st.sampled_from(sorted(BINARY)),
    dtypes(NUM_DTYPES),
    broadcastable_shapes(),
    layouts(),
    layouts(),
)
def test_binary_broadcasting(
    data: st.DataObject,
    op: str,
    dtype: str,
    shapes2: tuple[tuple[int, ...], tuple[int, ...]],
    la: str,
    lb: str,
) -> None:
    a: Any = data.draw(arrays(dtype, shapes2[0]))
    b: Any = data.draw(arrays(dtype, shapes2[1]))
    fn, np_fn = BINARY[op]
    x, y = tensor(a, la), tensor(b, lb)
    assert_close(fn(x, y), ref(np_fn, a, b), dtype)
    np.testing.assert_array_equal(x.to_numpy(), a)
    np.testing.assert_array_equal(y.to_numpy(), b)


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(FLOAT_DTYPES), broadcastable_shapes(), layouts(), layouts())
def test_float_division(
    data: st.DataObject, dtype: str, shapes2: tuple[tuple[int, ...], tuple[int, ...]], la: str, lb: str
) -> None:
    a: Any = data.draw(arrays(dtype, shapes2[0]))
    b: Any = nonzero(data.draw(arrays(dtype, shapes2[1])))
    expected = ref(np.divide, a, b)
    assert_close(tensor(a, la).div(tensor(b, lb)), expected, dtype)
    assert_close(tensor(a, la) / tensor(b, lb), expected, dtype)


@settings(max_examples=40, deadline=None)
@given(st.data(), broadcastable_shapes(), layouts(), layouts())
def test_int_division_truncates_toward_zero(
    data: st.DataObject, shapes2: tuple[tuple[int, ...], tuple[int, ...]], la: str, lb: str
) -> None:
    a: Any = data.draw(arrays("i64", shapes2[0]))
    b: Any = nonzero(data.draw(arrays("i64", shapes2[1])))
    expected = trunc_div(*np.broadcast_arrays(a, b))
    assert_equal(tensor(a, la).div(tensor(b, lb)), expected, "i64")
    assert_equal(tensor(a, la) / tensor(b, lb), expected, "i64")


def test_int_division_known_values() -> None:
    a = Tensor.from_ints([7, -7, 7, -7, 0, 1], DEVICE)
    b = Tensor.from_ints([2, 2, -2, -2, 5, 3], DEVICE)
    assert_equal(a / b, np.array([3, -3, -3, 3, 0, 0]), "i64")
    assert_equal(a.div_scalar(2), np.array([3, -3, 3, -3, 0, 0]), "i64")
    assert_equal(a.div_scalar(-4), np.array([-1, 1, -1, 1, 0, 0]), "i64")


def test_int_division_by_zero_is_zero() -> None:
    a = Tensor.from_ints([5, -5, 0], DEVICE)
    assert_equal(a / Tensor.from_ints([0, 0, 0], DEVICE), np.array([0, 0, 0]), "i64")
    assert_equal(a.remainder_scalar(0), np.array([0, 0, 0]), "i64")


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(NUM_DTYPES), broadcastable_shapes(), layouts(), layouts())
def test_remainder_takes_the_divisor_sign(
    data: st.DataObject, dtype: str, shapes2: tuple[tuple[int, ...], tuple[int, ...]], la: str, lb: str
) -> None:
    a: Any = data.draw(arrays(dtype, shapes2[0]))
    b: Any = nonzero(data.draw(arrays(dtype, shapes2[1])))
    expected = ref(np.mod, a, b)  # NumPy's mod (Python's %) takes the divisor's sign
    assert_close(tensor(a, la).remainder(tensor(b, lb)), expected, dtype)
    assert_close(tensor(a, la) % tensor(b, lb), expected, dtype)


def test_remainder_known_values() -> None:
    a = Tensor.from_ints([7, -7, 7, -7, 6], DEVICE)
    b = Tensor.from_ints([3, 3, -3, -3, 3], DEVICE)
    assert_equal(a % b, np.array([1, 2, -2, -1, 0]), "i64")
    f = Tensor.from_floats([5.5, -5.5, 5.5, -5.5], DEVICE)
    assert_close(f.remainder_scalar(2.0), [1.5, 0.5, 1.5, 0.5], "f32")
    assert_close(f % -2.0, [-0.5, -1.5, -0.5, -1.5], "f32")
    assert_close(f.fmod_scalar(2.0), [1.5, -1.5, 1.5, -1.5], "f32")


@settings(max_examples=30, deadline=None)
@given(st.data(), dtypes(FLOAT_DTYPES), broadcastable_shapes(), layouts())
def test_fmod_and_atan2(
    data: st.DataObject, dtype: str, shapes2: tuple[tuple[int, ...], tuple[int, ...]], la: str
) -> None:
    a: Any = data.draw(arrays(dtype, shapes2[0]))
    b: Any = nonzero(data.draw(arrays(dtype, shapes2[1])))
    x, y = tensor(a, la), tensor(b)
    assert_close(x.fmod(y), ref(np.fmod, a, b), dtype)
    assert_close(x.atan2(y), ref(np.arctan2, a, b), dtype)
    assert_close(x.fmod_scalar(3.0), ref(np.fmod, a, np.asarray(3.0, a.dtype)), dtype)
    assert_close(x.atan2_scalar(-2.0), ref(np.arctan2, a, np.asarray(-2.0, a.dtype)), dtype)


def test_bool_tensors_do_not_do_arithmetic() -> None:
    from ferrum import KindError

    b = Tensor.from_bool([True, False], DEVICE)
    with pytest.raises(KindError, match="add"):
        b.add(b)


# --------------------------------------------------------------------------- scalars and reflected operators

SCALAR_OPS: dict[str, tuple[Callable[[T, Any], T], Callable[[Array, Any], Array]]] = {
    "add_scalar": (lambda x, s: x.add_scalar(s), np.add),
    "sub_scalar": (lambda x, s: x.sub_scalar(s), np.subtract),
    "mul_scalar": (lambda x, s: x.mul_scalar(s), np.multiply),
    "x + s": (lambda x, s: x + s, np.add),
    "x - s": (lambda x, s: x - s, np.subtract),
    "x * s": (lambda x, s: x * s, np.multiply),
    "s + x": (lambda x, s: s + x, lambda a, s: np.add(s, a)),
    "s - x": (lambda x, s: s - x, lambda a, s: np.subtract(s, a)),
    "s * x": (lambda x, s: s * x, lambda a, s: np.multiply(s, a)),
}


@settings(max_examples=50, deadline=None)
@given(
    st.data(),
    st.sampled_from(sorted(SCALAR_OPS)),
    dtypes(NUM_DTYPES),
    shapes(),
    layouts(),
    st.integers(-50, 50),
)
def test_scalar_ops(
    data: st.DataObject, op: str, dtype: str, shape: tuple[int, ...], layout: str, s: int
) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    fn, np_fn = SCALAR_OPS[op]
    scalar: Any = float(s) / 4 if dtype != "i64" else s
    expected = ref(np_fn, a, np.asarray(scalar, a.dtype))
    out = fn(tensor(a, layout), scalar)
    assert_close(out, expected, dtype)


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(FLOAT_DTYPES), shapes(), layouts(), st.floats(0.25, 8.0))
def test_scalar_division_both_sides(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str, s: float
) -> None:
    a: Any = nonzero(data.draw(arrays(dtype, shape)))
    x = tensor(a, layout)
    sc = np.asarray(s, a.dtype)
    assert_close(x.div_scalar(s), ref(np.divide, a, sc), dtype)
    assert_close(x / s, ref(np.divide, a, sc), dtype)
    assert_close(s / x, ref(np.divide, sc, a), dtype)
    assert_close(s % x, ref(np.mod, sc, a), dtype)
    assert_close(x % s, ref(np.mod, a, sc), dtype)
    assert_close(x.remainder_scalar(-s), ref(np.mod, a, -sc), dtype)


def test_reflected_int_operators() -> None:
    x = Tensor.from_ints([1, -3, 4], DEVICE)
    assert_equal(10 - x, np.array([9, 13, 6]), "i64")
    assert_equal(7 / x, np.array([7, -2, 1]), "i64")
    assert_equal(7 % x, np.array([0, -2, 3]), "i64")
    assert_equal(2 * x + 1, np.array([3, -5, 9]), "i64")
    # An integral float meets an Int tensor as an int.
    two: Any = 2.0
    assert_equal(x + two, np.array([3, -1, 6]), "i64")


def test_scalar_keeps_the_tensor_dtype() -> None:
    f64 = Tensor.from_floats([1.0, 2.0], DEVICE, dtype=DType.F64)
    assert (f64 + 1).dtype == DType.F64
    assert (f64 * 0.1).dtype == DType.F64
    assert_close(f64 * 0.1, [0.1, 0.2], "f64")
    f32 = Tensor.from_floats([1.0], DEVICE)
    assert (f32 + 1).dtype == DType.F32
    assert (f32 + np.float64(0.5)).dtype == DType.F32
    np_two: Any = np.int32(2)
    assert_close(f32 + np_two, [3.0], "f32")


def test_unary_operators() -> None:
    x = Tensor.from_floats([-1.5, 0.0, 2.0], DEVICE)
    assert_close(-x, [1.5, 0.0, -2.0], "f32")
    assert_close(+x, [-1.5, 0.0, 2.0], "f32")
    assert_close(abs(x), [1.5, 0.0, 2.0], "f32")
    i = Tensor.from_ints([-2, 3], DEVICE)
    assert_equal(-i, np.array([2, -3]), "i64")
    assert_equal(abs(i), np.array([2, 3]), "i64")


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(NUM_DTYPES), shapes(), layouts())
def test_neg_abs_sign(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    x = tensor(a, layout)
    assert_close(x.neg(), ref(np.negative, a), dtype)
    assert_close(x.abs(), ref(np.abs, a), dtype)
    assert_close(x.sign(), ref(np.sign, a), dtype)


def test_sign_of_nan_and_zero() -> None:
    s = Tensor.from_floats([float("nan"), 0.0, -0.0, -3.0], DEVICE).sign().to_numpy()
    assert np.isnan(s[0])
    np.testing.assert_array_equal(s[1:], [0.0, 0.0, -1.0])


# --------------------------------------------------------------------------- powers


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(FLOAT_DTYPES), broadcastable_shapes(), layouts())
def test_powf(
    data: st.DataObject, dtype: str, shapes2: tuple[tuple[int, ...], tuple[int, ...]], layout: str
) -> None:
    a: Any = data.draw(arrays(dtype, shapes2[0], low=0.1, high=10.0))
    b: Any = data.draw(arrays(dtype, shapes2[1], low=-3.0, high=3.0))
    expected = ref(np.power, a, b)
    assert_close(tensor(a, layout).powf(tensor(b)), expected, dtype, rtol=1e-4 if dtype == "f32" else 1e-12)
    assert_close(tensor(a, layout) ** tensor(b), expected, dtype, rtol=1e-4 if dtype == "f32" else 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.data(),
    dtypes(FLOAT_DTYPES),
    shapes(),
    layouts(),
    st.sampled_from([-2.5, -1.0, 0.0, 0.5, 1.5, 2.0, 3.0]),
)
def test_powf_scalar(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str, e: float) -> None:
    a: Any = data.draw(arrays(dtype, shape, low=0.1, high=10.0))
    expected = ref(np.power, a, np.asarray(e, a.dtype))
    rtol = 1e-5 if dtype == "f32" else 1e-12
    assert_close(tensor(a, layout).powf_scalar(e), expected, dtype, rtol=rtol)
    assert_close(tensor(a, layout) ** e, expected, dtype, rtol=rtol)


def test_rpow() -> None:
    x = Tensor.from_floats([0.0, 1.0, 2.0, -1.0], DEVICE)
    assert_close(2.0**x, [1.0, 2.0, 4.0, 0.5], "f32")


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(NUM_DTYPES), shapes(), layouts(), st.integers(0, 5))
def test_powi_scalar(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str, e: int) -> None:
    a: Any = data.draw(arrays(dtype, shape, low=-9, high=9))
    expected = ref(np.power, a, np.asarray(e, a.dtype))
    assert_close(tensor(a, layout).powi_scalar(e), expected, dtype)
    assert_close(tensor(a, layout) ** e, expected, dtype)


def test_powi_negative_exponents() -> None:
    f = Tensor.from_floats([2.0, -4.0, 0.5], DEVICE)
    assert_close(f.powi_scalar(-2), [0.25, 0.0625, 4.0], "f32")
    i = Tensor.from_ints([1, -1, 2, -1], DEVICE)
    # Int ^ negative: 1 stays 1, -1 alternates, others truncate to 0.
    assert_equal(i.powi_scalar(-1), np.array([1, -1, 0, -1]), "i64")
    assert_equal(i.powi_scalar(-2), np.array([1, 1, 0, 1]), "i64")


@settings(max_examples=30, deadline=None)
@given(st.data(), dtypes(NUM_DTYPES), broadcastable_shapes(max_rank=3), layouts())
def test_powi_tensor(
    data: st.DataObject, dtype: str, shapes2: tuple[tuple[int, ...], tuple[int, ...]], layout: str
) -> None:
    a: Any = data.draw(arrays(dtype, shapes2[0], low=-6, high=6))
    e: Any = data.draw(arrays("i64", shapes2[1], low=0, high=4))
    expected = ref(np.power, a, e.astype(a.dtype))
    assert_close(tensor(a, layout).powi(tensor(e)), expected, dtype)


# --------------------------------------------------------------------------- clamp


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(NUM_DTYPES), shapes(), layouts(), st.integers(-50, 0), st.integers(0, 50))
def test_clamp(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str, lo: int, hi: int
) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    x = tensor(a, layout)
    assert_close(x.clamp(lo, hi), ref(np.clip, a, lo, hi).astype(a.dtype), dtype)
    assert_close(x.clamp_min(lo), ref(np.maximum, a, np.asarray(lo, a.dtype)), dtype)
    assert_close(x.clamp_max(hi), ref(np.minimum, a, np.asarray(hi, a.dtype)), dtype)


def test_clamp_keeps_nan() -> None:
    out = Tensor.from_floats([float("nan"), -5.0, 5.0], DEVICE).clamp(-1.0, 1.0).to_numpy()
    assert np.isnan(out[0])
    np.testing.assert_array_equal(out[1:], [-1.0, 1.0])


def test_max_min_pair_propagate_nan() -> None:
    nan = float("nan")
    a = Tensor.from_floats([nan, 1.0, 2.0], DEVICE)
    b = Tensor.from_floats([0.0, nan, 1.0], DEVICE)
    for out in (a.max_pair(b), b.max_pair(a), a.min_pair(b), b.min_pair(a)):
        v = out.to_numpy()
        assert np.isnan(v[0]) and np.isnan(v[1]), v
    assert a.max_pair(b).to_numpy()[2] == 2.0
    assert a.min_pair(b).to_numpy()[2] == 1.0


# --------------------------------------------------------------------------- unary float math


def _erf(a: Array) -> Array:
    out: Array = np.vectorize(math.erf, otypes=[np.float64])(a)
    return out


def _sigmoid(a: Array) -> Array:
    x = a.astype(np.float64)
    return 1.0 / (1.0 + np.exp(-x))


def _numpy_unary(name: str) -> Callable[[Array], Array]:
    """NumPy's reference for the ferrum method ``name``."""
    special: dict[str, Callable[[Array], Array]] = {"erf": _erf, "recip": np.reciprocal, "sigmoid": _sigmoid}
    if name in special:
        return special[name]
    # NumPy spells the inverse trigonometric functions arcsin, arccosh, ...
    fn: Callable[[Array], Array] = getattr(np, "arc" + name[1:] if name.startswith("a") else name)
    return fn


# (domain low, domain high) -> the methods tested on values in it
UNARY_DOMAINS: dict[tuple[float, float], tuple[str, ...]] = {
    (-20.0, 20.0): ("exp",),
    (0.01, 100.0): ("log",),
    (-0.99, 100.0): ("log1p",),
    (-4.0, 4.0): ("erf",),
    (-100.0, 100.0): ("square", "asinh", "atan", "round", "floor", "ceil", "trunc"),
    (0.1, 100.0): ("recip",),
    (0.0, 100.0): ("sqrt",),
    (-10.0, 10.0): ("sin", "cos", "sinh", "cosh", "tanh"),
    (-1.4, 1.4): ("tan",),
    (-1.0, 1.0): ("asin", "acos"),
    (1.0, 100.0): ("acosh",),
    (-0.99, 0.99): ("atanh",),
    (-30.0, 30.0): ("sigmoid",),
}
# name -> (method, NumPy reference, domain low, domain high)
UNARY: dict[str, tuple[Callable[[T], T], Callable[[Array], Array], float, float]] = {
    name: (methodcaller(name), _numpy_unary(name), low, high)
    for (low, high), names in UNARY_DOMAINS.items()
    for name in names
}


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(sorted(UNARY)), dtypes(FLOAT_DTYPES), shapes(), layouts())
def test_unary_float_math(
    data: st.DataObject, name: str, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    fn, np_fn, low, high = UNARY[name]
    a: Any = data.draw(arrays(dtype, shape, low=low, high=high))
    x = tensor(a, layout)
    expected = ref(np_fn, a, dtype=dtype)
    # f32 transcendental kernels are allowed a few ulps.
    rtol, atol = (2e-5, 2e-6) if dtype == "f32" else (1e-12, 1e-12)
    assert_close(fn(x), expected, dtype, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(x.to_numpy(), a)


def test_round_is_half_to_even() -> None:
    x = Tensor.from_floats([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6], DEVICE)
    assert_close(
        x.round(), np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6], np.float32)), "f32"
    )


def test_unary_math_special_values() -> None:
    x = Tensor.from_floats([0.0, -1.0, float("inf")], DEVICE, dtype=DType.F64)
    log = x.log().to_numpy()
    assert log[0] == -np.inf and np.isnan(log[1]) and log[2] == np.inf
    assert x.exp().to_numpy()[2] == np.inf
    assert np.isnan(x.sqrt().to_numpy()[1])
    big = Tensor.from_floats([-1000.0, 1000.0], DEVICE)
    assert_close(big.sigmoid(), [0.0, 1.0], "f32")
    assert_close(big.exp(), [0.0, np.inf], "f32")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_functions_keep_dtype(dtype: str) -> None:
    x = Tensor.from_floats([0.5], DEVICE, dtype=DType.F64 if dtype == "f64" else DType.F32)
    for name, (fn, _, _, _) in UNARY.items():
        assert fn(x).dtype == x.dtype, name
