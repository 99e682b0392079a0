"""Comparisons (Bool results, broadcasting, scalars), Bool logic, Int bitwise
ops and the Float checks (is_nan, is_close, ...) against NumPy."""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import (
    ALL_DTYPES,
    DEVICE,
    FLOAT_DTYPES,
    NUM_DTYPES,
    Array,
    T,
    arrays,
    assert_equal,
    broadcastable_shapes,
    dtypes,
    layouts,
    shapes,
    tensor,
)

Pair = tuple[tuple[int, ...], tuple[int, ...]]

# name -> (tensor method, scalar method, NumPy reference, works on Bool)
COMPARE: dict[
    str, tuple[Callable[[T, T], T], Callable[[T, Any], T], Callable[[Array, Array], Array], bool]
] = {
    "equal": (lambda x, y: x.equal(y), lambda x, s: x.equal_elem(s), np.equal, True),
    "not_equal": (lambda x, y: x.not_equal(y), lambda x, s: x.not_equal_elem(s), np.not_equal, True),
    "greater": (lambda x, y: x.greater(y), lambda x, s: x.greater_elem(s), np.greater, False),
    "greater_equal": (
        lambda x, y: x.greater_equal(y),
        lambda x, s: x.greater_equal_elem(s),
        np.greater_equal,
        False,
    ),
    "lower": (lambda x, y: x.lower(y), lambda x, s: x.lower_elem(s), np.less, False),
    "lower_equal": (lambda x, y: x.lower_equal(y), lambda x, s: x.lower_equal_elem(s), np.less_equal, False),
}


def small_values(dtype: str, shape: tuple[int, ...]) -> st.SearchStrategy[Array]:
    """Few distinct values, so that equal elements are common."""
    return arrays(dtype, shape, low=-3, high=3).map(lambda a: np.round(a) if a.dtype.kind == "f" else a)


@settings(max_examples=50, deadline=None)
@given(
    st.data(),
    st.sampled_from(sorted(COMPARE)),
    dtypes(ALL_DTYPES),
    broadcastable_shapes(),
    layouts(),
    layouts(),
)
def test_compare_tensors(data: st.DataObject, op: str, dtype: str, pair: Pair, la: str, lb: str) -> None:
    fn, _, np_fn, on_bool = COMPARE[op]
    if dtype == "bool" and not on_bool:
        dtype = "i64"
    a: Any = data.draw(small_values(dtype, pair[0]))
    b: Any = data.draw(small_values(dtype, pair[1]))
    out = fn(tensor(a, la), tensor(b, lb))
    assert_equal(out, np_fn(a, b), "bool")


@settings(max_examples=50, deadline=None)
@given(
    st.data(), st.sampled_from(sorted(COMPARE)), dtypes(NUM_DTYPES), shapes(), layouts(), st.integers(-3, 3)
)
def test_compare_scalars(
    data: st.DataObject, op: str, dtype: str, shape: tuple[int, ...], layout: str, s: int
) -> None:
    _, fn, np_fn, _ = COMPARE[op]
    a: Any = data.draw(small_values(dtype, shape))
    scalar: Any = s if dtype == "i64" else s / 2
    assert_equal(fn(tensor(a, layout), scalar), np_fn(a, np.asarray(scalar, a.dtype)), "bool")


def test_compare_float_scalar_in_the_tensor_dtype() -> None:
    x = Tensor.from_floats([0.1, 0.2], DEVICE)
    # 0.1 is converted to f32 before comparing, so the f32 element equals it.
    assert_equal(x.equal_elem(0.1), np.array([True, False]), "bool")
    assert_equal(x.greater_elem(0.15), np.array([False, True]), "bool")


def test_bool_equality() -> None:
    a = Tensor.from_bool([True, True, False, False], DEVICE)
    b = Tensor.from_bool([True, False, True, False], DEVICE)
    assert_equal(a.equal(b), np.array([True, False, False, True]), "bool")
    assert_equal(a.not_equal(b), np.array([False, True, True, False]), "bool")
    assert_equal(a.equal_elem(True), np.array([True, True, False, False]), "bool")


