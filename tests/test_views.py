"""Views and dimension manipulation against NumPy: reshape, transpose,
permute, movedim, flip, flatten, squeeze/unsqueeze, expand, narrow,
chunk/split, iter_dim, unfold and ``t[...]`` slicing (ints keep their dim)."""

from typing import Any

import numpy as np
import pytest
from conftest import (
    ALL_DTYPES,
    DEVICE,
    Array,
    T,
    arrays,
    assert_equal,
    dtypes,
    layouts,
    shapes,
    shapes_with_zero,
    tensor,
)
from ferrum import Tensor
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def tensors(
    draw: st.DrawFn, min_rank: int = 1, max_rank: int = 4, min_side: int = 1, max_side: int = 5
) -> tuple[Array, T]:
    """A NumPy array of any dtype and the same values as a ferrum tensor in any layout."""
    dtype = draw(dtypes(ALL_DTYPES))
    shape = draw(shapes(min_rank, max_rank, min_side, max_side))
    a: Array = draw(arrays(dtype, shape))
    return a, tensor(a, draw(layouts()))


def dtype_name(a: Array) -> str:
    return {"f": "f32" if a.dtype == np.float32 else "f64", "i": "i64", "b": "bool"}[a.dtype.kind]


def check(t: T, expected: Array) -> None:
    assert_equal(t, expected, dtype_name(expected))


# --------------------------------------------------------------------------- reshape


@SETTINGS
@given(st.data(), tensors())
def test_reshape_with_inferred_dim(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dims = list(data.draw(st.permutations(list(a.shape))))
    target = list(dims)
    target[data.draw(st.integers(0, len(dims) - 1))] = -1
    check(t.reshape(tuple(target)), a.reshape(dims))
    check(t.reshape((-1,)), a.reshape(-1))
    check(t.reshape([a.size, 1]), a.reshape(a.size, 1))
    check(t.reshape(dims), a.reshape(dims))


def test_reshape_zero_keeps_the_size() -> None:
    a = np.arange(24).reshape(2, 3, 4)
    check(tensor(a, "permuted").reshape((0, -1)), a.reshape(2, 12))
    check(tensor(a).reshape((0, 0, 2, 2)), a.reshape(2, 3, 2, 2))


def test_reshape_of_a_transposed_view_copies_in_logical_order() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor.from_numpy(a, DEVICE).transpose()
    check(t.reshape((6,)), a.T.reshape(6))
    check(t.reshape((2, 3)), a.T.reshape(2, 3))


@pytest.mark.parametrize("layout", ["flipped", "stepped", "permuted", "transposed"])
@pytest.mark.parametrize("shape", [(2, 1, 2), (1, 3, 1, 2), (3, 1), (2, 2, 1), (1, 2, 1, 3)])
def test_reshape_of_strided_views_with_unit_dims(layout: str, shape: tuple[int, ...]) -> None:
    a = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)
    t = tensor(a, layout)
    check(t.reshape((-1,)), a.reshape(-1))
    check(t.flatten(0, -1), a.reshape(-1))
    check(t.reshape((1, -1)), a.reshape(1, -1))
    check(t.squeeze().reshape((-1,)), a.reshape(-1))


# --------------------------------------------------------------------------- axes


@SETTINGS
@given(tensors())
def test_transpose_swaps_the_last_two_dims(at: tuple[Array, T]) -> None:
    a, t = at
    expected = a if a.ndim < 2 else np.swapaxes(a, -1, -2)
    check(t.transpose(), expected)


