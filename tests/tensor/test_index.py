"""Indexing and assembling against NumPy: slice/slice_assign/slice_fill,
select/select_assign, gather/scatter, take, masks, pad, repeat, roll,
triangles and their masks, one_hot, nonzero/argwhere, cat/stack."""

from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor
from hypothesis import given
from hypothesis import strategies as st

from tests.support.tensors import (
    ALL_DTYPES,
    DEVICE,
    NUM_DTYPES,
    SETTINGS,
    Array,
    T,
    array_tensors,
    arrays,
    assert_equal,
    assert_same,
    broadcastable_shapes,
    dtype_name,
    dtypes,
    layouts,
    shapes,
    tensor,
)


def int_tensor(values: Any, layout: str = "contiguous") -> T:
    return tensor(np.asarray(values, dtype=np.int64), layout)


@st.composite
def regions(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[list[tuple[int, int]], tuple[slice, ...]]:
    """``(start, end)`` ranges for some leading dims, and the NumPy key."""
    n = draw(st.integers(1, len(shape)))
    ranges = []
    for size in shape[:n]:
        start = draw(st.integers(0, size))
        ranges.append((start, draw(st.integers(start, size))))
    return ranges, tuple(slice(s, e) for s, e in ranges)


# --------------------------------------------------------------------------- slices


@SETTINGS
@given(st.data(), array_tensors())
def test_slice_assign(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    ranges, key = data.draw(regions(a.shape))
    region = a[key]
    values: Any = data.draw(arrays(dtype_name(a), region.shape))
    expected = a.copy()
    expected[key] = values
    assert_same(t.slice_assign(ranges, tensor(values, data.draw(layouts()))), expected)
    assert_same(t.slice(ranges), region)
    np.testing.assert_array_equal(t.to_numpy(), a)


@SETTINGS
@given(st.data(), array_tensors(NUM_DTYPES))
def test_slice_fill(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    ranges, key = data.draw(regions(a.shape))
    value = data.draw(st.integers(-5, 5))
    expected = a.copy()
    expected[key] = value
    assert_same(t.slice_fill(ranges, value), expected)


def test_slice_fill_with_steps_and_bools() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected = a.copy()
    expected[::2, ::-3] = -1.0
    steps = [slice(None, None, 2), slice(None, None, -3)]
    assert_same(tensor(a, "transposed").slice_fill(steps, -1.0), expected)
    b = np.zeros((2, 3), bool)
    got = tensor(b).slice_fill([(0, 1), (1, 3)], True)
    b[0:1, 1:3] = True
    assert_same(got, b)


# --------------------------------------------------------------------------- select / take


@SETTINGS
@given(st.data(), array_tensors())
def test_select_and_take(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[dim]
    idx = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=6)), dtype=np.int64)
    assert_same(t.select(dim, int_tensor(idx)), np.take(a, idx, axis=dim))
    shaped = np.asarray(data.draw(arrays("i64", shapes(1, 2, 1, 3), low=0, high=n - 1)), dtype=np.int64)
    assert_same(t.take(dim, tensor(shaped, data.draw(layouts()))), np.take(a, shaped, axis=dim))


def index_add(a: Array, dim: int, idx: Array, values: Array) -> Array:
    out = np.moveaxis(a.copy(), dim, 0)
    vals = np.moveaxis(values, dim, 0)
    for k, i in enumerate(idx):
        if out.dtype == bool:
            out[i] = out[i] | vals[k]
        else:
            out[i] = out[i] + vals[k]
    return np.moveaxis(out, 0, dim)


@SETTINGS
@given(st.data(), array_tensors())
def test_select_assign_adds(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim = data.draw(st.integers(0, a.ndim - 1))
    n = a.shape[dim]
    idx = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6)), dtype=np.int64)
    vshape = tuple(len(idx) if d == dim else s for d, s in enumerate(a.shape))
    values: Any = data.draw(arrays(dtype_name(a), vshape))
    out = t.select_assign(dim, int_tensor(idx), tensor(values, data.draw(layouts())))
    assert_same(out, index_add(a, dim, idx, values))


def test_select_assign_repeated_index_accumulates() -> None:
    t = Tensor.zeros((3, 2), DEVICE)
    v = Tensor.ones((4, 2), DEVICE)
    out = t.select_assign(0, Tensor.from_ints([1, 1, 2, 1], DEVICE), v)
    assert_same(out, np.array([[0, 0], [3, 3], [1, 1]], np.float32))


# --------------------------------------------------------------------------- gather / scatter


def draw_index(data: st.DataObject, a: Array) -> tuple[int, tuple[int, ...], Array]:
    """A dim of ``a`` and an index array into it for gather/scatter: up to 4 long along ``dim``,
    no longer than ``a`` along the others, its values valid positions along ``dim``."""
    dim = data.draw(st.integers(0, a.ndim - 1))
    ishape = tuple(
        data.draw(st.integers(1, 4)) if d == dim else data.draw(st.integers(1, s))
        for d, s in enumerate(a.shape)
    )
    return dim, ishape, data.draw(arrays("i64", ishape, low=0, high=a.shape[dim] - 1))


