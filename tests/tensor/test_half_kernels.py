"""Reductions, statistics, softmax and the gradients of element-wise ops in f16 and bf16.

These run on half tensors directly (f32 inside, each result rounded once) rather than on
whole widened copies. Each result is checked against NumPy in f64 on the same rounded inputs,
rounded once to the half format: it must be within one unit in the last place (plus f32
summation error where terms cancel). Inputs include views (transposed, sliced, expanded) and
shapes long enough for the threaded paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, Tensor
from ferrum import activation as A
from ferrum.backend import Autodiff, NdArray

from tests.tensor.test_matmul_half import HALVES, half

DEVICE = NdArray.device()
AD = Autodiff[NdArray].device()
F64 = npt.NDArray[np.float64]
HALF_DTYPES = [DType.BF16, DType.F16]


def rounded_input(dtype: DType, shape: tuple[int, ...], seed: int, scale: float = 1.0) -> F64:
    rng = np.random.default_rng(seed)
    return half(dtype, (rng.standard_normal(shape) * scale).astype(np.float32)).astype(np.float64)


def assert_one_rounding(
    dtype: DType, got: Tensor[Any, Any, Any], exact: F64, spread: float | None = None
) -> None:
    """``got`` (of ``dtype``) is ``exact`` rounded once, up to f32 error on ``spread`` (the
    magnitude of the terms that were summed)."""
    assert got.dtype == dtype
    values = got.cast(DType.F64).to_numpy()
    assert values.shape == exact.shape
    unit = HALVES[dtype][1]
    scale = np.abs(exact).max() if spread is None else spread
    bound = np.abs(exact) * unit + 1e-5 * scale + 1e-30
    np.testing.assert_array_less(np.abs(values - exact), bound)


SHAPES = [(3, 5, 7), (32, 12, 32), (4, 300, 130)]


@pytest.mark.parametrize("dtype", HALF_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_sum_and_mean_along_each_dim(dtype: DType, shape: tuple[int, int, int]) -> None:
    x = rounded_input(dtype, shape, sum(shape))
    t = Tensor.from_numpy(x.astype(np.float32), DEVICE, dtype=dtype)
    spread = float(np.abs(x).sum(axis=None) / np.prod(shape) * max(shape))
    for d in range(3):
        assert_one_rounding(dtype, t.sum_dim(d), x.sum(axis=d, keepdims=True), spread)
        assert_one_rounding(dtype, t.mean_dim(d), x.mean(axis=d, keepdims=True), spread / shape[d])
        assert_one_rounding(dtype, t.max_dim(d), x.max(axis=d, keepdims=True))
        assert_one_rounding(dtype, t.min_dim(d), x.min(axis=d, keepdims=True))
    assert_one_rounding(dtype, t.sum_dims([0, 2]), x.sum(axis=(0, 2), keepdims=True), spread * shape[0])
    assert_one_rounding(dtype, t.mean_dims([0, 1]), x.mean(axis=(0, 1), keepdims=True), spread / shape[2])
    assert_one_rounding(dtype, t.sum(), np.array([x.sum()]), float(np.abs(x).sum()))
    assert_one_rounding(dtype, t.mean(), np.array([x.mean()]), float(np.abs(x).mean()))


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_reductions_of_views(dtype: DType) -> None:
    x = rounded_input(dtype, (6, 40, 9), 3)
    t = Tensor.from_numpy(x.astype(np.float32), DEVICE, dtype=dtype)
    transposed, xt = t.swap_dims(0, 2), x.transpose(2, 1, 0)
    assert_one_rounding(dtype, transposed.sum_dim(1), xt.sum(axis=1, keepdims=True), 40.0)
    assert_one_rounding(dtype, transposed.mean_dim(2), xt.mean(axis=2, keepdims=True), 4.0)
    sliced = t[1:5, 3:38, 2:9]
    assert_one_rounding(dtype, sliced.sum_dim(1), x[1:5, 3:38, 2:9].sum(axis=1, keepdims=True), 40.0)
    # An expanded dim is summed as the element times its repeats, without materialising it.
    row = Tensor.from_numpy(x[:1, :, :1].astype(np.float32), DEVICE, dtype=dtype).expand((7, 40, 3))
    want = np.broadcast_to(x[:1, :, :1], (7, 40, 3))
    assert_one_rounding(dtype, row.sum_dims([0, 2]), want.sum(axis=(0, 2), keepdims=True))
    assert_one_rounding(dtype, row.mean_dim(0), want.mean(axis=0, keepdims=True))


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_half_sums_keep_f32_accumulation(dtype: DType) -> None:
    # 4000 ones (4000 = 125 * 32 is exact in both): a running sum in bf16 would stop at 256, in f16 at 2048.
    ones = Tensor.ones((3, 4000), DEVICE).cast(dtype)
    assert ones.sum_dim(1).cast(DType.F64).to_numpy().ravel().tolist() == [4000.0] * 3
    assert ones.swap_dims(0, 1).sum_dim(0).cast(DType.F64).to_numpy().ravel().tolist() == [4000.0] * 3
    assert ones.mean_dim(1).cast(DType.F64).to_numpy().ravel().tolist() == [1.0] * 3


@pytest.mark.parametrize("dtype", HALF_DTYPES)
@pytest.mark.parametrize("shape", [(32, 12, 32), (8, 64, 256), (3, 5)])
def test_var_mean_bias(dtype: DType, shape: tuple[int, ...]) -> None:
    x = half(dtype, (rounded_input(dtype, shape, 11, scale=3.0) + 1.0).astype(np.float32)).astype(np.float64)
    t = Tensor.from_numpy(x.astype(np.float32), DEVICE, dtype=dtype)
    last = len(shape) - 1
    for d in (0, last):
        var, mean = t.var_mean_bias(d)
        assert_one_rounding(dtype, mean, x.mean(axis=d, keepdims=True), 4.0)
        assert_one_rounding(dtype, var, x.var(axis=d, keepdims=True), 16.0)
        assert_one_rounding(dtype, t.var(d), x.var(axis=d, ddof=1, keepdims=True), 16.0)


def np_softmax(x: F64, axis: int) -> F64:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    out: F64 = e / e.sum(axis=axis, keepdims=True)
    return out


@pytest.mark.parametrize("dtype", HALF_DTYPES)
@pytest.mark.parametrize(
    ("shape", "dim"),
    [((32, 4, 12, 12), 3), ((32, 64, 256), 2), ((5, 7, 3), 1), ((2, 20000), 1), ((300, 70), 0)],
)
def test_softmax_and_log_softmax(dtype: DType, shape: tuple[int, ...], dim: int) -> None:
    x = rounded_input(dtype, shape, len(shape) * 7 + dim, scale=2.0)
    t = Tensor.from_numpy(x.astype(np.float32), DEVICE, dtype=dtype)
    p = np_softmax(x, dim)
    assert_one_rounding(dtype, A.softmax(t, dim), p, spread=float(p.max()))
    log_p = np.log(p)
    assert_one_rounding(dtype, A.log_softmax(t, dim), log_p, spread=float(np.abs(x).max()))


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_softmax_of_a_transposed_view(dtype: DType) -> None:
    x = rounded_input(dtype, (40, 33), 5)
    t = Tensor.from_numpy(x.astype(np.float32), DEVICE, dtype=dtype).transpose()
    p = np_softmax(x.T, 1)
    assert_one_rounding(dtype, A.softmax(t, 1), p, spread=float(p.max()))


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_softmax_gradient(dtype: DType) -> None:
    x = rounded_input(dtype, (6, 10), 21)
    w = rounded_input(dtype, (6, 10), 22)
    t = Tensor.from_numpy(x.astype(np.float32), AD, dtype=dtype).require_grad()
    wt = Tensor.from_numpy(w.astype(np.float32), AD, dtype=dtype)
    grads = (A.softmax(t, 1) * wt).sum().backward()
    g = t.grad(grads)
    assert g is not None
    # d/dx sum(w * softmax(x)) = p * (w - sum(w * p)), from the bf16-rounded p the kernel kept.
    p = half(dtype, np_softmax(x, 1).astype(np.float32)).astype(np.float64)
    want = p * (w - (w * p).sum(axis=1, keepdims=True))
    # Plus the error of the f32 gradient from the rounded p: a few units of w's magnitude.
    allowance = float(np.abs(w).max()) * 4 * HALVES[dtype][1] / 1e-5
    assert_one_rounding(dtype, g, want, spread=allowance)


#: Element-wise ops on two tracked half tensors and the NumPy gradients of ``sum(op(a, b))``.
BINARY: dict[str, tuple[Callable[[Any, Any], Any], Callable[[F64, F64], tuple[F64, F64]]]] = {
    "add": (lambda a, b: a + b, lambda a, b: (np.ones_like(a), np.ones_like(b))),
    "sub": (lambda a, b: a - b, lambda a, b: (np.ones_like(a), -np.ones_like(b))),
    "mul": (lambda a, b: a * b, lambda a, b: (b, a)),
    "div": (lambda a, b: a / b, lambda a, b: (1 / b, -a / (b * b))),
}


@pytest.mark.parametrize("dtype", HALF_DTYPES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_gradients_with_broadcast(dtype: DType, name: str) -> None:
    op, grads_of = BINARY[name]
    a = rounded_input(dtype, (4, 6, 5), 31)
    b = rounded_input(dtype, (1, 6, 1), 32) + 3.0  # away from zero for div
    b = half(dtype, b.astype(np.float32)).astype(np.float64)
    ta = Tensor.from_numpy(a.astype(np.float32), AD, dtype=dtype).require_grad()
    tb = Tensor.from_numpy(b.astype(np.float32), AD, dtype=dtype).require_grad()
    y = op(ta, tb)
    assert y.dtype == dtype
    assert_one_rounding(dtype, y.detach().inner(), op(a, np.broadcast_to(b, a.shape)))
    grads = y.sum().backward()
    ga, gb = ta.grad(grads), tb.grad(grads)
    assert ga is not None and gb is not None
    da, db = grads_of(a, np.broadcast_to(b, a.shape))
    assert_one_rounding(dtype, ga, np.broadcast_to(da, a.shape).copy())
    # b's gradient sums over the broadcast dims (in f32, rounded once).
    gb_exact = db.sum(axis=(0, 2), keepdims=True)
    assert_one_rounding(dtype, gb, gb_exact, float(np.abs(db).sum(axis=(0, 2)).max()))


@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_scalar_and_unary_gradients(dtype: DType) -> None:
    x = np.abs(rounded_input(dtype, (5, 9), 41)) + 0.5
    x = half(dtype, x.astype(np.float32)).astype(np.float64)
    t = Tensor.from_numpy(x.astype(np.float32), AD, dtype=dtype).require_grad()
    cases: list[tuple[Callable[[Any], Any], Callable[[F64], F64]]] = [
        (lambda v: v * 3.0, lambda v: np.full_like(v, 3.0)),
        (lambda v: v.powf_scalar(1.5), lambda v: 1.5 * np.sqrt(v)),
        (lambda v: v.log(), lambda v: 1 / v),
        (lambda v: v.exp(), np.exp),
        (lambda v: v.sin(), np.cos),
    ]
    for fn, derivative in cases:
        grads = fn(t).sum().backward()
        g = t.grad(grads)
        assert g is not None
        # exp's gradient reads its output: rounded once more (to the half format) or not.
        assert_one_rounding(dtype, g, derivative(x))