@SETTINGS
@given(st.data(), tensors())
def test_swap_dims(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    d1 = data.draw(st.integers(-a.ndim, a.ndim - 1))
    d2 = data.draw(st.integers(-a.ndim, a.ndim - 1))
    check(t.swap_dims(d1, d2), np.swapaxes(a, d1, d2))


@SETTINGS
@given(st.data(), tensors())
def test_permute(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    axes = data.draw(st.permutations(list(range(a.ndim))))
    signed = [ax - a.ndim if data.draw(st.booleans()) else ax for ax in axes]
    check(t.permute(signed), np.transpose(a, axes))


@SETTINGS
@given(st.data(), tensors())
def test_movedim(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    n = data.draw(st.integers(1, a.ndim))
    src = data.draw(st.permutations(list(range(a.ndim))))[:n]
    dst = data.draw(st.permutations(list(range(a.ndim))))[:n]
    check(t.movedim(src, dst), np.moveaxis(a, src, dst))
    check(t.movedim(src[0], dst[0] - a.ndim), np.moveaxis(a, src[0], dst[0]))


@SETTINGS
@given(st.data(), tensors())
def test_flip(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    axes = data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True))
    check(t.flip(axes), np.flip(a, tuple(axes)))
    check(t.flip(-1), np.flip(a, -1))
    check(t.flip(axes).flip(axes), a)


@SETTINGS
@given(st.data(), tensors())
def test_flatten(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    start = data.draw(st.integers(0, a.ndim - 1))
    end = data.draw(st.integers(start, a.ndim - 1))
    shape = (*a.shape[:start], int(np.prod(a.shape[start : end + 1])), *a.shape[end + 1 :])
    check(t.flatten(start, end), a.reshape(shape))
    check(t.flatten(0, -1), a.reshape(-1))


# --------------------------------------------------------------------------- squeeze / unsqueeze / expand


@SETTINGS
@given(tensors(min_side=1, max_side=2))
def test_squeeze(at: tuple[Array, T]) -> None:
    a, t = at
    check(t.squeeze(), np.squeeze(a))
    ones = [d for d, n in enumerate(a.shape) if n == 1]
    if ones:
        check(t.squeeze_dims(ones), np.squeeze(a, tuple(ones)))
        check(t.squeeze_dims([ones[-1] - a.ndim]), np.squeeze(a, ones[-1]))
        check(t.squeeze_dims(ones[0]), np.squeeze(a, ones[0]))
        if a.ndim >= 2:
            check(t.squeeze_dim(ones[0]), np.squeeze(a, ones[0]))


@SETTINGS
@given(st.data(), tensors(max_rank=3))
def test_unsqueeze(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    d = data.draw(st.integers(-(a.ndim + 1), a.ndim))
    check(t.unsqueeze_dim(d), np.expand_dims(a, d))
    k = data.draw(st.integers(1, 2))
    dims = data.draw(st.lists(st.integers(0, a.ndim + k - 1), min_size=k, max_size=k, unique=True))
    check(t.unsqueeze_dims(dims), np.expand_dims(a, tuple(dims)))
    rank = data.draw(st.integers(a.ndim, 6))
    check(t.unsqueeze(rank), a.reshape((1,) * (rank - a.ndim) + a.shape))


@SETTINGS
@given(st.data(), tensors(min_side=1, max_side=3, max_rank=3))
def test_expand(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    target = [*lead] + [data.draw(st.integers(1, 3)) if n == 1 else n for n in a.shape]
    check(t.expand(target), np.broadcast_to(a, target))
    keep = [*lead] + [-1] * a.ndim
    check(t.expand(keep), np.broadcast_to(a, (*lead, *a.shape)))


def test_expand_is_a_stride_zero_view() -> None:
    base = Tensor.from_floats([[1.0], [2.0]], DEVICE)
    e = base.expand((2, 4))
    v = e.to_numpy()
    assert v.strides[1] == 0
    assert np.shares_memory(v, base.to_numpy())
    check(e, np.array([[1.0] * 4, [2.0] * 4], np.float32))


# --------------------------------------------------------------------------- narrow, chunk, split, unfold


@SETTINGS
@given(st.data(), tensors())
def test_narrow(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[dim]
    start = data.draw(st.integers(0, n))
    length = data.draw(st.integers(0, n - start))
    check(t.narrow(dim, start, length), np.take(a, range(start, start + length), axis=dim))


def torch_chunk_sizes(n: int, chunks: int) -> list[int]:
    size = max(-(-n // chunks), 1)
    return [min(size, n - i) for i in range(0, n, size)]


@SETTINGS
@given(st.data(), tensors(max_side=7))
def test_chunk_split_iter_dim(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim = data.draw(st.integers(0, a.ndim - 1))
    n = a.shape[dim]

    def expect(sizes: list[int]) -> list[Array]:
        return np.split(a, np.cumsum(sizes)[:-1], axis=dim)

    chunks = data.draw(st.integers(1, 8))
    parts = t.chunk(chunks, dim)
    sizes = torch_chunk_sizes(n, chunks)
    assert [p.shape()[dim] for p in parts] == sizes
    for p, e in zip(parts, expect(sizes), strict=True):
        check(p, e)

    size = data.draw(st.integers(1, 8))
    split_sizes = [min(size, n - i) for i in range(0, n, size)]
    parts = t.split(size, dim)
    assert len(parts) == len(split_sizes)
    for p, e in zip(parts, expect(split_sizes), strict=True):
        check(p, e)

    cut = data.draw(st.integers(0, n))
    parts = t.split_with_sizes([cut, n - cut], dim - a.ndim)
    for p, e in zip(parts, expect([cut, n - cut]), strict=True):
        check(p, e)

    rows = t.iter_dim(dim)
    assert len(rows) == n
    for i, r in enumerate(rows):
        check(r, np.take(a, [i], axis=dim))


@SETTINGS
@given(st.data(), tensors(max_side=6))
def test_unfold(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    dim = data.draw(st.integers(0, a.ndim - 1))
    n = a.shape[dim]
    size = data.draw(st.integers(1, n))
    step = data.draw(st.integers(1, 3))
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=dim)
    expected = np.take(windows, range(0, n - size + 1, step), axis=dim)
    check(t.unfold(dim, size, step), expected)


# --------------------------------------------------------------------------- indexing with []


@st.composite
def index_keys(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A ferrum index key (ints, slices, None, maybe a leading Ellipsis) for
    ``shape`` and the NumPy key that means the same (ints as length-1 slices,
    None as ``:``)."""
    n_items = draw(st.integers(1, len(shape)))
    ellipsis = n_items < len(shape) and draw(st.booleans())
    dims = shape[len(shape) - n_items :] if ellipsis else shape[:n_items]
    ours: list[Any] = [Ellipsis] if ellipsis else []
    theirs: list[Any] = [Ellipsis] if ellipsis else []
    for n in dims:
        kind = draw(st.sampled_from(["int", "slice", "none"]))
        if kind == "int":
            i = draw(st.integers(-n, n - 1))
            ours.append(i)
            theirs.append(slice(i, i + 1) if i != -1 else slice(-1, None))
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            s = slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, 3, -1, -2])))
            ours.append(s)
            theirs.append(s)
        else:
            ours.append(None)
            theirs.append(slice(None))
    return tuple(ours), tuple(theirs)


@settings(max_examples=60, deadline=None)
@given(st.data(), tensors())
def test_getitem_matches_numpy(data: st.DataObject, at: tuple[Array, T]) -> None:
    a, t = at
    ours, theirs = data.draw(index_keys(a.shape))
    check(t[ours], a[theirs])
    if len(ours) == 1:
        check(t[ours[0]], a[theirs])


def test_getitem_known_values() -> None:
    a = np.arange(24).reshape(2, 3, 4)
    t = tensor(a)
    check(t[1], a[1:2])
    check(t[-1, 2], a[-1:, 2:3])
    check(t[:, ::-1, 1:3], a[:, ::-1, 1:3])
    check(t[..., ::-2], a[..., ::-2])
    check(t[..., 0], a[..., 0:1])
    check(t[0, ...], a[0:1])
    check(t[None, 1], a[:, 1:2])
    check(t[:, 5:], a[:, 5:])  # empty, as in Python
    check(t[:, -100:100], a)
    assert t[0].rank() == 3  # an int index keeps the dim (Burn's slice)


def test_slice_method_with_ranges() -> None:
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    t = tensor(a, "transposed")
    check(t.slice([(1, 3), (0, 6)]), a[1:3, 0:6])
    check(t.slice([(0, 1)]), a[0:1])
    check(t.slice([(-2, -1), (2, 4)]), a[-2:-1, 2:4])
    check(t.slice([slice(None, None, -1), 2]), a[::-1, 2:3])
    check(t.slice([None, slice(1, None, 2)]), a[:, 1::2])
    check(t.slice([4]), a[4:5])


def test_views_share_the_buffer() -> None:
    base = Tensor.from_numpy(np.arange(24, dtype=np.float32).reshape(2, 3, 4), DEVICE)
    mem = base.to_numpy()
    views = [
        base.transpose(),
        base.swap_dims(0, 2),
        base.permute([2, 0, 1]),
        base.flip([0, 2]),
        base[:, 1:, ::2],
        base.narrow(2, 1, 2),
        base.unsqueeze_dim(1),
        base.reshape((6, 4)),
        base.unfold(2, 2, 1),
        base.chunk(2, 2)[1],
    ]
    for v in views:
        assert np.shares_memory(v.to_numpy(), mem)


# --------------------------------------------------------------------------- empty tensors


@settings(max_examples=40, deadline=None)
@given(st.data(), dtypes(ALL_DTYPES), shapes_with_zero().filter(lambda s: 0 in s), layouts())
def test_views_of_empty_tensors(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays(dtype, shape))
    t = tensor(a, layout)
    check(t, a)
    check(t.flip(list(range(a.ndim))), np.flip(a))
    check(t.reshape((-1,)), a.reshape(-1))
    assert t.to_data().to_list() == a.tolist()
    assert t.flip(-1).to_data().num_elements() == 0
    check(t.permute(list(range(a.ndim))[::-1]), np.transpose(a))


def test_flipped_empty_tensor_to_data() -> None:
    t = Tensor.zeros((0, 2), DEVICE).flip([1])
    assert t.shape() == (0, 2)
    assert t.to_data().to_list() == []
    assert t.to_numpy().shape == (0, 2)


@pytest.mark.parametrize("layout", ["contiguous", "flipped", "transposed", "stepped"])
def test_zero_sized_slices(layout: str) -> None:
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    t = tensor(a, layout)
    check(t[:, 2:2], a[:, 2:2])
    check(t[3:], a[3:])
    check(t.narrow(1, 4, 0), a[:, 4:4])
    assert t[:, 2:2].to_data().to_list() == [[], [], []]
