"""ferrum.linalg.lu_decomposition: Burn 0.20.1's own tests (crates/burn-backend-tests/tests/tensor/
float/linalg/lu_decomposition.rs), a NumPy partial-pivoting reference written here, the
reconstruction ``A[perm] = L @ U``, gradients against finite differences and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import ArgumentError, DType, Int, KindError, ShapeError, Tensor
from ferrum.backend import NdArray
from ferrum.linalg import LU_PIVOT_TOLERANCE, lu_decomposition

from tests.support.burn_port import assert_approx, assert_eq
from tests.support.f64 import f64
from tests.support.gradcheck import case, check_case

Array = npt.NDArray[Any]
DEVICE = NdArray.device()


def numpy_lu(a: Array) -> tuple[Array, Array]:
    """Doolittle elimination with partial pivoting (largest magnitude, first of ties), packed."""
    lu = np.array(a, dtype=np.float64)
    n = lu.shape[0]
    perm = np.arange(n)
    for k in range(n):
        p = k + int(np.argmax(np.abs(lu[k:, k])))
        lu[[k, p]] = lu[[p, k]]
        perm[[k, p]] = perm[[p, k]]
        lu[k + 1 :, k] /= lu[k, k]
        lu[k + 1 :, k + 1 :] -= np.outer(lu[k + 1 :, k], lu[k, k + 1 :])
    return lu, perm


def unpack(lu: Array) -> tuple[Array, Array]:
    return np.tril(lu, -1) + np.eye(lu.shape[0]), np.triu(lu)


# Burn's tests


def test_burn_lu_2x2_decomposition() -> None:
    result, _ = lu_decomposition(Tensor.from_floats([[4.0, 3.0], [6.0, 3.0]], DEVICE))
    assert_eq(result, np.array([[6.0, 3.0], [2.0 / 3.0, 1.0]], dtype=np.float32))


def test_burn_lu_3x3_decomposition() -> None:
    a = Tensor.from_floats([[0.0, 5.0, 22.0 / 3.0], [4.0, 2.0, 1.0], [2.0, 7.0, 9.0]], DEVICE)
    result, permutations = lu_decomposition(a)
    assert_eq(permutations, [1, 2, 0])
    # Burn's tolerance: its default, with 5e-3 absolute for half precision (f32 here).
    assert_approx(result, [[4.0, 2.0, 1.0], [0.5, 6.0, 8.5], [0.0, 0.8333333, 0.25000048]])


def test_burn_lu_singular_matrix() -> None:
    with pytest.raises(ArgumentError, match=r"singular or nearly so: pivot 0 in column 1"):
        lu_decomposition(Tensor.from_floats([[1.0, 2.0], [2.0, 4.0]], DEVICE))


def test_burn_lu_non_square_matrix() -> None:
    with pytest.raises(ShapeError, match=r"expected a square matrix \[n, n\], found shape \[2, 3\]"):
        lu_decomposition(Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], DEVICE))


def test_burn_lu_1x1_element_matrix() -> None:
    result, perm = lu_decomposition(Tensor.from_floats([[5.0]], DEVICE))
    assert_eq(result, [[5.0]])
    assert_eq(perm, [0])


def test_burn_lu_identity_matrix() -> None:
    result, perm = lu_decomposition(Tensor.eye(4, DEVICE))
    assert_eq(result, np.eye(4))
    assert_eq(perm, [0, 1, 2, 3])


def test_burn_lu_50x50_random_matrix() -> None:
    a = np.random.default_rng(50).uniform(0.0, 1.0, size=(50, 50)).astype(np.float32)
    result, perm = lu_decomposition(Tensor.from_numpy(a, DEVICE))
    lower, upper = unpack(result.to_numpy().astype(np.float64))
    p = np.zeros((50, 50))
    p[perm.to_numpy(), np.arange(50)] = 1.0
    # Burn's Tolerance::permissive(): relative 1%, absolute 0.01.
    np.testing.assert_allclose(p @ lower @ upper, a, rtol=0.01, atol=0.01)


# References


@pytest.mark.parametrize("n", [2, 3, 5, 8, 17])
def test_matches_numpy_partial_pivoting(n: int) -> None:
    a = np.random.default_rng(n).normal(size=(n, n))
    lu, perm = lu_decomposition(f64(a))
    want_lu, want_perm = numpy_lu(a)
    np.testing.assert_array_equal(perm.to_numpy(), want_perm)
    np.testing.assert_allclose(lu.to_numpy(), want_lu, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [4, 12, 30])
def test_reconstructs_the_permuted_matrix(n: int) -> None:
    a = np.random.default_rng(100 + n).normal(size=(n, n))
    lu, perm = lu_decomposition(f64(a))
    lower, upper = unpack(lu.to_numpy())
    assert np.all(np.abs(np.tril(lu.to_numpy(), -1)) <= 1.0)  # partial pivoting bounds the multipliers
    np.testing.assert_allclose(lower @ upper, a[perm.to_numpy()], rtol=1e-10, atol=1e-12)
    assert sorted(perm.to_numpy().tolist()) == list(range(n))


def test_hand_computed_example() -> None:
    # Worked by hand. A = [[3, 1, 2], [0, 2, 1], [6, 2, 2]]. Column 0 pivots on row 2 (|6| is
    # largest): swap rows 0 and 2, U's row 0 is [6, 2, 2], l10 = 0 / 6 = 0, l20 = 3 / 6 = 0.5.
    # Trailing rows: [2, 1] - 0 * [2, 2] = [2, 1] and [1, 2] - 0.5 * [2, 2] = [0, 1].
    # Column 1 pivots on row 1 (|2| > |0|): l21 = 0 / 2 = 0, u22 = 1 - 0 * 1 = 1.
    lu, perm = lu_decomposition(f64([[3.0, 1.0, 2.0], [0.0, 2.0, 1.0], [6.0, 2.0, 2.0]]))
    assert_eq(perm, [2, 1, 0])
    assert_eq(lu, [[6.0, 2.0, 2.0], [0.0, 2.0, 1.0], [0.5, 0.0, 1.0]])


def test_ties_keep_the_first_row() -> None:
    lu, perm = lu_decomposition(f64([[-2.0, 1.0], [2.0, 3.0]]))
    assert_eq(perm, [0, 1])
    assert_eq(lu, [[-2.0, 1.0], [-1.0, 4.0]])


def test_types_and_dtypes() -> None:
    for dtype in (DType.F32, DType.F64):
        lu, perm = lu_decomposition(Tensor.from_numpy(np.eye(3) * 2.0, DEVICE, dtype=dtype))
        assert lu.dtype == dtype and lu.shape() == (3, 3)
        assert perm.kind is Int and perm.shape() == (3,)


def test_empty_matrix() -> None:
    lu, perm = lu_decomposition(Tensor.zeros((0, 0), DEVICE))
    assert lu.shape() == (0, 0) and perm.shape() == (0,) and perm.kind is Int


def test_gradient_for_a_fixed_pivot_order() -> None:
    # Well-separated pivots: the +-eps of the finite differences never changes the row order.
    a = np.array([[1.0, 0.3, -0.2, 0.5], [4.0, -1.0, 0.7, 0.1], [-0.5, 0.2, 3.0, 0.4], [0.6, 2.5, 0.1, -1.2]])
    lu = case("lu_decomposition", lambda t: lu_decomposition(t)[0], a, layouts=("contiguous", "transposed"))
    check_case(lu)


# Errors


def test_near_singular_pivot_is_refused() -> None:
    tiny = LU_PIVOT_TOLERANCE / 2
    with pytest.raises(ArgumentError, match=r"pivot 5e-07 in column 0 .*<= 1e-06"):
        lu_decomposition(f64([[tiny, 0.0], [0.0, 1.0]]))


def test_nan_pivot_is_refused() -> None:
    with pytest.raises(ArgumentError, match=r"pivot nan in column 0"):
        lu_decomposition(f64([[np.nan, 1.0], [1.0, np.nan]]))


def test_bad_shapes_and_kinds() -> None:
    with pytest.raises(ShapeError, match=r"found shape \[2, 2, 2\]"):
        lu_decomposition(Tensor.zeros((2, 2, 2), DEVICE))  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match=r"found shape \[4\]"):
        lu_decomposition(Tensor.zeros((4,), DEVICE))  # type: ignore[arg-type]
    with pytest.raises(KindError, match="expected a Float tensor, found kind Int"):
        lu_decomposition(Tensor.eye(2, DEVICE, Int))  # type: ignore[arg-type]
