"""Burn 0.20.1's tests of views and shape edge cases, ported.

From crates/burn-backend-tests/tests/tensor: float/ops/squeeze.rs,
float/ops/flip.rs, float/ops/expand.rs, int/ops/expand.rs,
float/ops/narrow.rs, float/ops/split.rs, float/ops/chunk.rs,
float/ops/slice.rs (slice_dim, clamping, empty ranges, steps),
bool/ops/argwhere_nonzero.rs; and every op taking a list of dims, with
repeated and negative dims. Where ferrum deliberately differs from Burn
(docs/differences-from-burn.md) the test says so and checks ferrum's rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import ArgumentError, FerrumError, OutOfBoundsError, Tensor

from tests.support.burn_port import DEVICE, assert_approx, assert_eq, values


def arange(n: int, shape: tuple[int, ...]) -> Tensor:  # type: ignore[type-arg]
    return Tensor.arange(0, n, DEVICE).reshape(shape).float()


# --------------------------------------------------------------------------- squeeze.rs


def test_squeeze_dim_squeeze_first_last() -> None:
    assert Tensor.ones((2, 1, 4), DEVICE).squeeze_dim(1).shape() == (2, 4)
    assert Tensor.ones((2, 1, 4), DEVICE).squeeze().shape() == (2, 4)
    assert Tensor.ones((1, 3, 4, 5), DEVICE).squeeze_dim(0).shape() == (3, 4, 5)
    assert Tensor.ones((2, 3, 4, 1), DEVICE).squeeze_dim(3).shape() == (2, 3, 4)
    with pytest.raises(ArgumentError, match="only dims of size 1 can be squeezed"):
        Tensor.ones((2, 3, 4, 5), DEVICE).squeeze_dim(2)


def test_squeeze_dims() -> None:
    # should_squeeze_dims_with_empty_slice: an empty list squeezes every size-1 dim.
    assert Tensor.ones((1, 1, 3), DEVICE).squeeze_dims([]).shape() == (3,)
    assert Tensor.ones((1, 3, 1), DEVICE).squeeze().shape() == (3,)
    assert Tensor.ones((1, 3, 1, 5), DEVICE).squeeze_dims([0, 2]).shape() == (3, 5)
    assert Tensor.ones((2, 1, 3, 1), DEVICE).squeeze_dims([-3, -1]).shape() == (2, 3)
    with pytest.raises(ArgumentError, match="dim 1 has size 3"):
        Tensor.ones((2, 3, 4), DEVICE).squeeze_dims([1])
    # A dim named twice (as 0 and -3) is squeezed once.
    assert Tensor.ones((1, 2, 3), DEVICE).squeeze_dims([0, -3]).shape() == (2, 3)


def test_unsqueeze_dim() -> None:
    assert Tensor.ones((2, 4, 1), DEVICE).unsqueeze_dim(1).shape() == (2, 1, 4, 1)
    assert Tensor.ones((2, 3, 4, 5), DEVICE).unsqueeze_dim(0).shape() == (1, 2, 3, 4, 5)
    assert Tensor.ones((5, 4, 3, 2), DEVICE).unsqueeze_dim(4).shape() == (5, 4, 3, 2, 1)
    with pytest.raises(OutOfBoundsError):
        Tensor.ones((2, 3, 4, 5), DEVICE).unsqueeze_dim(6)


def test_unsqueeze_to_a_huge_rank_is_an_error_not_a_hang() -> None:
    # Built one dim at a time, a rank of 2^40 ran for minutes before running out of memory.
    assert Tensor.ones((2, 3), DEVICE).unsqueeze(4).shape() == (1, 1, 2, 3)
    with pytest.raises(ArgumentError, match="unsqueeze"):
        Tensor.ones((2, 3), DEVICE).unsqueeze(2**60)


def test_unsqueeze_dims() -> None:
    x = Tensor.ones((3, 4, 5), DEVICE)
    assert x.unsqueeze_dims([1, -2]).shape() == (3, 1, 4, 1, 5)
    assert x.unsqueeze_dims([0, 4]).shape() == (1, 3, 4, 5, 1)
    assert x.unsqueeze_dims([1]).shape() == (3, 1, 4, 5)
    # should_unsqueeze_dims_multiple_trailing_negatives (a Rust panic in ferrum before).
    assert x.unsqueeze_dims([0, -1, -1]).shape() == (1, 3, 4, 5, 1, 1)
    with pytest.raises(OutOfBoundsError, match="dim -6 is out of range for a tensor of rank 5"):
        x.unsqueeze_dims([0, -6])
    # Repeated positions take the next free one (Burn's copy loop); ones that
    # would fall past the end are errors, never a panic.
    assert x.unsqueeze_dims([1, 1]).shape() == (3, 1, 1, 4, 5)
    with pytest.raises(ArgumentError, match="do not fit"):
        x.unsqueeze_dims([4, 4])


def test_unsqueeze_dims_keeps_values_and_gradient() -> None:
    from tests.support.burn_port import AD

    x = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], AD).require_grad()
    y = x.unsqueeze_dims([-1, 0, -1])
    assert y.shape() == (1, 2, 2, 1, 1)
    grads = (y * y).sum().backward()
    g = x.grad(grads)
    assert g is not None
    assert_eq(g, [[2.0, 4.0], [6.0, 8.0]])


# --------------------------------------------------------------------------- flip.rs


def test_flip_float() -> None:
    tensor = arange(24, (2, 3, 4))
    expected = [
        [[15.0, 14.0, 13.0, 12.0], [19.0, 18.0, 17.0, 16.0], [23.0, 22.0, 21.0, 20.0]],
        [[3.0, 2.0, 1.0, 0.0], [7.0, 6.0, 5.0, 4.0], [11.0, 10.0, 9.0, 8.0]],
    ]
    assert_eq(tensor.flip([0, 2]), expected)
    assert_eq(tensor.flip([]), values(tensor))


def test_flip_duplicated_and_out_of_bound_axes() -> None:
    tensor = Tensor.arange(0, 24, DEVICE).reshape((2, 3, 4))
    with pytest.raises(ArgumentError, match=r"flip: dim 0 appears more than once in \[0, 0, 1\]"):
        tensor.flip([0, 0, 1])
    with pytest.raises(ArgumentError, match="appears more than once"):
        tensor.flip([2, -1])
    with pytest.raises(OutOfBoundsError):
        tensor.flip([3, 0, 1])


# --------------------------------------------------------------------------- expand.rs


def test_expand() -> None:
    assert_eq(Tensor.from_floats([1.0, 2.0, 3.0], DEVICE).expand((3, 3)), [[1.0, 2.0, 3.0]] * 3)
    assert_eq(Tensor.from_floats([4.0, 7.0, 2.0, 3.0], DEVICE).expand((2, 4)), [[4.0, 7.0, 2.0, 3.0]] * 2)
    assert_eq(
        Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE).expand((3, 2, 2)), [[[1.0, 2.0], [3.0, 4.0]]] * 3
    )
    assert_eq(
        Tensor.from_floats([[1.0, 2.0, 3.0, 4.0]], DEVICE).expand((2, 3, 4)), [[[1.0, 2.0, 3.0, 4.0]] * 3] * 2
    )
    summed = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE).expand((3, 2, 2)).sum_dim(0)
    assert_eq(summed, [[[3.0, 6.0], [9.0, 12.0]]])
    assert_eq(Tensor.from_floats([1.0], DEVICE).expand((2, 3)), [[1.0] * 3] * 2)
    with pytest.raises(FerrumError):
        Tensor.from_floats([1.0, 2.0, 3.0], DEVICE).expand((2, 2))


def test_expand_negative_one() -> None:
    assert_eq(Tensor.from_ints([1, 2, 3], DEVICE).expand((2, -1)), [[1, 2, 3], [1, 2, 3]])
    # should_panic_negative_one_on_non_existing_dim
    with pytest.raises(ArgumentError, match=r"-1 at position 0 of \[-1, 3\] names no dim"):
        Tensor.from_ints([1, 2, 3], DEVICE).expand((-1, 3))
    # inplace_op_after_expand
    assert_eq(Tensor.from_ints([1, 2, 3], DEVICE).expand((2, 3)) + 1, [[2, 3, 4], [2, 3, 4]])


# --------------------------------------------------------------------------- narrow.rs


def test_narrow() -> None:
    tensor = Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], DEVICE)
    assert_eq(tensor.narrow(0, 0, 2), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert_eq(tensor.narrow(1, 1, 2), [[2.0, 3.0], [5.0, 6.0], [8.0, 9.0]])
    assert_eq(arange(64, (8, 8)).narrow(0, 3, 4), np.arange(24, 56, dtype=np.float64).reshape(4, 8))


def test_narrow_invalid() -> None:
    tensor = Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], DEVICE)
    with pytest.raises(OutOfBoundsError):
        tensor.narrow(2, 0, 2)
    with pytest.raises(ArgumentError, match="exceeds dim 0 of size 3"):
        tensor.narrow(0, 3, 2)
    with pytest.raises(ArgumentError, match="length must be at least 1, found 0"):
        tensor.narrow(0, 1, 0)
    with pytest.raises(ArgumentError, match="exceeds"):
        tensor.narrow(0, 0, 4)


# --------------------------------------------------------------------------- split.rs, chunk.rs


def test_split() -> None:
    t = Tensor.from_ints([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]], DEVICE).float()
    assert [values(p) for p in t.split(2, 0)] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]]
    t = Tensor.from_ints([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]], DEVICE).float()
    assert [values(p) for p in t.split(2, 0)] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9]]]
    t = Tensor.from_ints([[0, 1, 2], [3, 4, 5]], DEVICE).float()
    assert [values(p) for p in t.split(2, 1)] == [[[0, 1], [3, 4]], [[2], [5]]]
    v = Tensor.from_ints([0, 1, 2, 3, 4], DEVICE).float()
    assert [values(p) for p in v.split(10, 0)] == [[0, 1, 2, 3, 4]]


def test_split_empty_tensors() -> None:
    empty = Tensor.zeros((0,), DEVICE)
    # test_split_with_zero_split_size_zero_tensor_size, test_split_zero_sized_tensor
    assert empty.split(0, 0) == []
    assert empty.split(1, 0) == []
    with pytest.raises(ArgumentError, match="split size must be positive for dim 0 of size 5"):
        Tensor.from_ints([0, 1, 2, 3, 4], DEVICE).split(0, 0)
    with pytest.raises(OutOfBoundsError):
        Tensor.from_ints([0, 1, 2], DEVICE).split(1, 2)
    # Along another dim, and through autodiff.
    assert Tensor.zeros((3, 0), DEVICE).split(2, 1) == []
    from tests.support.burn_port import AD

    assert Tensor.zeros((0, 2), AD).require_grad().chunk(3, 0) == []


def test_split_3d_and_with_sizes() -> None:
    t = arange(8, (2, 2, 2))
    assert [values(p) for p in t.split(1, 0)] == [[[[0.0, 1.0], [2.0, 3.0]]], [[[4.0, 5.0], [6.0, 7.0]]]]
    t = Tensor.from_ints([0, 1, 2, 3, 4, 5], DEVICE).float()
    assert [values(p) for p in t.split_with_sizes([2, 3, 1], 0)] == [[0, 1], [2, 3, 4], [5]]
    with pytest.raises(ArgumentError, match=r"sizes \[2, 2, 1\] sum to 5, dim 0 has size 6"):
        t.split_with_sizes([2, 2, 1], 0)


def test_split_with_sizes_zero_length() -> None:
    # Burn drops the empty piece ([0] and [1, 2] for sizes [0, 1, 2]); ferrum keeps
    # one piece per size, as PyTorch does (docs/differences-from-burn.md).
    t = Tensor.from_ints([0, 1, 2], DEVICE)
    pieces = t.split_with_sizes([0, 1, 2], 0)
    assert [p.shape() for p in pieces] == [(0,), (1,), (2,)]
    assert [values(p) for p in pieces] == [[], [0], [1, 2]]


def test_chunk() -> None:
    t = Tensor.arange(0, 12, DEVICE).float()
    assert [values(p) for p in t.chunk(6, 0)] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]
    t = Tensor.arange(0, 11, DEVICE).float()
    assert [values(p) for p in t.chunk(6, 0)] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]
    assert [p.shape()[0] for p in Tensor.arange(0, 100, DEVICE).chunk(8, 0)] == [13] * 7 + [9]
    assert [values(p) for p in Tensor.arange(0, 6, DEVICE).chunk(7, 0)] == [[i] for i in range(6)]
    with pytest.raises(OutOfBoundsError):
        Tensor.arange(0, 12, DEVICE).chunk(6, 1)


# --------------------------------------------------------------------------- slice.rs


def test_slice_dim() -> None:
    t = Tensor.from_floats([0.0, 1.0, 2.0], DEVICE)
    assert_eq(t.slice_dim(0, slice(-2, None)), [1.0, 2.0])
    assert_eq(t.slice_dim(0, slice(1, None)), [1.0, 2.0])
    with pytest.raises(OutOfBoundsError):
        t.slice_dim(1, slice(1, None))
    m = Tensor.from_floats([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], DEVICE)
    assert_eq(m.slice_dim(1, slice(1, None)), [[1.0, 2.0], [4.0, 5.0]])
    assert_eq(m.slice_dim(1, slice(None, None, -1)), [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]])
    m = Tensor.from_floats([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]], DEVICE)
    assert_eq(m.slice_dim(1, (0, 4, 2)), [[0.0, 2.0], [4.0, 6.0]])
    assert_eq(m.slice_dim(1, slice(0, 4, 2)), [[0.0, 2.0], [4.0, 6.0]])
    assert_eq(m.slice_dim(0, 1), [[4.0, 5.0, 6.0, 7.0]])


def test_slice_clamps_and_counts_from_the_end() -> None:
    t = Tensor.from_floats([0.0, 1.0, 2.0], DEVICE)
    assert_eq(t.slice([(0, 4)]), [0.0, 1.0, 2.0])
    m = Tensor.from_floats([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], DEVICE)
    assert_eq(m.slice([(0, 4), (0, 4)]), values(m))
    assert_eq(m.slice([(0, 1), (0, 1)]), [[0.0]])
    assert_eq(m.slice([(0, -1), (0, -2)]), [[0.0]])
    assert_eq(m.slice([(0, 1), None]), [[0.0, 1.0, 2.0]])
    assert_eq(m.slice([None, (0, 2)]), [[0.0, 1.0], [3.0, 4.0]])
    assert_eq(m.slice([None, None]), values(m))
    mean = Tensor.from_floats([0.0, 1.0, 2.0], DEVICE).mean()
    assert_eq(mean.slice([(0, 1)]), values(mean))
    with pytest.raises(FerrumError, match="2 indices given for a tensor of rank 1"):
        Tensor.from_floats([0.0, 1.0, 2.0], DEVICE).slice([(0, 1), (0, 1)])


def test_empty_slices() -> None:
    t = Tensor.from_floats([0.0, 1.0, 2.0], DEVICE)
    assert t.slice([(2, 1)]).shape() == (0,)
    assert t.slice([(1, 1)]).shape() == (0,)
    m = Tensor.from_floats([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], DEVICE)
    assert m.slice([(1, 1), (0, 3)]).shape() == (0, 3)
    assert m.slice([(0, 2), (2, 2)]).shape() == (2, 0)
    assert m.slice([(5, 9)]).shape() == (0, 3)


def test_slices_with_steps() -> None:
    t = Tensor.from_floats([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]], DEVICE)
    assert_eq(t.slice([(0, 3, 2)]), [[1.0, 2.0, 3.0, 4.0], [9.0, 10.0, 11.0, 12.0]])
    assert_eq(t.slice([None, (0, 4, 2)]), [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]])
    assert_eq(t.slice([(0, 3, 2), (0, 4, 2)]), [[1.0, 3.0], [9.0, 11.0]])
    assert_eq(t.slice([(0, 3, -1)]), [[9.0, 10.0, 11.0, 12.0], [5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0]])
    assert_eq(
        t.slice([None, (0, 4, -1)]), [[4.0, 3.0, 2.0, 1.0], [8.0, 7.0, 6.0, 5.0], [12.0, 11.0, 10.0, 9.0]]
    )
    assert_eq(t.slice([(0, 3, -2)]), [[9.0, 10.0, 11.0, 12.0], [1.0, 2.0, 3.0, 4.0]])
    assert_eq(t.slice([None, (0, 4, -2)]), [[4.0, 2.0], [8.0, 6.0], [12.0, 10.0]])
    assert_eq(t.slice([(0, 3, 2), (0, 4, -1)]), [[4.0, 3.0, 2.0, 1.0], [12.0, 11.0, 10.0, 9.0]])
    assert_eq(t.slice([(0, 3, -1), (0, 4, 2)]), [[9.0, 11.0], [5.0, 7.0], [1.0, 3.0]])
    one = Tensor.from_floats([float(i) for i in range(1, 11)], DEVICE)
    assert_eq(one.slice([(0, 10, 2)]), [1.0, 3.0, 5.0, 7.0, 9.0])
    assert_eq(one.slice([(0, 10, -1)]), [float(i) for i in range(10, 0, -1)])
    assert_eq(one.slice([(2, 8, -2)]), [8.0, 6.0, 4.0])
    cube = arange(16, (4, 2, 2)) + 1.0
    assert_eq(cube.slice([(0, 4, 2), None, None]), [[[1.0, 2.0], [3.0, 4.0]], [[9.0, 10.0], [11.0, 12.0]]])
    assert_eq(cube.slice([(0, 4, -1), (0, 2, -1), (0, 2, -1)]), np.arange(16, 0, -1).reshape(4, 2, 2))
    # Python slices keep Python's meaning (x[0:4:-1] is empty), Burn's ranges their own.
    assert one.slice([slice(0, 4, -1)]).shape() == (0,)


# --------------------------------------------------------------------------- argwhere_nonzero.rs


def test_argwhere_and_nonzero() -> None:
    b = Tensor.from_bool([False, True, False, True, True], DEVICE)
    assert_eq(b.argwhere(), [[1], [3], [4]])
    assert [values(t) for t in b.nonzero()] == [[1, 3, 4]]
    b2 = Tensor.from_bool([[False, False], [False, True], [True, True]], DEVICE)
    assert_eq(b2.argwhere(), [[1, 1], [2, 0], [2, 1]])
    assert [values(t) for t in b2.nonzero()] == [[1, 2, 2], [1, 0, 1]]
    b3 = Tensor.from_bool(
        [[[False, False, False], [False, True, False]], [[True, False, True], [True, True, False]]], DEVICE
    )
    assert_eq(b3.argwhere(), [[0, 1, 1], [1, 0, 0], [1, 0, 2], [1, 1, 0], [1, 1, 1]])
    assert [values(t) for t in b3.nonzero()] == [[0, 1, 1, 1, 1], [1, 0, 0, 1, 1], [1, 0, 2, 0, 1]]


def test_argwhere_and_nonzero_of_all_false() -> None:
    b = Tensor.from_bool([False] * 5, DEVICE)
    assert b.argwhere().shape() == (0, 1)
    # Burn returns no tensor at all; ferrum returns one (empty) tensor per dim, as
    # Burn's documentation and NumPy do (docs/differences-from-burn.md).
    nonzero = Tensor.from_bool([[False] * 3] * 2, DEVICE).nonzero()
    assert [t.shape() for t in nonzero] == [(0,), (0,)]


# --------------------------------------------------------------------------- every op taking a list of dims


DIMS_LISTS = [[], [0], [-1], [0, 0], [0, -3], [-1, -1], [0, -1, -1], [2, 1, 0], [5], [-4], [1, 1, 1, 1]]


@pytest.mark.parametrize("dims", DIMS_LISTS, ids=str)
def test_dims_lists_never_panic(dims: list[int]) -> None:
    # Each op either agrees with NumPy's reading of the list or raises a FerrumError.
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10.0
    t = Tensor.from_numpy(a, DEVICE)
    rank = a.ndim
    norm = [d + rank if d < 0 else d for d in dims]
    valid = all(0 <= d < rank for d in norm)
    distinct = len(set(norm)) == len(norm)
    cases: dict[str, tuple[Callable[[], Tensor[Any, Any, Any]], bool, Callable[[], Any]]] = {
        "flip": (lambda: t.flip(dims), valid and distinct, lambda: np.flip(a, tuple(norm))),
        "permute": (
            lambda: t.permute(dims),
            valid and distinct and len(dims) == rank,
            lambda: a.transpose(norm),
        ),
        "sum_dims": (lambda: t.sum_dims(dims), valid, lambda: a.sum(axis=tuple(set(norm)), keepdims=True)),
        "mean_dims": (lambda: t.mean_dims(dims), valid, lambda: a.mean(axis=tuple(set(norm)), keepdims=True)),
        "prod_dims": (lambda: t.prod_dims(dims), valid, lambda: a.prod(axis=tuple(set(norm)), keepdims=True)),
        "max_dims": (lambda: t.max_dims(dims), valid, lambda: a.max(axis=tuple(set(norm)), keepdims=True)),
        "min_dims": (lambda: t.min_dims(dims), valid, lambda: a.min(axis=tuple(set(norm)), keepdims=True)),
        "max_abs_dims": (
            lambda: t.max_abs_dims(dims),
            valid,
            lambda: np.abs(a).max(axis=tuple(set(norm)), keepdims=True),
        ),
        "sum_dims_squeeze": (
            lambda: t.sum_dims_squeeze(dims),
            valid,
            lambda: a.sum(axis=tuple(set(norm))) if dims else a,
        ),
        "squeeze_dims": (lambda: t.squeeze_dims(dims), valid and dims == [], lambda: a),
        "roll": (
            lambda: t.roll([1] * len(dims), dims),
            valid,
            lambda: np.roll(a, [1] * len(dims), tuple(norm)),
        ),
    }
    for name, (call, ok, reference) in cases.items():
        if ok:
            np.testing.assert_allclose(call().to_numpy(), reference(), rtol=1e-5, err_msg=name)
        else:
            with pytest.raises(FerrumError):
                call()
    out_rank = rank + len(dims)
    if all(-out_rank <= d < out_rank for d in dims):
        try:
            shape = t.unsqueeze_dims(dims).shape()
        except ArgumentError:
            pass
        else:
            assert len(shape) == out_rank and [s for s in shape if s != 1] == [2, 3, 4]
    else:
        with pytest.raises(OutOfBoundsError):
            t.unsqueeze_dims(dims)


def test_movedim_with_repeats_is_an_error() -> None:
    t = Tensor.zeros((2, 3, 4), DEVICE)
    assert t.movedim([0, -1], [-1, 0]).shape() == (4, 3, 2)
    for src, dst in [([0, 0], [1, 2]), ([0, 1], [2, -1]), ([0, -3], [1, 2])]:
        with pytest.raises(ArgumentError):
            t.movedim(src, dst)


def test_mean_dims_gradient_counts_a_repeated_dim_once() -> None:
    from tests.support.burn_port import AD

    x = Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], AD).require_grad()
    y = x.mean_dims([1, -1])
    assert_eq(y.inner(), [[2.0], [5.0]])
    g = x.grad(y.sum().backward())
    assert g is not None
    assert_approx(g, [[1.0 / 3.0] * 3] * 2)


def test_every_unsqueeze_position_list_of_rank_two() -> None:
    t = Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], DEVICE)
    for n in range(1, 4):
        for dims in itertools.product(range(-(n + 2), n + 2), repeat=n):
            try:
                out = t.unsqueeze_dims(list(dims))
            except ArgumentError:
                continue
            assert out.shape().count(1) >= n and out.reshape((2, 3)).to_data().to_list() == values(t)
