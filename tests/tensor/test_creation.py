"""Tensor constructors: from Python data, filled shapes, ranges and identities."""

from typing import Any

import numpy as np
import pytest
from ferrum import Bool, DType, Float, Int, KindError, ShapeError, Tensor
from ferrum.backend import NdArray
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import (
    ALL_DTYPES,
    DEVICE,
    FERRUM_DTYPES,
    NP_DTYPES,
    arrays,
    assert_equal,
    dtypes,
    shapes_with_zero,
    tensor,
)

KINDS: dict[str, tuple[type[Any], str]] = {
    "Float": (Float, "f32"),
    "Int": (Int, "i64"),
    "Bool": (Bool, "bool"),
}


# --------------------------------------------------------------------------- filled shapes


@settings(max_examples=30, deadline=None)
@given(shapes_with_zero(max_rank=6), dtypes())
def test_zeros_ones_empty_with_dtype(shape: tuple[int, ...], dtype: str) -> None:
    want = FERRUM_DTYPES[dtype]
    zeros = Tensor.zeros(shape, DEVICE, dtype=want)
    ones = Tensor.ones(shape, DEVICE, dtype=want)
    empty = Tensor.empty(shape, DEVICE, dtype=want)
    assert_equal(zeros, np.zeros(shape, NP_DTYPES[dtype]), dtype)
    assert_equal(ones, np.ones(shape, NP_DTYPES[dtype]), dtype)
    assert empty.shape() == shape and empty.dtype == want
    assert zeros.rank() == len(shape) and zeros.num_elements() == int(np.prod(shape))


@pytest.mark.parametrize("kind", ["Float", "Int", "Bool"])
def test_constructors_take_a_kind_class(kind: str) -> None:
    cls, dtype = KINDS[kind]
    for t in (
        Tensor.zeros((2, 3), DEVICE, cls),
        Tensor.ones((2, 3), DEVICE, cls),
        Tensor.full((2, 3), 1, DEVICE, cls),
    ):
        assert t.dtype == FERRUM_DTYPES[dtype]
        assert t.kind is cls
    assert_equal(Tensor.ones((2, 3), DEVICE, cls), np.ones((2, 3), NP_DTYPES[dtype]), dtype)


def test_float_is_f32_by_default() -> None:
    assert Tensor.zeros((2,), DEVICE).dtype == DType.F32
    assert Tensor.ones((2, 2), DEVICE).kind is Float
    assert Tensor.full((1,), 2.5, DEVICE).dtype == DType.F32
    assert Tensor.eye(2, DEVICE).dtype == DType.F32


def test_dtype_overrides_kind() -> None:
    t = Tensor.zeros((2,), DEVICE, Float, dtype=DType.F64)
    assert t.dtype == DType.F64
    assert t.kind is Float


