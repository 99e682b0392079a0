"""ferrum.linalg and the Burn 0.20 tensor methods it leans on (``cross``,
``max_dims``/``min_dims``/``max_abs_dims``, ``pad`` with ``PadMode``) against
NumPy, with gradients checked by central finite differences."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import ArgumentError, PadMode, ShapeError, Tensor, linalg
from ferrum.backend import NdArray
from ferrum.linalg import Norm

from tests.support.f64 import f64
from tests.support.gradcheck import case, check_case, distinct, smooth

Array = npt.NDArray[Any]
DEVICE = NdArray.device()


X = np.array([[3.0, -4.0, 0.0, 1.5], [0.0, 0.0, -2.0, 0.25], [1.0, 1.0, 1.0, -1.0]])


@pytest.mark.parametrize(
    ("norm", "reference"),
    [
        (0, lambda a, d: np.count_nonzero(a, axis=d, keepdims=True).astype(float)),
        (1, lambda a, d: np.abs(a).sum(axis=d, keepdims=True)),
        (2, lambda a, d: np.sqrt((a * a).sum(axis=d, keepdims=True))),
        (3.0, lambda a, d: (np.abs(a) ** 3).sum(axis=d, keepdims=True) ** (1 / 3)),
        (0.5, lambda a, d: (np.abs(a) ** 0.5).sum(axis=d, keepdims=True) ** 2),
        (math.inf, lambda a, d: np.abs(a).max(axis=d, keepdims=True)),
        (-math.inf, lambda a, d: np.abs(a).min(axis=d, keepdims=True)),
    ],
)
@pytest.mark.parametrize("dim", [0, 1])
def test_vector_norm_matches_numpy(norm: float, reference: Any, dim: int) -> None:
    got = linalg.vector_norm(f64(X), norm, dim).to_numpy()
    np.testing.assert_allclose(got, reference(X, dim), rtol=1e-12)


def test_norm_names() -> None:
    assert Norm.of(0) == Norm.L0 and Norm.of(1.0) == Norm.L1 and Norm.of(math.inf) == Norm.LInf
    assert Norm.of(-math.inf) == Norm.LNegInf and Norm.of(4) == Norm.Lp(4.0)
    with pytest.raises(TypeError, match="a norm is a Norm or a number"):
        Norm.of(math.nan)


def test_vector_normalize_and_cosine_similarity() -> None:
    got = linalg.vector_normalize(f64(X), 2, 1, 1e-12).to_numpy()
    np.testing.assert_allclose(got, X / np.linalg.norm(X, axis=1, keepdims=True), rtol=1e-12)
    a, b = smooth((4, 5), seed="cos-a"), smooth((4, 5), seed="cos-b")
    expected = (a * b).sum(1, keepdims=True) / (
        np.linalg.norm(a, axis=1, keepdims=True) * np.linalg.norm(b, axis=1, keepdims=True)
    )
    np.testing.assert_allclose(linalg.cosine_similarity(f64(a), f64(b), 1).to_numpy(), expected, rtol=1e-12)
    # A zero vector is floored at eps instead of dividing by zero.
    zero = linalg.cosine_similarity(f64(np.zeros((1, 3))), f64(np.ones((1, 3))), 1).to_numpy()
    np.testing.assert_array_equal(zero, [[0.0]])


def test_diag_trace_outer_matvec() -> None:
    m = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(linalg.diag(f64(m)).to_numpy(), np.diagonal(m, axis1=1, axis2=2))
    np.testing.assert_array_equal(linalg.trace(f64(m)).to_numpy(), np.trace(m, axis1=1, axis2=2)[:, None])
    ints = Tensor.from_data([[1, 2], [3, 4]], DEVICE)
    assert linalg.diag(ints).to_data().to_list() == [1, 4]
    x, y = smooth((2, 3), seed="outer-x"), smooth((2, 4), seed="outer-y")
    np.testing.assert_allclose(linalg.outer(f64(x), f64(y)).to_numpy(), np.einsum("bi,bj->bij", x, y))
    v = smooth((2, 4), seed="matvec")
    np.testing.assert_allclose(linalg.matvec(f64(m), f64(v)).to_numpy(), np.einsum("bij,bj->bi", m, v))
    with pytest.raises(ShapeError, match=r"diag: expected a tensor of rank >= 2"):
        linalg.diag(f64(np.ones(3)))
    with pytest.raises(ShapeError, match=r"matvec: the matrix has 4 columns but the vector 3"):
        linalg.matvec(f64(m), f64(np.ones((2, 3))))
    with pytest.raises(ShapeError, match=r"outer: expected two tensors of the same rank"):
        linalg.outer(f64(np.ones(3)), f64(np.ones((2, 3))))


def test_cross_matches_numpy() -> None:
    a, b = smooth((4, 3, 2), seed="cross-a"), smooth((4, 3, 2), seed="cross-b")
    got = f64(a).cross(f64(b), 1).to_numpy()
    np.testing.assert_allclose(got, np.cross(a, b, axis=1), rtol=1e-12)
    with pytest.raises(ShapeError):
        f64(np.ones((2, 4))).cross(f64(np.ones((2, 4))), 1)


def test_extreme_dims_match_numpy() -> None:
    a = distinct((3, 4, 5), seed="dims")
    t = f64(a)
    np.testing.assert_array_equal(t.max_dims([0, 2]).to_numpy(), a.max(axis=(0, 2), keepdims=True))
    np.testing.assert_array_equal(t.min_dims([1]).to_numpy(), a.min(axis=1, keepdims=True))
    expected = np.abs(a).max(axis=(1, 2), keepdims=True)
    np.testing.assert_array_equal(t.max_abs_dims([1, 2]).to_numpy(), expected)


def test_pad_modes_match_numpy() -> None:
    a = np.arange(12.0).reshape(1, 3, 4)
    t = f64(a)
    # Burn's order: (left, right, top, bottom) pads the last dim, then the one before.
    got = t.pad([2, 1, 1, 2], PadMode.Reflect).to_numpy()
    np.testing.assert_array_equal(got, np.pad(a, ((0, 0), (1, 2), (2, 1)), mode="reflect"))
    got = t.pad([3, 0, 0, 1], PadMode.Edge).to_numpy()
    np.testing.assert_array_equal(got, np.pad(a, ((0, 0), (0, 1), (3, 0)), mode="edge"))
    got = t.pad([1, 1], PadMode.Constant(-1.5)).to_numpy()
    np.testing.assert_array_equal(got, np.pad(a, ((0, 0), (0, 0), (1, 1)), constant_values=-1.5))
    ints = Tensor.from_data([[1, 2]], DEVICE).pad([1, 0], PadMode.Constant(7.0))
    assert ints.to_data().to_list() == [[7, 1, 2]]
    assert repr(PadMode.Reflect) == "PadMode.Reflect" and PadMode.Edge == PadMode.Edge


def test_reflect_pad_wider_than_the_tensor_is_an_error() -> None:
    with pytest.raises(ArgumentError, match=r"reflect padding \(3, 0\) must be smaller than dim 1 of size 3"):
        f64(np.ones((2, 3))).pad([3, 0], PadMode.Reflect)


GRADIENTS = [
    case("vector_norm_l2", lambda x: linalg.vector_norm(x, 2, 1), smooth((3, 4), seed="g-l2")),
    case("vector_norm_l3", lambda x: linalg.vector_norm(x, 3.0, 0), distinct((3, 4), seed="g-l3")),
    case("vector_norm_inf", lambda x: linalg.vector_norm(x, math.inf, 1), distinct((3, 4), seed="g-inf")),
    case(
        "cosine_similarity",
        lambda a, b: linalg.cosine_similarity(a, b, 1),
        smooth((3, 4), seed="g-cos-a"),
        smooth((3, 4), seed="g-cos-b"),
    ),
    case("trace", linalg.trace, smooth((2, 3, 3), seed="g-trace")),
    case("matvec", linalg.matvec, smooth((2, 3, 4), seed="g-mv"), smooth((2, 4), seed="g-mv-v")),
    case(
        "cross", lambda a, b: a.cross(b, 1), smooth((2, 3, 4), seed="g-x-a"), smooth((2, 3, 4), seed="g-x-b")
    ),
    case("max_dims", lambda x: x.max_dims([0, 2]), distinct((3, 4, 5), seed="g-maxd")),
    case("max_abs_dims", lambda x: x.max_abs_dims([1]), distinct((3, 4, 5), seed="g-maxabs")),
    case("pad_reflect", lambda x: x.pad([2, 1, 1, 2], PadMode.Reflect), smooth((2, 3, 4), seed="g-refl")),
    case("pad_edge", lambda x: x.pad([3, 0, 0, 1], PadMode.Edge), smooth((2, 3, 4), seed="g-edge")),
]


@pytest.mark.parametrize("c", GRADIENTS, ids=lambda c: c.name)
def test_gradients_match_finite_differences(c: Any) -> None:
    check_case(c)