@SETTINGS
@given(st.data(), array_tensors())
def test_gather(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim, ishape, idx = draw_index(data, a)
    sub = a[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(ishape))]
    assert_same(t.gather(dim, tensor(idx, data.draw(layouts()))), np.take_along_axis(sub, idx, axis=dim))


def scatter_add(a: Array, dim: int, idx: Array, values: Array) -> Array:
    out = a.copy()
    for p in np.ndindex(*idx.shape):
        q = list(p)
        q[dim] = int(idx[p])
        if out.dtype == bool:
            out[tuple(q)] |= values[p]
        else:
            out[tuple(q)] += values[p]
    return out


@SETTINGS
@given(st.data(), array_tensors())
def test_scatter_adds(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim, ishape, idx = draw_index(data, a)
    vshape = tuple(s + data.draw(st.integers(0, 1)) for s in ishape)  # values may be larger
    values: Any = data.draw(arrays(dtype_name(a), vshape))
    out = t.scatter(dim, tensor(idx, data.draw(layouts())), tensor(values, data.draw(layouts())))
    assert_same(out, scatter_add(a, dim, idx, values))
    np.testing.assert_array_equal(t.to_numpy(), a)


def test_gather_scatter_known_values() -> None:
    t = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE)
    idx = Tensor.from_ints([[0, 0], [1, 0]], DEVICE)
    assert_same(t.gather(1, idx), np.array([[1.0, 1.0], [4.0, 3.0]], np.float32))
    out = Tensor.zeros((2, 2), DEVICE).scatter(1, idx, Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE))
    assert_same(out, np.array([[3.0, 0.0], [4.0, 3.0]], np.float32))


# --------------------------------------------------------------------------- masks


@SETTINGS
@given(st.data(), dtypes(ALL_DTYPES), broadcastable_shapes(), layouts())
def test_mask_where_and_fill(
    data: st.DataObject, dtype: str, pair: tuple[tuple[int, ...], tuple[int, ...]], layout: str
) -> None:
    # The tensor has the full shape; the mask and the value broadcast onto it.
    full = tuple(max(x, y) for x, y in zip(*pair, strict=True))
    a: Any = data.draw(arrays(dtype, full))
    mask: Any = data.draw(arrays("bool", pair[0]))
    value: Any = data.draw(arrays(dtype, pair[1]))
    t = tensor(a, layout)
    assert_same(t.mask_where(tensor(mask, data.draw(layouts())), tensor(value)), np.where(mask, value, a))
    fill = True if dtype == "bool" else 7
    assert_same(t.mask_fill(tensor(mask), fill), np.where(mask, np.asarray(fill, a.dtype), a))


# --------------------------------------------------------------------------- pad, repeat, roll


@SETTINGS
@given(st.data(), array_tensors())
def test_pad(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    k = data.draw(st.integers(1, a.ndim))
    pairs = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(k)]
    flat = [v for p in pairs for v in p]
    # pairs[0] pads the last dim, pairs[1] the one before, ... (torch's F.pad order).
    widths = [(0, 0)] * (a.ndim - k) + pairs[::-1]
    value: Any = True if a.dtype == bool else 3
    assert_same(t.pad(flat, value), np.pad(a, widths, constant_values=value))
    assert_same(t.pad(flat), np.pad(a, widths, constant_values=0))


