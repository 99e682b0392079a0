"""Shared helpers of the tensor tests: the device, hypothesis strategies over
shapes, dtypes and broadcasting, NumPy -> ferrum conversion into contiguous
or strided (non-contiguous) views, and comparison against NumPy references.

Test modules import these names with ``from tests.support.tensors import ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from ferrum import DType, Tensor
from ferrum.backend import NdArray
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.support.devices import DEVICE as DEVICE  # re-exported: tensor tests import it from here

T: TypeAlias = Tensor[NdArray, Any, Any]
Array: TypeAlias = npt.NDArray[Any]

#: The ferrum dtypes and the NumPy dtype each one reads back as.
NP_DTYPES: dict[str, np.dtype[Any]] = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i64": np.dtype(np.int64),
    "bool": np.dtype(np.bool_),
    "f16": np.dtype(np.float16),
    "i32": np.dtype(np.int32),
    "u8": np.dtype(np.uint8),
}
FERRUM_DTYPES: dict[str, DType] = {
    "f32": DType.F32,
    "f64": DType.F64,
    "i64": DType.I64,
    "bool": DType.Bool,
    "f16": DType.F16,
    "i32": DType.I32,
    "u8": DType.U8,
}

FLOAT_DTYPES = ("f32", "f64")
NUM_DTYPES = ("f32", "f64", "i64")
ALL_DTYPES = ("f32", "f64", "i64", "bool")

#: How a test tensor is laid out in memory. All but "contiguous" make a strided view.
LAYOUTS = ("contiguous", "transposed", "flipped", "stepped", "permuted")

#: The hypothesis settings of the NumPy comparisons (no deadline: the first call of an op compiles).
SETTINGS = settings(max_examples=40, deadline=None)


# --------------------------------------------------------------------------- strategies


def shapes(
    min_rank: int = 1, max_rank: int = 4, min_side: int = 1, max_side: int = 5
) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes of rank ``min_rank..max_rank`` with sides ``min_side..max_side``."""
    return st.lists(st.integers(min_side, max_side), min_size=min_rank, max_size=max_rank).map(tuple)


def shapes_with_zero(
    min_rank: int = 1, max_rank: int = 4, max_side: int = 4
) -> st.SearchStrategy[tuple[int, ...]]:
    """Mostly non-empty shapes, sometimes with a zero-sized dim."""
    return st.one_of(
        shapes(min_rank, max_rank, 1, max_side),
        shapes(min_rank, max_rank, 0, max_side),
    )


def dtypes(names: Sequence[str] = ALL_DTYPES) -> st.SearchStrategy[str]:
    """One of the dtype names ``f32``, ``f64``, ``i64``, ``bool``."""
    return st.sampled_from(list(names))


def layouts() -> st.SearchStrategy[str]:
    return st.sampled_from(LAYOUTS)


def elements(dtype: str, *, low: float = -100.0, high: float = 100.0) -> st.SearchStrategy[Any]:
    """Finite elements of ``dtype`` in ``[low, high]`` (ints: the integers there)."""
    if dtype == "bool":
        return st.booleans()
    if dtype == "i64":
        return st.integers(int(low), int(high))
    if dtype == "f32":
        # Bounds exactly representable in f32, inside [low, high].
        lo32, hi32 = np.float32(low), np.float32(high)
        lo32 = lo32 if lo32 >= low else np.nextafter(lo32, np.float32(np.inf))
        hi32 = hi32 if hi32 <= high else np.nextafter(hi32, np.float32(-np.inf))
        return st.floats(
            float(lo32), float(hi32), allow_nan=False, allow_infinity=False, allow_subnormal=False, width=32
        )
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def arrays(
    dtype: str,
    shape: tuple[int, ...] | st.SearchStrategy[tuple[int, ...]],
    *,
    low: float = -100.0,
    high: float = 100.0,
) -> st.SearchStrategy[Array]:
    """NumPy arrays of ``dtype`` (a ferrum dtype name) and ``shape``."""
    return hnp.arrays(NP_DTYPES[dtype], shape, elements=elements(dtype, low=low, high=high))


