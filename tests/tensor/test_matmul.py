"""Matrix products against NumPy: 2-D, batched, broadcast batch dims,
strided (transposed, flipped, stepped) operands, Int matmul and dot."""

from typing import Any

import numpy as np
import pytest
from ferrum import DType, KindError, ShapeError, Tensor
from hypothesis import given
from hypothesis import strategies as st

from tests.support.tensors import (
    DEVICE,
    LAYOUTS,
    NUM_DTYPES,
    SETTINGS,
    Array,
    arrays,
    assert_close,
    assert_equal,
    dtypes,
    layouts,
    tensor,
)


def matmul_ref(a: Array, b: Array) -> Array:
    """``a @ b`` computed in f64 (ints exactly), cast back to a's dtype."""
    if a.dtype.kind == "i":
        exact: Array = np.matmul(a, b)
        return exact
    out: Array = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    return out


def tol(dtype: str, k: int) -> tuple[float, float]:
    if dtype == "i64":
        return 0.0, 0.0
    eps = 1e-6 if dtype == "f32" else 1e-14
    # Elements are at most 10 in magnitude: a sum of k products of up to 100.
    return eps * 10, eps * 100 * (k + 1) * 4


@st.composite
def mnk(draw: st.DrawFn, max_side: int = 6) -> tuple[int, int, int]:
    return draw(st.integers(1, max_side)), draw(st.integers(1, max_side)), draw(st.integers(1, max_side))


