"""Reductions, statistics, cumulative ops and sorting against NumPy, with
Burn's rules: ``*_dim`` keeps the dim, full reductions give shape (1,), Int
means truncate, argmax/argmin pick the first extremum, sorts are stable."""

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
    SETTINGS,
    Array,
    T,
    array_tensors,
    arrays,
    assert_close,
    assert_equal,
    dtype_name,
    dtypes,
    layouts,
    shapes,
    tensor,
)


@st.composite
def tensors(
    draw: st.DrawFn,
    names: tuple[str, ...] = NUM_DTYPES,
    max_side: int = 5,
    low: float = -100,
    high: float = 100,
) -> tuple[Array, T, str]:
    """A NumPy array, the same values as a ferrum tensor in any layout, and the dtype name."""
    a, t = draw(array_tensors(names, max_side=max_side, low=low, high=high))
    return a, t, dtype_name(a)


def sum_tol(a: Array, dtype: str, axis: Any = None) -> tuple[float, float]:
    """Tolerance for a sum of ``a``'s elements: rounding grows with the magnitudes summed."""
    if dtype == "i64":
        return 0.0, 0.0
    scale = float(np.abs(a.astype(np.float64)).sum(axis=axis).max()) if a.size else 0.0
    eps = 1e-6 if dtype == "f32" else 1e-14
    return eps, eps * (scale + 1.0) * 4