def test_compare_with_nan() -> None:
    nan = float("nan")
    a = Tensor.from_floats([nan, 1.0, nan], DEVICE)
    b = Tensor.from_floats([nan, nan, 1.0], DEVICE)
    assert_equal(a.equal(b), np.array([False, False, False]), "bool")
    assert_equal(a.not_equal(b), np.array([True, True, True]), "bool")
    assert_equal(a.greater_equal(b), np.array([False, False, False]), "bool")
    assert_equal(a.lower_elem(2.0), np.array([False, True, False]), "bool")


# --------------------------------------------------------------------------- Bool logic

LOGIC: dict[str, tuple[Callable[[T, T], T], Callable[[Array, Array], Array]]] = {
    "bool_and": (lambda x, y: x.bool_and(y), np.logical_and),
    "bool_or": (lambda x, y: x.bool_or(y), np.logical_or),
    "bool_xor": (lambda x, y: x.bool_xor(y), np.logical_xor),
    "&": (lambda x, y: x & y, np.logical_and),
    "|": (lambda x, y: x | y, np.logical_or),
    "^": (lambda x, y: x ^ y, np.logical_xor),
}


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(sorted(LOGIC)), broadcastable_shapes(), layouts(), layouts())
def test_bool_logic(data: st.DataObject, op: str, pair: Pair, la: str, lb: str) -> None:
    a: Any = data.draw(arrays("bool", pair[0]))
    b: Any = data.draw(arrays("bool", pair[1]))
    fn, np_fn = LOGIC[op]
    assert_equal(fn(tensor(a, la), tensor(b, lb)), np_fn(a, b), "bool")


@settings(max_examples=30, deadline=None)
@given(st.data(), shapes(), layouts())
def test_bool_not(data: st.DataObject, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays("bool", shape))
    x = tensor(a, layout)
    assert_equal(x.bool_not(), ~a, "bool")
    assert_equal(~x, ~a, "bool")


# --------------------------------------------------------------------------- Int bitwise

BITWISE: dict[str, tuple[Callable[[T, T], T], Callable[[T, int], T], Callable[[Array, Array], Array]]] = {
    "and": (lambda x, y: x.bitwise_and(y), lambda x, s: x.bitwise_and_scalar(s), np.bitwise_and),
    "or": (lambda x, y: x.bitwise_or(y), lambda x, s: x.bitwise_or_scalar(s), np.bitwise_or),
    "xor": (lambda x, y: x.bitwise_xor(y), lambda x, s: x.bitwise_xor_scalar(s), np.bitwise_xor),
    "&": (lambda x, y: x & y, lambda x, s: x & s, np.bitwise_and),
    "|": (lambda x, y: x | y, lambda x, s: x | s, np.bitwise_or),
    "^": (lambda x, y: x ^ y, lambda x, s: x ^ s, np.bitwise_xor),
}


@settings(max_examples=40, deadline=None)
@given(
    st.data(), st.sampled_from(sorted(BITWISE)), broadcastable_shapes(), layouts(), st.integers(-1000, 1000)
)
def test_bitwise(data: st.DataObject, op: str, pair: Pair, layout: str, s: int) -> None:
    a: Any = data.draw(arrays("i64", pair[0], low=-1000, high=1000))
    b: Any = data.draw(arrays("i64", pair[1], low=-1000, high=1000))
    fn, fn_scalar, np_fn = BITWISE[op]
    assert_equal(fn(tensor(a, layout), tensor(b)), np_fn(a, b), "i64")
    assert_equal(fn_scalar(tensor(a, layout), s), np_fn(a, np.asarray(s, np.int64)), "i64")


@settings(max_examples=30, deadline=None)
@given(st.data(), broadcastable_shapes(), layouts())
def test_shifts(data: st.DataObject, pair: Pair, layout: str) -> None:
    a: Any = data.draw(arrays("i64", pair[0], low=-1000, high=1000))
    n: Any = data.draw(arrays("i64", pair[1], low=0, high=40))
    x, k = tensor(a, layout), tensor(n)
    assert_equal(x.bitwise_left_shift(k), np.left_shift(a, n), "i64")
    assert_equal(x << k, np.left_shift(a, n), "i64")
    assert_equal(x.bitwise_right_shift(k), np.right_shift(a, n), "i64")
    assert_equal(x >> k, np.right_shift(a, n), "i64")
    assert_equal(x.bitwise_left_shift_scalar(3), np.left_shift(a, 3), "i64")
    assert_equal(x.bitwise_right_shift_scalar(2), np.right_shift(a, 2), "i64")
    assert_equal(x << 5, np.left_shift(a, 5), "i64")
    assert_equal(x >> 1, np.right_shift(a, 1), "i64")