@SETTINGS
@given(st.data(), dtypes(NUM_DTYPES), mnk(), layouts(), layouts())
def test_matmul_2d(data: st.DataObject, dtype: str, dims: tuple[int, int, int], la: str, lb: str) -> None:
    m, n, k = dims
    a: Any = data.draw(arrays(dtype, (m, k), low=-10, high=10))
    b: Any = data.draw(arrays(dtype, (k, n), low=-10, high=10))
    x, y = tensor(a, la), tensor(b, lb)
    rtol, atol = tol(dtype, k)
    assert_close(x.matmul(y), matmul_ref(a, b), dtype, rtol=rtol, atol=atol)
    assert_close(x @ y, matmul_ref(a, b), dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(
    st.data(),
    dtypes(NUM_DTYPES),
    mnk(max_side=4),
    st.lists(st.integers(1, 3), min_size=1, max_size=2),
    layouts(),
    layouts(),
)
def test_matmul_batched_with_broadcasting(
    data: st.DataObject, dtype: str, dims: tuple[int, int, int], batch: list[int], la: str, lb: str
) -> None:
    m, n, k = dims
    # Each batch dim of each side is its full size or 1 (Burn broadcasts equal ranks only).
    ba = [s if data.draw(st.booleans()) else 1 for s in batch]
    bb = [s if data.draw(st.booleans()) else 1 for s in batch]
    a: Any = data.draw(arrays(dtype, (*ba, m, k), low=-10, high=10))
    b: Any = data.draw(arrays(dtype, (*bb, k, n), low=-10, high=10))
    out = tensor(a, la) @ tensor(b, lb)
    rtol, atol = tol(dtype, k)
    assert out.shape() == (*np.broadcast_shapes(tuple(ba), tuple(bb)), m, n)
    assert_close(out, matmul_ref(a, b), dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(st.data(), dtypes(NUM_DTYPES), mnk())
def test_matmul_of_transposed_views(data: st.DataObject, dtype: str, dims: tuple[int, int, int]) -> None:
    m, n, k = dims
    a: Any = data.draw(arrays(dtype, (k, m), low=-10, high=10))
    b: Any = data.draw(arrays(dtype, (n, k), low=-10, high=10))
    x, y = tensor(a), tensor(b)
    rtol, atol = tol(dtype, k)
    assert_close(x.transpose() @ y.transpose(), matmul_ref(a.T, b.T), dtype, rtol=rtol, atol=atol)
    assert_close(x.transpose() @ x, matmul_ref(a.T, a), dtype, rtol=rtol, atol=atol)
    assert_close(y @ y.transpose(), matmul_ref(b, b.T), dtype, rtol=rtol, atol=atol)


def test_matmul_of_expanded_and_sliced_views() -> None:
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    b = np.arange(20, dtype=np.float64).reshape(4, 5)
    x = tensor(a)
    y = tensor(b).unsqueeze_dim(0).expand((2, 4, 5))
    assert_close(x @ y, a @ b, "f64")
    assert_close(x[:, ::2, 1:] @ y[:, 1:, ::-1], a[:, ::2, 1:] @ b[1:, ::-1], "f64")


def test_int_matmul_known_values() -> None:
    a = Tensor.from_ints([[1, 2], [3, 4]], DEVICE)
    b = Tensor.from_ints([[5, -6], [7, 8]], DEVICE)
    assert_equal(a @ b, np.array([[19, 10], [43, 14]]), "i64")
    big = Tensor.full((2, 2), 2**31, DEVICE, dtype=DType.I64)
    assert_equal(big @ Tensor.eye(2, DEVICE, dtype=DType.I64), np.full((2, 2), 2**31), "i64")


@pytest.mark.parametrize(("m", "k", "n"), [(0, 3, 2), (2, 0, 3), (2, 3, 0)])
def test_matmul_with_zero_sized_dims(m: int, k: int, n: int) -> None:
    a = np.ones((m, k), np.float32)
    b = np.ones((k, n), np.float32)
    assert_close(tensor(a) @ tensor(b), a @ b, "f32")


def test_matmul_zero_sized_batch() -> None:
    a = np.ones((0, 2, 3), np.float32)
    b = np.ones((1, 3, 4), np.float32)
    out = tensor(a) @ tensor(b)
    assert out.shape() == (0, 2, 4)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_large_matmul_uses_the_threaded_paths(dtype: str) -> None:
    rng = np.random.default_rng(0)
    np_dtype = np.float32 if dtype == "f32" else np.float64
    a = rng.standard_normal((96, 257)).astype(np_dtype)
    b = rng.standard_normal((257, 130)).astype(np_dtype)
    rtol, atol = (1e-4, 1e-4) if dtype == "f32" else (1e-10, 1e-10)
    assert_close(tensor(a) @ tensor(b, "transposed"), matmul_ref(a, b), dtype, rtol=rtol, atol=atol)
    # Many small batched products: the batch-parallel path.
    c = rng.standard_normal((64, 5, 7)).astype(np_dtype)
    d = rng.standard_normal((64, 7, 3)).astype(np_dtype)
    assert_close(tensor(c, "flipped") @ tensor(d), matmul_ref(c, d), dtype, rtol=rtol, atol=atol)


@pytest.mark.parametrize("layout_a", LAYOUTS)
@pytest.mark.parametrize("layout_b", LAYOUTS)
@pytest.mark.parametrize(("m", "k", "n"), [(1, 40, 33), (7, 300, 17), (70, 33, 65), (130, 257, 96)])
def test_f32_matmul_across_tile_edges(m: int, k: int, n: int, layout_a: str, layout_b: str) -> None:
    # Sizes that are not multiples of the f32 kernel's 6 x 16 register tile,
    # depths over one 256-deep block, and every operand layout.
    rng = np.random.default_rng(m * 1000 + n)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    assert_close(tensor(a, layout_a) @ tensor(b, layout_b), matmul_ref(a, b), "f32", rtol=1e-5, atol=2e-6 * k)


@SETTINGS
@given(st.data(), dtypes(NUM_DTYPES), st.integers(1, 20), layouts())
def test_dot(data: st.DataObject, dtype: str, n: int, layout: str) -> None:
    a: Any = data.draw(arrays(dtype, (n,), low=-10, high=10))
    b: Any = data.draw(arrays(dtype, (n,), low=-10, high=10))
    expected = np.array([matmul_ref(a, b)]).astype(a.dtype)
    rtol, atol = tol(dtype, n)
    out = tensor(a, layout).dot(tensor(b))
    assert out.shape() == (1,)
    assert_close(out, expected, dtype, rtol=rtol, atol=atol)
    assert_close(tensor(a, layout) @ tensor(b), expected, dtype, rtol=rtol, atol=atol)


def test_matmul_errors() -> None:
    a: Any = Tensor.ones((2, 3), DEVICE)  # Any: these calls are type errors on purpose
    with pytest.raises(
        ShapeError, match=r"matmul: incompatible shapes \[2, 3\] and \[2, 3\]: inner dims differ"
    ):
        a @ a
    with pytest.raises(ShapeError, match="equal rank"):
        a @ Tensor.ones((1, 3, 2), DEVICE)
    with pytest.raises(ShapeError, match=r"dim 0 has sizes 2 and 3"):
        Tensor.ones((2, 2, 3), DEVICE) @ Tensor.ones((3, 3, 2), DEVICE)
    with pytest.raises(KindError, match="matmul"):
        Tensor.ones((2, 2), DEVICE, dtype=DType.Bool) @ Tensor.ones((2, 2), DEVICE, dtype=DType.Bool)
    with pytest.raises(KindError, match="dtypes differ: f32 and f64"):
        a @ Tensor.ones((3, 2), DEVICE, dtype=DType.F64)
    with pytest.raises(ShapeError, match=r"dot: expected two rank-1 tensors, found shapes \[2, 3\]"):
        a.dot(a)