@st.composite
def broadcastable_shapes(
    draw: st.DrawFn, min_rank: int = 1, max_rank: int = 4, max_side: int = 4
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes of equal rank that broadcast together (Burn's rule): per dim
    equal sizes, or one of them 1."""
    full = draw(shapes(min_rank, max_rank, 1, max_side))
    a: list[int] = []
    b: list[int] = []
    for n in full:
        which = draw(st.sampled_from(("both", "left1", "right1")))
        a.append(1 if which == "left1" else n)
        b.append(1 if which == "right1" else n)
    return tuple(a), tuple(b)


# --------------------------------------------------------------------------- tensors


@st.composite
def array_tensors(
    draw: st.DrawFn,
    names: Sequence[str] = ALL_DTYPES,
    min_rank: int = 1,
    max_rank: int = 4,
    min_side: int = 1,
    max_side: int = 5,
    *,
    low: float = -100.0,
    high: float = 100.0,
) -> tuple[Array, T]:
    """A NumPy array of one of the dtypes ``names`` and the same values as a
    ferrum tensor in any layout."""
    dtype = draw(dtypes(names))
    a: Array = draw(arrays(dtype, shapes(min_rank, max_rank, min_side, max_side), low=low, high=high))
    return a, tensor(a, draw(layouts()))


def dtype_name(a: Array) -> str:
    """The ferrum dtype name (``f32``, ``f64``, ``i64``, ``bool``) of the NumPy array ``a``."""
    return {"f": "f32" if a.dtype == np.float32 else "f64", "i": "i64", "b": "bool"}[a.dtype.kind]


def from_numpy(array: Array) -> T:
    """``Tensor.from_numpy`` keeping float64 (which it makes f32 by default)."""
    return Tensor.from_numpy(array, DEVICE, dtype=DType.F64 if array.dtype == np.float64 else None)


def tensor(array: Array, layout: str = "contiguous") -> T:
    """A ferrum tensor holding ``array``'s values, laid out as ``layout``.

    Every layout but ``contiguous`` builds the ferrum tensor from a rearranged
    copy and undoes the rearrangement with a ferrum view op, so the tensor
    itself is strided (transposed, negative-stride, stepped or permuted).
    The tensor keeps the array's dtype, float64 included.
    """
    array = np.asarray(array)
    rank = array.ndim
    if layout == "contiguous" or rank == 0:
        return from_numpy(np.ascontiguousarray(array))
    if layout == "transposed":
        if rank < 2:
            return tensor(array, "flipped")
        base = np.ascontiguousarray(np.swapaxes(array, -1, -2))
        return from_numpy(base).transpose()
    if layout == "flipped":
        base = np.ascontiguousarray(np.flip(array, axis=-1))
        return from_numpy(base).flip([-1])
    if layout == "stepped":
        # Every other element of a buffer twice as long in dim 0, then a slice with step 2.
        big_shape = (2 * array.shape[0] + 1, *array.shape[1:])
        big = np.zeros(big_shape, dtype=array.dtype)
        big[1::2] = array
        return from_numpy(big)[1::2]
    if layout == "permuted":
        axes = list(range(rank))[::-1]
        base = np.ascontiguousarray(np.transpose(array, axes))
        return from_numpy(base).permute(axes)
    raise ValueError(f"unknown layout {layout!r}")


def np_of(t: T) -> Array:
    """The tensor's values as a (copied) NumPy array."""
    return np.array(t.to_numpy(), copy=True)


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for comparing results of ``dtype`` with a NumPy reference."""
    if dtype == "f32":
        return 1e-5, 1e-6
    if dtype == "f64":
        return 1e-12, 1e-12
    return 0.0, 0.0


def assert_close(
    t: T,
    expected: Array | Sequence[Any] | float,
    dtype: str | None = None,
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """``t`` has ``expected``'s shape and values, and the dtype named ``dtype``
    (default: same kind as the data). Ints and bools must be exactly equal."""
    actual = t.to_numpy()
    exp = np.asarray(expected)
    assert tuple(t.shape()) == exp.shape, f"shape {t.shape()} != expected {exp.shape}"
    assert actual.shape == exp.shape
    if dtype is not None:
        assert t.dtype == FERRUM_DTYPES[dtype], f"dtype {t.dtype} != {dtype}"
        assert actual.dtype == NP_DTYPES[dtype]
    if actual.dtype.kind in "ib" and exp.dtype.kind in "ib":
        np.testing.assert_array_equal(actual, exp)
        return
    d_rtol, d_atol = tolerance(
        dtype if dtype is not None else ("f32" if actual.dtype == np.float32 else "f64")
    )
    np.testing.assert_allclose(
        actual.astype(np.float64),
        exp.astype(np.float64),
        rtol=d_rtol if rtol is None else rtol,
        atol=d_atol if atol is None else atol,
    )


def assert_equal(t: T, expected: Array | Sequence[Any], dtype: str | None = None) -> None:
    """Exact equality of shape, values (and dtype when given)."""
    exp = np.asarray(expected)
    assert tuple(t.shape()) == exp.shape, f"shape {t.shape()} != expected {exp.shape}"
    if dtype is not None:
        assert t.dtype == FERRUM_DTYPES[dtype], f"dtype {t.dtype} != {dtype}"
    np.testing.assert_array_equal(t.to_numpy(), exp)


def assert_same(t: T, expected: Array) -> None:
    """Exact equality with ``expected``, the dtype included (the one matching NumPy's)."""
    assert_equal(t, expected, dtype_name(expected))


def ref(fn: Callable[..., Any], *args: Any, dtype: str | None = None) -> Array:
    """``fn(*args)`` computed by NumPy with warnings silenced, cast to ``dtype``."""
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*args))
    return out if dtype is None else out.astype(NP_DTYPES[dtype])
