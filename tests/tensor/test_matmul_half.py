"""bf16 and f16 matrix products in their own dtype (f32 accumulation, one rounding), against NumPy.

The reference multiplies the half-precision inputs exactly in float64 and
rounds once to the half format; ferrum's result may differ from it by one
unit in the last place where the f32 accumulation lands next to a rounding
boundary, never more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, Tensor
from ferrum.backend import Autodiff, NdArray
from ferrum.nn import LinearConfig

from tests.tensor.test_dtypes import bf16_round

DEVICE = NdArray.device()
F32 = npt.NDArray[np.float32]


def f16_round(x: F32) -> F32:
    return x.astype(np.float16).astype(np.float32)


#: Each half format's rounding, and its unit in the last place relative to a value (at worst).
HALVES: dict[DType, tuple[Callable[[F32], F32], float]] = {
    DType.BF16: (bf16_round, 2.0**-7),
    DType.F16: (f16_round, 2.0**-10),
}


def half(dtype: DType, x: F32) -> F32:
    """``x`` rounded to ``dtype``, as float32."""
    return HALVES[dtype][0](x.astype(np.float32))


def product(dtype: DType, a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The exact product of the rounded inputs, rounded once to ``dtype``."""
    exact = np.matmul(half(dtype, a).astype(np.float64), half(dtype, b).astype(np.float64))
    return half(dtype, exact.astype(np.float32))


def assert_within_one_unit(dtype: DType, got: npt.NDArray[Any], expected: npt.NDArray[np.float32]) -> None:
    unit = HALVES[dtype][1]
    # One unit in the last place of the half format (2^-7 of the value for bf16 at worst, 2^-10 for
    # f16), plus f32 summation error for values that cancel towards zero.
    bound = np.abs(expected) * unit + 1e-5 * np.abs(expected).max()
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - expected), bound + 1e-30)


@pytest.mark.parametrize("dtype", [DType.BF16, DType.F16])
@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (5, 7, 3), (13, 33, 31), (64, 256, 96), (130, 70, 260)])
def test_half_matmul_matches_numpy(dtype: DType, m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    out = Tensor.from_numpy(a, DEVICE, dtype=dtype).matmul(Tensor.from_numpy(b, DEVICE, dtype=dtype))
    assert out.dtype == dtype and out.dims() == (m, n)
    assert_within_one_unit(dtype, out.to_numpy(), product(dtype, a, b))


@pytest.mark.parametrize("dtype", [DType.BF16, DType.F16])
def test_half_matmul_of_views_and_batches(dtype: DType) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 1, 40, 24), dtype=np.float32)
    b = rng.standard_normal((1, 2, 30, 40), dtype=np.float32)
    # a's last two dims transposed by a view, b's too: [3, 1, 24, 40] @ [1, 2, 40, 30] -> [3, 2, 24, 30].
    ta = Tensor.from_numpy(a, DEVICE, dtype=dtype).swap_dims(2, 3)
    tb = Tensor.from_numpy(b, DEVICE, dtype=dtype).swap_dims(2, 3)
    out = ta.matmul(tb)
    assert out.dims() == (3, 2, 24, 30)
    expected = product(dtype, np.swapaxes(a, 2, 3), np.swapaxes(b, 2, 3))
    assert_within_one_unit(dtype, out.to_numpy(), np.broadcast_to(expected, (3, 2, 24, 30)))
    flipped = Tensor.from_numpy(a[0, 0], DEVICE, dtype=dtype).flip((0, 1))
    square = Tensor.from_numpy(b[0, 0, :24], DEVICE, dtype=dtype)
    expected = product(dtype, a[0, 0, ::-1, ::-1], b[0, 0, :24])
    assert_within_one_unit(dtype, flipped.matmul(square).to_numpy(), expected)


def test_bf16_matmul_large_enough_for_every_thread() -> None:
    rng = np.random.default_rng(9)
    a = rng.standard_normal((300, 513), dtype=np.float32)
    b = rng.standard_normal((513, 260), dtype=np.float32)
    ta, tb = Tensor.from_numpy(a, DEVICE, dtype=DType.BF16), Tensor.from_numpy(b, DEVICE, dtype=DType.BF16)
    assert_within_one_unit(DType.BF16, ta.matmul(tb).to_numpy(), product(DType.BF16, a, b))


def test_bf16_matmul_gradients_are_the_products_of_the_gradient() -> None:
    # d(sum(A @ B))/dA = 1 @ B^T and /dB = A^T @ 1, each a bf16 product rounded once.
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((6, 9), dtype=np.float32), rng.standard_normal((9, 5), dtype=np.float32)
    device = Autodiff[NdArray].device()
    ta = Tensor.from_numpy(a, device, dtype=DType.BF16).require_grad()
    tb = Tensor.from_numpy(b, device, dtype=DType.BF16).require_grad()
    grads = ta.matmul(tb).sum().backward()
    ga, gb = ta.grad(grads), tb.grad(grads)
    assert ga is not None and gb is not None and ga.dtype == DType.BF16
    ones = np.ones((6, 5), np.float32)
    assert_within_one_unit(DType.BF16, ga.to_numpy(), product(DType.BF16, ones, b.T))
    assert_within_one_unit(DType.BF16, gb.to_numpy(), product(DType.BF16, a.T, ones))


def test_a_linear_layer_runs_in_bf16() -> None:
    rng = np.random.default_rng(5)
    layer = LinearConfig(16, 8).init(DEVICE)
    x = rng.standard_normal((4, 16), dtype=np.float32)
    weight, bias = layer.weight.val().to_numpy(), layer.bias.val().to_numpy() if layer.bias else None
    assert bias is not None
    half_layer = layer.map(_Cast(DType.BF16))
    out = half_layer.forward(Tensor.from_numpy(x, DEVICE, dtype=DType.BF16))
    assert out.dtype == DType.BF16
    expected = half(DType.BF16, product(DType.BF16, x, weight) + half(DType.BF16, bias))
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=2.0**-7, atol=1e-6)


class _Cast:
    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def map_float(self, id: object, tensor: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        return tensor.cast(self.dtype)