@settings(max_examples=30, deadline=None)
@given(shapes_with_zero(max_rank=5), st.sampled_from(["f32", "f64", "i64"]), st.integers(-1000, 1000))
def test_full_int_value(shape: tuple[int, ...], dtype: str, value: int) -> None:
    t = Tensor.full(shape, value, DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert_equal(t, np.full(shape, value, NP_DTYPES[dtype]), dtype)


@settings(max_examples=25, deadline=None)
@given(shapes_with_zero(max_rank=4), st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from(["f32", "f64"]))
def test_full_float_value(shape: tuple[int, ...], value: float, dtype: str) -> None:
    t = Tensor.full(shape, value, DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert_equal(t, np.full(shape, value, NP_DTYPES[dtype]), dtype)


def test_full_bool_and_special_floats() -> None:
    assert_equal(Tensor.full((2, 2), True, DEVICE, Bool), np.ones((2, 2), bool), "bool")
    assert_equal(Tensor.full((3,), 0, DEVICE, Bool), np.zeros(3, bool), "bool")
    assert_equal(Tensor.full((2,), 2.0, DEVICE, Int), np.array([2, 2]), "i64")
    inf = Tensor.full((2,), float("inf"), DEVICE).to_numpy()
    assert np.all(np.isposinf(inf))
    assert np.all(np.isnan(Tensor.full((2,), float("nan"), DEVICE).to_numpy()))


@settings(max_examples=30, deadline=None)
@given(
    st.data(),
    dtypes(),
    shapes_with_zero(max_rank=4),
    st.sampled_from(["contiguous", "transposed", "permuted"]),
)
def test_like_constructors_keep_shape_and_dtype(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    t = tensor(a, layout)
    assert_equal(t.zeros_like(), np.zeros(shape, NP_DTYPES[dtype]), dtype)
    assert_equal(t.ones_like(), np.ones(shape, NP_DTYPES[dtype]), dtype)
    assert_equal(t.full_like(1), np.full(shape, 1, NP_DTYPES[dtype]), dtype)
    np.testing.assert_array_equal(t.to_numpy(), a)  # the input is untouched


# --------------------------------------------------------------------------- from Python data


def test_from_data_infers_the_kind() -> None:
    b = Tensor.from_data([True, False], DEVICE)
    i = Tensor.from_data([1, 2, 3], DEVICE)
    f = Tensor.from_data([1.0, 2.0], DEVICE)
    mixed = Tensor.from_data([1, 2.5], DEVICE)
    assert (b.dtype, i.dtype, f.dtype, mixed.dtype) == (DType.Bool, DType.I64, DType.F32, DType.F32)
    assert (b.kind, i.kind, f.kind) == (Bool, Int, Float)
    assert_equal(mixed, np.array([1.0, 2.5], np.float32), "f32")
    # Bools among ints make an Int tensor.
    assert_equal(Tensor.from_data([True, 2], DEVICE), np.array([1, 2]), "i64")


@pytest.mark.parametrize(
    ("data", "shape"),
    [
        ([1.0], (1,)),
        ([[1.0, 2.0, 3.0]], (1, 3)),
        ([[[1.0], [2.0]], [[3.0], [4.0]]], (2, 2, 1)),
        ([[[[1.0, 2.0]]], [[[3.0, 4.0]]]], (2, 1, 1, 2)),
        ([], (0,)),
        ([[], []], (2, 0)),
    ],
)
def test_from_data_nested_shapes(data: Any, shape: tuple[int, ...]) -> None:
    t = Tensor.from_data(data, DEVICE, Float)
    assert t.shape() == shape
    assert t.to_data().to_list() == data
    np.testing.assert_array_equal(t.to_numpy(), np.array(data, np.float32).reshape(shape))


def test_from_data_tuples_and_numpy_scalars() -> None:
    t = Tensor.from_data(((1, 2), (3, 4)), DEVICE)
    assert_equal(t, np.array([[1, 2], [3, 4]]), "i64")
    floats: list[Any] = [np.float32(1.5), np.float64(2.5)]
    ints: list[Any] = [np.int32(3), np.int64(-4), np.uint8(5)]
    flags: list[Any] = [np.bool_(True), np.bool_(False)]
    n = Tensor.from_data(floats, DEVICE)
    assert_equal(n, np.array([1.5, 2.5], np.float32), "f32")
    k = Tensor.from_data(ints, DEVICE)
    assert_equal(k, np.array([3, -4, 5]), "i64")
    bools = Tensor.from_data(flags, DEVICE)
    assert_equal(bools, np.array([True, False]), "bool")


def _inferred_reference(values: list[Any]) -> np.ndarray:
    """The kind nested data implies, built by NumPy: all bools Bool, bools and ints Int, else f32."""
    if values and all(isinstance(v, (bool, np.bool_)) for v in values):
        return np.array(values, np.bool_)
    if values and all(isinstance(v, (bool, int, np.bool_, np.integer)) for v in values):
        return np.array([int(v) for v in values], np.int64)
    with np.errstate(over="ignore"):  # beyond f32 is inf, as a cast in the engine
        return np.array([float(v) for v in values], np.float64).astype(np.float32)


NUMBERS = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(width=64),
    st.floats(width=32).map(np.float32),
    st.integers(-(2**31), 2**31 - 1).map(np.int32),
    st.booleans().map(np.bool_),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(NUMBERS, max_size=12))
def test_from_data_infers_the_kind_of_any_mix(values: list[Any]) -> None:
    """The kind widens as values arrive (a float after ints, an int after bools), mixed NumPy scalar
    types in one list each read as their own kind, and the result is what NumPy builds."""
    expected = _inferred_reference(values)
    t = Tensor.from_data(values, DEVICE)
    assert t.dtype == {"b": DType.Bool, "i": DType.I64, "f": DType.F32}[expected.dtype.kind]
    np.testing.assert_array_equal(t.to_numpy(), expected)
    rows = Tensor.from_data([values, values], DEVICE)
    np.testing.assert_array_equal(rows.to_numpy(), np.stack([expected, expected]))


def test_from_data_ragged_and_bad_leaves_are_named_at_any_position() -> None:
    # mypy rejects these lists already; the runtime names the problem too
    late_row: Any = [1.0, 2.0, [3.0]]
    deep_row: Any = [[1, 2], [3, (4,)]]
    text: Any = [1.5, "x"]
    with pytest.raises(ShapeError, match="expected a number at depth 1, found a sequence"):
        Tensor.from_data(late_row, DEVICE)
    with pytest.raises(ShapeError, match="expected a number at depth 2, found a sequence"):
        Tensor.from_data(deep_row, DEVICE)
    with pytest.raises(KindError, match="expected numbers, found 'x'"):
        Tensor.from_data(text, DEVICE)
    with pytest.raises(KindError, match="fractional values cannot make an Int tensor"):
        Tensor.from_data([1, 2, 2.5], DEVICE, Int)
    with pytest.raises(KindError, match="does not fit in an Int tensor"):
        Tensor.from_data([1, 2**64], DEVICE)
    big = Tensor.from_data([1, 2**64], DEVICE, Float)
    np.testing.assert_array_equal(big.to_numpy(), np.array([1, 2**64], np.float32))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_from_data_with_dtype(dtype: str) -> None:
    t = Tensor.from_data([[0, 1], [2, 3]], DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert_equal(t, np.array([[0, 1], [2, 3]]).astype(NP_DTYPES[dtype]), dtype)


def test_from_data_with_kind_class() -> None:
    assert_equal(Tensor.from_data([1, 2], DEVICE, Float), np.array([1.0, 2.0], np.float32), "f32")
    assert_equal(Tensor.from_data([0.0, 2.0], DEVICE, Bool), np.array([False, True]), "bool")
    assert_equal(Tensor.from_data([1.0, -2.0], DEVICE, Int), np.array([1, -2]), "i64")


def test_typed_constructors() -> None:
    assert_equal(Tensor.from_floats([1, 2], DEVICE), np.array([1.0, 2.0], np.float32), "f32")
    assert_equal(Tensor.from_floats([[0.5]], DEVICE, dtype=DType.F64), np.array([[0.5]]), "f64")
    assert_equal(Tensor.from_ints([[1, -2], [3, 4]], DEVICE), np.array([[1, -2], [3, 4]]), "i64")
    assert_equal(Tensor.from_bool([[True], [False]], DEVICE), np.array([[True], [False]]), "bool")
    numbers: list[Any] = [0, 3]
    assert_equal(Tensor.from_bool(numbers, DEVICE), np.array([False, True]), "bool")


def test_from_data_of_tensordata_and_tensor() -> None:
    src = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE).transpose()
    data = src.to_data()
    again = Tensor.from_data(data, DEVICE)
    assert_equal(again, np.array([[1.0, 3.0], [2.0, 4.0]], np.float32), "f32")
    as_int = Tensor.from_data(data, DEVICE, Int)
    assert_equal(as_int, np.array([[1, 3], [2, 4]]), "i64")


@settings(max_examples=30, deadline=None)
@given(st.data(), dtypes(), shapes_with_zero(max_rank=4).filter(lambda s: 0 not in s[:-1]))
def test_from_data_roundtrips_nested_lists(data: st.DataObject, dtype: str, shape: tuple[int, ...]) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    t = Tensor.from_data(a.tolist(), DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert_equal(t, a, dtype)
    assert t.to_data().to_list() == a.tolist()


# --------------------------------------------------------------------------- ranges and identity


@settings(max_examples=50, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20))
def test_arange(start: int, end: int) -> None:
    assert_equal(Tensor.arange(start, end, DEVICE), np.arange(start, end, dtype=np.int64), "i64")


@settings(max_examples=50, deadline=None)
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-7, 7).filter(lambda s: s != 0))
def test_arange_step(start: int, end: int, step: int) -> None:
    t = Tensor.arange_step(start, end, step, DEVICE)
    assert_equal(t, np.arange(start, end, step, dtype=np.int64), "i64")
    assert t.kind is Int


@pytest.mark.parametrize("size", [0, 1, 2, 5])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_eye(size: int, dtype: str) -> None:
    t = Tensor.eye(size, DEVICE, dtype=FERRUM_DTYPES[dtype])
    assert_equal(t, np.eye(size, dtype=NP_DTYPES[dtype]), dtype)


def test_eye_with_kind() -> None:
    assert_equal(Tensor.eye(3, DEVICE, Int), np.eye(3, dtype=np.int64), "i64")
    assert_equal(Tensor.eye(2, DEVICE, Bool), np.eye(2, dtype=bool), "bool")


def test_device_and_backend() -> None:
    t = Tensor.zeros((2,), DEVICE)
    assert t.device() == DEVICE
    assert t.device().backend is NdArray
    assert not t.device().is_autodiff