def trunc_div(total: Array, n: int) -> Array:
    return np.where(total < 0, -((-total) // n), total // n)


# --------------------------------------------------------------------------- full reductions


@SETTINGS
@given(tensors())
def test_full_reductions(at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    a64 = a.astype(np.float64) if dtype != "i64" else a
    rtol, atol = sum_tol(a, dtype)
    assert_close(t.sum(), np.array([a64.sum()]).astype(a.dtype), dtype, rtol=rtol, atol=atol)
    if dtype == "i64":
        assert_equal(t.mean(), np.array([trunc_div(np.asarray(a.sum()), a.size)]), dtype)
    else:
        assert_close(t.mean(), np.array([a64.mean()]).astype(a.dtype), dtype, rtol=rtol, atol=atol / a.size)
    assert_equal(t.max(), np.array([a.max()]), dtype)
    assert_equal(t.min(), np.array([a.min()]), dtype)
    assert_equal(t.max_abs(), np.array([np.abs(a).max()]), dtype)
    for r in (t.sum(), t.mean(), t.max(), t.min(), t.max_abs()):
        assert r.shape() == (1,)


@SETTINGS
@given(tensors(max_side=4, low=-2, high=2))
def test_prod(at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    expected = np.array([np.prod(a.astype(np.float64) if dtype != "i64" else a)]).astype(a.dtype)
    assert_close(t.prod(), expected, dtype, rtol=1e-4 if dtype == "f32" else 1e-12, atol=1e-30)
    dim = a.ndim - 1
    expected_dim = np.prod(a.astype(np.float64) if dtype != "i64" else a, axis=dim, keepdims=True).astype(
        a.dtype
    )
    assert_close(t.prod_dim(dim), expected_dim, dtype, rtol=1e-4 if dtype == "f32" else 1e-12, atol=1e-30)


@SETTINGS
@given(tensors(names=ALL_DTYPES))
def test_any_all(at: tuple[Array, T, str]) -> None:
    a, t, _ = at
    assert_equal(t.any(), np.array([a.any()]), "bool")
    assert_equal(t.all(), np.array([a.all()]), "bool")
    dim = a.ndim - 1
    assert_equal(t.any_dim(dim), np.asarray(a.any(axis=dim, keepdims=True)), "bool")
    assert_equal(t.all_dim(0), np.asarray(a.all(axis=0, keepdims=True)), "bool")


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "flipped", "stepped", "permuted"])
@pytest.mark.parametrize("shape", [(1, 4, 1, 4), (2, 1, 3), (3, 1)])
def test_full_reductions_of_strided_views_with_unit_dims(layout: str, shape: tuple[int, ...]) -> None:
    a = ((np.arange(int(np.prod(shape))) % 5) - 2).astype(np.float32).reshape(shape) / 2
    t = tensor(a, layout)
    assert_close(t.sum(), [a.sum()], "f32")
    assert_close(t.mean(), [a.mean()], "f32")
    assert_close(t.prod(), [a.prod()], "f32")
    assert_equal(t.max(), np.array([a.max()]), "f32")
    assert_equal(t.min(), np.array([a.min()]), "f32")
    assert_equal(t.max_abs(), np.array([np.abs(a).max()]), "f32")


def test_reductions_of_empty_tensors() -> None:
    e = Tensor.zeros((0, 3), DEVICE)
    assert_equal(e.sum(), np.array([0.0], np.float32), "f32")
    assert_equal(e.prod(), np.array([1.0], np.float32), "f32")
    assert_equal(e.sum_dim(0), np.zeros((1, 3), np.float32), "f32")
    assert np.isnan(e.mean_dim(0).to_numpy()).all()
    assert_equal(e.any(), np.array([False]), "bool")
    assert_equal(e.all(), np.array([True]), "bool")


# --------------------------------------------------------------------------- reductions along dims


DIM_REDUCE: dict[str, tuple[Callable[[T, int], T], Callable[..., Array]]] = {
    "sum_dim": (lambda t, d: t.sum_dim(d), np.sum),
    "max_dim": (lambda t, d: t.max_dim(d), np.max),
    "min_dim": (lambda t, d: t.min_dim(d), np.min),
    "max_abs_dim": (
        lambda t, d: t.max_abs_dim(d),
        lambda a, axis, keepdims: np.abs(a).max(axis=axis, keepdims=keepdims),
    ),
}


@settings(max_examples=50, deadline=None)
@given(st.data(), st.sampled_from(sorted(DIM_REDUCE)), tensors())
def test_reduce_dim_keeps_the_dim(data: st.DataObject, op: str, at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    fn, np_fn = DIM_REDUCE[op]
    src = a.astype(np.float64) if dtype != "i64" else a
    expected = np_fn(src, axis=dim, keepdims=True).astype(a.dtype)
    rtol, atol = sum_tol(a, dtype, axis=dim)
    out = fn(t, dim)
    assert out.rank() == a.ndim
    assert_close(out, expected, dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(st.data(), tensors())
def test_mean_dim(data: st.DataObject, at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[dim]
    if dtype == "i64":
        assert_equal(t.mean_dim(dim), trunc_div(a.sum(axis=dim, keepdims=True), n), dtype)
    else:
        rtol, atol = sum_tol(a, dtype, axis=dim)
        expected = a.astype(np.float64).mean(axis=dim, keepdims=True).astype(a.dtype)
        assert_close(t.mean_dim(dim), expected, dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(st.data(), tensors(max_side=4, low=-2, high=2))
def test_reduce_dims(data: st.DataObject, at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    dims = data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
    axis = tuple(dims)
    src = a.astype(np.float64) if dtype != "i64" else a
    rtol, atol = sum_tol(a, dtype, axis=axis)
    assert_close(
        t.sum_dims(dims), src.sum(axis=axis, keepdims=True).astype(a.dtype), dtype, rtol=rtol, atol=atol
    )
    prod = src.prod(axis=axis, keepdims=True).astype(a.dtype)
    assert_close(t.prod_dims(dims), prod, dtype, rtol=1e-4 if dtype == "f32" else 1e-12, atol=1e-30)
    if dtype == "i64":
        # Burn folds mean_dim over the dims in the order given, each step truncating.
        expected = a
        for d in dims:
            expected = trunc_div(expected.sum(axis=d, keepdims=True), a.shape[d])
        assert_equal(t.mean_dims(dims), expected, dtype)
    else:
        assert_close(
            t.mean_dims(dims), src.mean(axis=axis, keepdims=True).astype(a.dtype), dtype, rtol=rtol, atol=atol
        )
    assert_close(
        t.sum_dims(dims[0]), src.sum(axis=dims[0], keepdims=True).astype(a.dtype), dtype, rtol=rtol, atol=atol
    )


def test_int_mean_truncates_toward_zero() -> None:
    t = Tensor.from_ints([[-7, 0], [2, 1]], DEVICE)
    assert_equal(t.mean(), np.array([-1]), "i64")  # -4 / 4
    assert_equal(t.mean_dim(1), np.array([[-3], [1]]), "i64")
    assert_equal(Tensor.from_ints([1, 2, 4], DEVICE).mean(), np.array([2]), "i64")


# --------------------------------------------------------------------------- arg extrema


def few_values(dtype: str) -> Callable[[Array], Array]:
    """Round floats so that ties are common."""
    return lambda a: np.round(a / 40).astype(a.dtype) if dtype != "i64" else (a // 40)


@settings(max_examples=50, deadline=None)
@given(st.data(), tensors())
def test_argmax_argmin_first_extremum(data: st.DataObject, at: tuple[Array, T, str]) -> None:
    a, _, dtype = at
    a = few_values(dtype)(a)
    t = tensor(a, data.draw(layouts()))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    amax = np.expand_dims(np.argmax(a, axis=dim), dim)  # NumPy also returns the first
    amin = np.expand_dims(np.argmin(a, axis=dim), dim)
    assert_equal(t.argmax(dim), amax, "i64")
    assert_equal(t.argmin(dim), amin, "i64")
    values, idx = t.max_dim_with_indices(dim)
    assert_equal(values, np.max(a, axis=dim, keepdims=True), dtype)
    assert_equal(idx, amax, "i64")
    values, idx = t.min_dim_with_indices(dim)
    assert_equal(values, np.min(a, axis=dim, keepdims=True), dtype)
    assert_equal(idx, amin, "i64")


def test_nan_wins_max_min_and_argmax() -> None:
    nan = float("nan")
    t = Tensor.from_floats([[1.0, nan, 3.0], [2.0, 0.0, -1.0]], DEVICE)
    assert np.isnan(t.max().to_numpy()).all()
    assert np.isnan(t.min().to_numpy()).all()
    assert np.isnan(t.max_dim(1).to_numpy()[0, 0])
    assert_equal(t.argmax(1), np.array([[1], [0]]), "i64")
    assert_equal(t.argmin(1), np.array([[1], [2]]), "i64")


# --------------------------------------------------------------------------- variance, covariance


def var_ref(a: Array, dim: int, ddof: int) -> Array:
    x = a.astype(np.float64)
    n = x.shape[dim]
    dev = x - x.mean(axis=dim, keepdims=True)
    with np.errstate(all="ignore"):
        out: Array = (dev**2).sum(axis=dim, keepdims=True) / (n - ddof)
    return out


@SETTINGS
@given(st.data(), tensors(FLOAT_DTYPES))
def test_var(data: st.DataObject, at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    rtol, atol = (1e-4, 1e-3) if dtype == "f32" else (1e-10, 1e-9)
    unbiased, biased = var_ref(a, dim, 1).astype(a.dtype), var_ref(a, dim, 0).astype(a.dtype)
    mean = a.astype(np.float64).mean(axis=dim, keepdims=True).astype(a.dtype)
    assert_close(t.var(dim), unbiased, dtype, rtol=rtol, atol=atol)
    assert_close(t.var_bias(dim), biased, dtype, rtol=rtol, atol=atol)
    v, m = t.var_mean(dim)
    assert_close(v, unbiased, dtype, rtol=rtol, atol=atol)
    assert_close(m, mean, dtype, rtol=rtol, atol=atol)
    v, m = t.var_mean_bias(dim)
    assert_close(v, biased, dtype, rtol=rtol, atol=atol)
    assert_close(m, mean, dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(st.data(), dtypes(FLOAT_DTYPES), shapes(2, 2, 2, 5), layouts(), st.integers(0, 1))
def test_cov(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str, ddof: int) -> None:
    a: Any = data.draw(arrays(dtype, shape, low=-10, high=10))
    t = tensor(a, layout)
    rtol, atol = (1e-4, 1e-3) if dtype == "f32" else (1e-10, 1e-9)
    # [V, N] with samples along dim 1 is np.cov's layout; dim 0 is rowvar=False.
    x = a.astype(np.float64)
    assert_close(
        t.cov(1, ddof),
        np.cov(x, ddof=ddof).reshape(shape[0], shape[0]).astype(a.dtype),
        dtype,
        rtol=rtol,
        atol=atol,
    )
    by_rows = np.cov(x, rowvar=False, ddof=ddof).reshape(shape[1], shape[1]).astype(a.dtype)
    assert_close(t.cov(0, ddof), by_rows, dtype, rtol=rtol, atol=atol)
    assert_close(t.cov(1), np.cov(x).reshape(shape[0], shape[0]).astype(a.dtype), dtype, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- cumulative


CUMULATIVE: dict[str, tuple[Callable[[T, int], T], Callable[..., Array]]] = {
    "cumsum": (lambda t, d: t.cumsum(d), np.cumsum),
    "cumprod": (lambda t, d: t.cumprod(d), np.cumprod),
    "cummin": (lambda t, d: t.cummin(d), np.minimum.accumulate),
    "cummax": (lambda t, d: t.cummax(d), np.maximum.accumulate),
}


@settings(max_examples=50, deadline=None)
@given(st.data(), st.sampled_from(sorted(CUMULATIVE)), tensors(low=-3, high=3))
def test_cumulative(data: st.DataObject, op: str, at: tuple[Array, T, str]) -> None:
    a, t, dtype = at
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    fn, np_fn = CUMULATIVE[op]
    src = a.astype(np.float64) if dtype != "i64" else a
    expected = np_fn(src, axis=dim).astype(a.dtype)
    rtol = 1e-5 if dtype == "f32" else 1e-12
    assert_close(fn(t, dim), expected, dtype, rtol=rtol, atol=rtol * float(np.abs(expected).max() + 1))


def test_cumulative_nan_carries() -> None:
    nan = float("nan")
    t = Tensor.from_floats([1.0, nan, 0.0, 5.0], DEVICE)
    for op in ("cummin", "cummax", "cumsum"):
        out = CUMULATIVE[op][0](t, 0).to_numpy()
        assert out[0] == 1.0 and np.isnan(out[1:]).all(), (op, out)


# --------------------------------------------------------------------------- sorting


@settings(max_examples=50, deadline=None)
@given(st.data(), tensors())
def test_sort_and_argsort_are_stable(data: st.DataObject, at: tuple[Array, T, str]) -> None:
    a, _, dtype = at
    a = few_values(dtype)(a)
    t = tensor(a, data.draw(layouts()))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    asc = np.argsort(a, axis=dim, kind="stable")
    desc = np.argsort(-a, axis=dim, kind="stable")  # descending, ties in order of position
    assert_equal(t.sort(dim), np.sort(a, axis=dim), dtype)
    assert_equal(t.argsort(dim), asc, "i64")
    assert_equal(t.sort_descending(dim), np.take_along_axis(a, desc, axis=dim), dtype)
    assert_equal(t.argsort_descending(dim), desc, "i64")
    values, idx = t.sort_with_indices(dim)
    assert_equal(values, np.sort(a, axis=dim), dtype)
    assert_equal(idx, asc, "i64")
    values, idx = t.sort_descending_with_indices(dim)
    assert_equal(values, np.take_along_axis(a, desc, axis=dim), dtype)
    assert_equal(idx, desc, "i64")


@settings(max_examples=50, deadline=None)
@given(st.data(), tensors())
def test_topk(data: st.DataObject, at: tuple[Array, T, str]) -> None:
    a, _, dtype = at
    a = few_values(dtype)(a)
    t = tensor(a, data.draw(layouts()))
    dim = data.draw(st.integers(0, a.ndim - 1))
    k = data.draw(st.integers(1, a.shape[dim]))
    desc = np.take(np.argsort(-a, axis=dim, kind="stable"), range(k), axis=dim)
    top = np.take_along_axis(a, desc, axis=dim)
    assert_equal(t.topk(k, dim), top, dtype)
    values, idx = t.topk_with_indices(k, dim)
    assert_equal(values, top, dtype)
    assert_equal(idx, desc, "i64")


def test_sort_puts_nan_last_and_first_descending() -> None:
    nan = float("nan")
    t = Tensor.from_floats([3.0, nan, -1.0, 0.0, -0.0], DEVICE, dtype=DType.F64)
    s = t.sort(0).to_numpy()
    np.testing.assert_array_equal(s[:4], [-1.0, 0.0, -0.0, 3.0])
    assert np.isnan(s[4])
    assert_equal(t.argsort(0), np.array([2, 3, 4, 0, 1]), "i64")
    d = t.sort_descending(0).to_numpy()
    assert np.isnan(d[0])
    assert_equal(t.argsort_descending(0), np.array([1, 0, 3, 4, 2]), "i64")
    _, idx = t.topk_with_indices(2, 0)
    assert_equal(idx, np.array([1, 0]), "i64")


@pytest.mark.parametrize("name", ["sort", "argsort", "cumsum", "argmax", "sum_dim"])
def test_bool_tensors_are_not_sorted_or_summed(name: str) -> None:
    from ferrum import KindError

    b = Tensor.from_bool([True, False], DEVICE)
    with pytest.raises(KindError, match=name):
        getattr(b, name)(0)


def test_reduce_keeps_dtype() -> None:
    for dtype in ALL_DTYPES[:3]:
        t = Tensor.ones((2, 3), DEVICE, dtype={"f32": DType.F32, "f64": DType.F64, "i64": DType.I64}[dtype])
        assert t.sum().dtype == t.dtype
        assert t.sum_dim(1).dtype == t.dtype
        assert t.cumsum(0).dtype == t.dtype
        assert t.argmax(0).dtype == DType.I64