def test_shifts_out_of_range_saturate() -> None:
    x = Tensor.from_ints([5, -5], DEVICE)
    assert_equal(x.bitwise_left_shift_scalar(64), np.array([0, 0]), "i64")
    assert_equal(x.bitwise_left_shift_scalar(-1), np.array([0, 0]), "i64")
    assert_equal(x.bitwise_right_shift_scalar(64), np.array([0, -1]), "i64")
    assert_equal(x.bitwise_right_shift_scalar(200), np.array([0, -1]), "i64")


@settings(max_examples=30, deadline=None)
@given(st.data(), shapes(), layouts())
def test_bitwise_not(data: st.DataObject, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays("i64", shape, low=-(2**40), high=2**40))
    x = tensor(a, layout)
    assert_equal(x.bitwise_not(), np.invert(a), "i64")
    assert_equal(~x, np.invert(a), "i64")


# --------------------------------------------------------------------------- Float checks


def special_floats(dtype: str, shape: tuple[int, ...]) -> st.SearchStrategy[Array]:
    values = st.sampled_from([0.0, -1.5, 2.0, float("nan"), float("inf"), float("-inf"), 1e-3])
    return arrays(dtype, shape).flatmap(
        lambda a: st.lists(values, min_size=a.size, max_size=a.size).map(
            lambda v: np.asarray(v, a.dtype).reshape(a.shape)
        )
    )


@settings(max_examples=30, deadline=None)
@given(st.data(), dtypes(FLOAT_DTYPES), shapes(), layouts())
def test_float_checks(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(special_floats(dtype, shape))
    x = tensor(a, layout)
    assert_equal(x.is_nan(), np.isnan(a), "bool")
    assert_equal(x.is_inf(), np.isinf(a), "bool")
    assert_equal(x.is_finite(), np.isfinite(a), "bool")
    assert_equal(x.contains_nan(), np.array([np.isnan(a).any()]), "bool")


@settings(max_examples=30, deadline=None)
@given(
    st.data(),
    dtypes(FLOAT_DTYPES),
    broadcastable_shapes(),
    st.sampled_from([1e-5, 1e-2, 0.5]),
    st.sampled_from([0.0, 1e-8, 0.1]),
)
def test_is_close(data: st.DataObject, dtype: str, pair: Pair, rtol: float, atol: float) -> None:
    a: Any = data.draw(arrays(dtype, pair[0], low=-2, high=2))
    noise: Any = data.draw(arrays(dtype, pair[1], low=-0.2, high=0.2))
    b = (np.broadcast_to(a, np.broadcast_shapes(a.shape, noise.shape)) + noise).astype(a.dtype)
    b = b[tuple(slice(0, 1) if n == 1 else slice(None) for n in pair[1])]
    x, y = tensor(a), tensor(b, "transposed")
    expected = np.isclose(a, b, rtol=rtol, atol=atol)
    assert_equal(x.is_close(y, rtol, atol), expected, "bool")
    assert x.all_close(y, rtol, atol) == bool(expected.all())


def test_is_close_defaults_and_specials() -> None:
    nan, inf = float("nan"), float("inf")
    a = Tensor.from_floats([1.0, nan, inf, -inf, 1.0], DEVICE, dtype=DType.F64)
    b = Tensor.from_floats([1.0 + 1e-6, nan, inf, inf, 1.001], DEVICE, dtype=DType.F64)
    assert_equal(a.is_close(b), np.array([True, False, True, False, False]), "bool")
    assert not a.all_close(b)
    ones = Tensor.ones((2, 2), DEVICE)
    assert ones.all_close(ones + 1e-7)
    assert not ones.all_close(ones + 1e-3)


@pytest.mark.parametrize("kind", ["i64", "bool"])
def test_float_checks_need_float(kind: str) -> None:
    from ferrum import KindError

    x = tensor(np.zeros(3, dtype=np.int64 if kind == "i64" else bool))
    with pytest.raises(KindError, match="is_nan"):
        x.is_nan()
