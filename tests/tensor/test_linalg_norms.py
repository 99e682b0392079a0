"""The named norms of ferrum.linalg (``l0_norm`` ... ``min_abs_norm``, on Float and Int tensors) and
``outer_dim``: Burn 0.20.1's expected values (crates/burn-backend-tests/tests/tensor/float/linalg/
vector_norm.rs and outer.rs) and NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import DType, ShapeError, Tensor, linalg
from ferrum.backend import NdArray

from tests.support.burn_port import assert_approx, assert_eq
from tests.support.gradcheck import case, check_case

DEVICE = NdArray.device()
X = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE)
Z = Tensor.from_ints([[1, 2], [3, 4]], DEVICE)


def test_burn_max_min_abs() -> None:
    assert_eq(linalg.max_abs_norm(X, 0), [[3.0, 4.0]])
    assert_eq(linalg.min_abs_norm(X, 0), [[1.0, 2.0]])
    assert_eq(linalg.max_abs_norm(X, 1), [[2.0], [4.0]])
    assert_eq(linalg.min_abs_norm(X, 1), [[1.0], [3.0]])
    assert_eq(linalg.max_abs_norm(Z, 0), [[3, 4]])
    assert_eq(linalg.max_abs_norm(Z, 1), [[2], [4]])
    assert_eq(linalg.min_abs_norm(Z, 0), [[1, 2]])
    assert_eq(linalg.min_abs_norm(Z, 1), [[1], [3]])


def test_burn_l0_norm() -> None:
    x = Tensor.from_floats([[1.0, -2.0, 0.0], [0.0, 0.0, 4.0]], DEVICE)
    assert_eq(linalg.l0_norm(x, 0), [[1.0, 1.0, 1.0]])
    assert_eq(linalg.l0_norm(x, 1), [[2.0], [1.0]])
    z = Tensor.from_ints([[1, -2, 0], [0, 0, 4]], DEVICE)
    assert_eq(linalg.l0_norm(z, 0), [[1, 1, 1]])
    assert_eq(linalg.l0_norm(z, 1), [[2], [1]])


def test_burn_l1_l2_lp_norms() -> None:
    assert_eq(linalg.l1_norm(X, 0), [[4.0, 6.0]])
    assert_eq(linalg.l1_norm(X, 1), [[3.0], [7.0]])
    assert_approx(linalg.l2_norm(X, 0), [[3.16227766, 4.47213595]], relative=1e-5)
    assert_approx(linalg.l2_norm(X, 1), [[2.23606798], [5.0]], relative=1e-5)
    assert_approx(linalg.lp_norm(X, 3.0, 0), [[3.0365891, 4.1601677]], relative=1e-5)


def test_int_l1_norm_matches_numpy() -> None:
    z = np.array([[3, -7, 0, 2], [-1, -1, 5, 0]])
    assert_eq(linalg.l1_norm(Tensor.from_ints(z.tolist(), DEVICE), 1), np.abs(z).sum(1, keepdims=True))


def test_named_norms_agree_with_vector_norm_in_f64() -> None:
    a = np.random.default_rng(11).normal(size=(4, 6))
    t = Tensor.from_numpy(a, DEVICE, dtype=DType.F64)
    expected = {
        "l0": np.count_nonzero(a, axis=1, keepdims=True).astype(float),
        "l1": np.abs(a).sum(1, keepdims=True),
        "l2": np.linalg.norm(a, axis=1, keepdims=True),
        "lp": (np.abs(a) ** 1.5).sum(1, keepdims=True) ** (1 / 1.5),
        "max": np.abs(a).max(1, keepdims=True),
        "min": np.abs(a).min(1, keepdims=True),
    }
    got = {
        "l0": linalg.l0_norm(t, 1),
        "l1": linalg.l1_norm(t, 1),
        "l2": linalg.l2_norm(t, 1),
        "lp": linalg.lp_norm(t, 1.5, 1),
        "max": linalg.max_abs_norm(t, 1),
        "min": linalg.min_abs_norm(t, 1),
    }
    for name, want in expected.items():
        np.testing.assert_allclose(got[name].to_numpy(), want, rtol=1e-12, err_msg=name)


def test_burn_outer_dim() -> None:
    u = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], DEVICE)
    v = Tensor.from_floats([[4.0, 5.0], [5.0, 6.0]], DEVICE)
    assert_approx(linalg.outer_dim(u, v, 0), [[[4.0, 10.0], [5.0, 12.0]], [[12.0, 20.0], [15.0, 24.0]]])


@pytest.mark.parametrize(
    ("dim", "subscripts"), [(0, "iab,jab->ijab"), (1, "aib,ajb->aijb"), (-1, "abi,abj->abij")]
)
def test_outer_dim_matches_einsum(dim: int, subscripts: str) -> None:
    rng = np.random.default_rng(dim + 5)
    shapes = {0: ((3, 2, 4), (5, 2, 4)), 1: ((2, 3, 4), (2, 5, 4)), -1: ((2, 4, 3), (2, 4, 5))}[dim]
    x, y = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    got = linalg.outer_dim(
        Tensor.from_numpy(x, DEVICE, dtype=DType.F64), Tensor.from_numpy(y, DEVICE, dtype=DType.F64), dim
    )
    np.testing.assert_allclose(got.to_numpy(), np.einsum(subscripts, x, y), rtol=1e-12)


def test_outer_dim_int_and_last_dim_is_outer() -> None:
    x, y = Tensor.from_ints([[1, 2]], DEVICE), Tensor.from_ints([[3, 4, 5]], DEVICE)
    assert_eq(linalg.outer_dim(x, y, -1), [[[3, 4, 5], [6, 8, 10]]])
    assert_eq(linalg.outer(x, y), [[[3, 4, 5], [6, 8, 10]]])


def test_outer_dim_gradient() -> None:
    rng = np.random.default_rng(9)
    grad_case = case(
        "outer_dim", lambda a, b: linalg.outer_dim(a, b, 1), rng.normal(size=(2, 3)), rng.normal(size=(2, 4))
    )
    check_case(grad_case)


def test_outer_dim_errors() -> None:
    x: Any = Tensor.zeros((2, 3), DEVICE)
    with pytest.raises(ShapeError, match=r"dim must be in \[-2, 2\) for rank-2 tensors, found 2"):
        linalg.outer_dim(x, x, 2)
    with pytest.raises(ShapeError, match=r"same rank >= 1, found \[2, 3\] and \[3\]"):
        linalg.outer_dim(x, Tensor.zeros((3,), DEVICE), 0)