@SETTINGS
@given(st.data(), array_tensors(max_rank=3, max_side=3))
def test_repeat(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    sizes = [data.draw(st.integers(1, 3)) for _ in range(a.ndim)]
    assert_same(t.repeat(sizes), np.tile(a, sizes))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    times = data.draw(st.integers(1, 3))
    reps = [times if d == dim % a.ndim else 1 for d in range(a.ndim)]
    assert_same(t.repeat_dim(dim, times), np.tile(a, reps))


@SETTINGS
@given(st.data(), array_tensors())
def test_roll(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    k = data.draw(st.integers(1, 3))
    dims = [data.draw(st.integers(-a.ndim, a.ndim - 1)) for _ in range(k)]
    shifts = [data.draw(st.integers(-7, 7)) for _ in range(k)]
    assert_same(t.roll(shifts, dims), np.roll(a, shifts, axis=dims))
    assert_same(t.roll_dim(shifts[0], dims[0]), np.roll(a, shifts[0], axis=dims[0]))


# --------------------------------------------------------------------------- triangles


@SETTINGS
@given(st.data(), array_tensors(NUM_DTYPES, min_rank=2), st.integers(-4, 4))
def test_triu_tril(data: st.DataObject, at: tuple[Array, T], diagonal: int) -> None:
    a, t = at
    assert_same(t.triu(diagonal), np.triu(a, diagonal))
    assert_same(t.tril(diagonal), np.tril(a, diagonal))
    assert_same(t.triu(), np.triu(a))
    assert_same(t.tril(), np.tril(a))


@SETTINGS
@given(shapes(min_rank=2, max_rank=4), st.integers(-4, 4))
def test_triangle_masks(shape: tuple[int, ...], offset: int) -> None:
    ones = np.ones(shape, dtype=bool)
    rows = np.arange(shape[-2])[:, None]
    cols = np.arange(shape[-1])[None, :]
    # Burn's masks are False where triu/tril keep the values.
    assert_equal(Tensor.triu_mask(shape, offset, DEVICE), ~np.triu(ones, offset), "bool")
    assert_equal(Tensor.tril_mask(shape, offset, DEVICE), ~np.tril(ones, offset), "bool")
    assert_equal(
        Tensor.diag_mask(shape, offset, DEVICE), np.broadcast_to(cols - rows != offset, shape), "bool"
    )


def test_triu_mask_fill_equals_triu() -> None:
    a = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    t = tensor(a)
    mask = Tensor.triu_mask((3, 4), 1, DEVICE)
    assert_same(t.mask_fill(mask, 0.0), np.triu(a, 1))
    assert_same(t.mask_fill(Tensor.tril_mask((3, 4), 0, DEVICE), 0.0), np.tril(a))


# --------------------------------------------------------------------------- one_hot


@SETTINGS
@given(st.data(), st.sampled_from(["i64", "f32", "f64"]), shapes(1, 3, 1, 4), st.integers(1, 6))
def test_one_hot(data: st.DataObject, dtype: str, shape: tuple[int, ...], classes: int) -> None:
    idx: Any = data.draw(arrays(dtype, shape, low=0, high=classes - 1).map(np.trunc))
    expected = np.eye(classes, dtype=idx.dtype)[idx.astype(np.int64)]
    assert_same(tensor(idx, data.draw(layouts())).one_hot(classes), expected)


@SETTINGS
@given(st.data(), shapes(1, 3, 1, 4), st.integers(2, 5))
def test_one_hot_fill(data: st.DataObject, shape: tuple[int, ...], classes: int) -> None:
    idx: Any = data.draw(arrays("i64", shape, low=-classes, high=classes - 1))
    axis = data.draw(st.integers(-(len(shape) + 1), len(shape)))
    onehot = np.eye(classes, dtype=np.int64)[np.where(idx < 0, idx + classes, idx)]
    expected = np.moveaxis(np.where(onehot == 1, 5, -1), -1, axis)
    assert_same(tensor(idx).one_hot_fill(classes, 5.0, -1.0, axis), expected)
    last = np.where(onehot == 1, 5, -1)
    assert_same(tensor(idx).one_hot_fill(classes, 5.0, -1.0), last)


# --------------------------------------------------------------------------- nonzero / argwhere


@SETTINGS
@given(st.data(), dtypes(ALL_DTYPES), shapes(1, 4, 1, 4), layouts())
def test_nonzero_and_argwhere(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(
        arrays(dtype, shape, low=-1, high=1).map(lambda x: np.round(x) if x.dtype.kind == "f" else x)
    )
    t = tensor(a, layout)
    coords = t.nonzero()
    expected = np.nonzero(a)
    assert len(coords) == a.ndim
    for c, e in zip(coords, expected, strict=True):
        assert_equal(c, e.astype(np.int64), "i64")
    assert_equal(t.argwhere(), np.argwhere(a).astype(np.int64), "i64")


def test_argwhere_of_all_false_is_empty() -> None:
    w = Tensor.from_bool([[False, False]], DEVICE).argwhere()
    assert w.shape() == (0, 2)
    assert w.dtype == DType.I64


# --------------------------------------------------------------------------- cat / stack


@SETTINGS
@given(st.data(), dtypes(ALL_DTYPES), shapes(1, 4, 1, 4))
def test_cat(data: st.DataObject, dtype: str, shape: tuple[int, ...]) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    parts: list[Any] = []
    for _ in range(data.draw(st.integers(1, 4))):
        s = list(shape)
        s[dim] = data.draw(st.integers(0, 3))
        parts.append(data.draw(arrays(dtype, tuple(s))))
    ts = [tensor(p, data.draw(layouts())) for p in parts]
    assert_same(Tensor.cat(ts, dim), np.concatenate(parts, axis=dim))


@SETTINGS
@given(st.data(), dtypes(ALL_DTYPES), shapes(1, 4, 1, 4))
def test_stack(data: st.DataObject, dtype: str, shape: tuple[int, ...]) -> None:
    dim = data.draw(st.integers(-(len(shape) + 1), len(shape)))
    parts: list[Any] = [data.draw(arrays(dtype, shape)) for _ in range(data.draw(st.integers(1, 4)))]
    ts = [tensor(p, data.draw(layouts())) for p in parts]
    assert_same(Tensor.stack(ts, dim), np.stack(parts, axis=dim))


@pytest.mark.parametrize("dtype", ["f32", "i64"])
def test_cat_of_views_of_one_tensor(dtype: str) -> None:
    a = np.arange(12).reshape(3, 4).astype(np.float32 if dtype == "f32" else np.int64)
    t = tensor(a)
    out = Tensor.cat([t, t.flip([0]), t[:, 1:2].expand((3, 4))], 0)
    assert_same(out, np.concatenate([a, a[::-1], np.broadcast_to(a[:, 1:2], (3, 4))], 0))
