"""Tensor comparison operators (``==``, ``!=``, ``<``, ...): element-wise Bool tensors, as NumPy and PyTorch.

Also ``hash`` by identity, ``bool`` of a comparison, ``len``; checked against NumPy's operators.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import Bool, Int, KindError, ShapeError, Tensor
from ferrum.backend import Autodiff, NdArray

DEVICE = NdArray.device()
OPERATORS: list[Callable[[Any, Any], Any]] = [
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge
]
A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, np.nan]], dtype=np.float32)
B = np.array([[1.0, 0.0, 3.0], [5.0, 5.0, np.nan]], dtype=np.float32)


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.__name__)
def test_tensor_against_tensor_matches_numpy(op: Callable[[Any, Any], Any]) -> None:
    got = op(Tensor.from_data(A, DEVICE), Tensor.from_data(B, DEVICE))
    assert isinstance(got, Tensor) and got.kind is Bool
    np.testing.assert_array_equal(got.to_numpy(), op(A, B))


@pytest.mark.parametrize("op", OPERATORS, ids=lambda op: op.__name__)
@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_tensor_against_number_matches_numpy(op: Callable[[Any, Any], Any], scalar: float) -> None:
    ints = np.array([0, 1, 2, 3], dtype=np.int64)
    np.testing.assert_array_equal(op(Tensor.from_data(A, DEVICE), scalar).to_numpy(), op(A, scalar))
    if not isinstance(scalar, float):
        np.testing.assert_array_equal(op(Tensor.from_data(ints, DEVICE), scalar).to_numpy(), op(ints, scalar))


def test_reflected_number_comparisons() -> None:
    t = Tensor.from_data(A, DEVICE)
    np.testing.assert_array_equal((2.0 < t).to_numpy(), 2.0 < A)  # Python turns it into t > 2.0
    # mypy types int == object as bool; Python falls back to Tensor.__eq__.
    np.testing.assert_array_equal((3 == t).to_numpy(), A == 3)  # type: ignore[attr-defined]


def test_comparison_is_burns_equal_and_runs_on_autodiff() -> None:
    t = Tensor.from_data(A, Autodiff[NdArray].device()).require_grad()
    u = Tensor.from_data(B, Autodiff[NdArray].device())
    np.testing.assert_array_equal((t == u).to_numpy(), t.equal(u).to_numpy())
    np.testing.assert_array_equal((t != 5.0).to_numpy(), t.not_equal_elem(5.0).to_numpy())


def test_other_objects_are_never_equal() -> None:
    t = Tensor.from_data(A, DEVICE)
    assert (t == None) is False  # noqa: E711 - the operator itself is under test
    assert (t != "x") is True
    with pytest.raises(TypeError):
        _ = t < "x"  # type: ignore[operator]


def test_shape_and_kind_mismatches_raise() -> None:
    with pytest.raises(ShapeError):
        _ = Tensor.from_data(A, DEVICE) == Tensor.ones((3, 2), DEVICE)
    with pytest.raises(KindError):
        _ = Tensor.from_data(A, DEVICE) == Tensor.zeros((2, 3), DEVICE, Int)


def test_truth_of_a_comparison_is_ambiguous_past_one_element() -> None:
    t = Tensor.from_data(A, DEVICE)
    with pytest.raises(ValueError, match=r"ambiguous; use \.any\(\) or \.all\(\)"):
        bool(t == t)
    assert bool(Tensor.from_floats([2.0], DEVICE) == 2.0)
    assert (t == t).any().item()


def test_hash_is_identity() -> None:
    t = Tensor.ones((2,), DEVICE)
    u = Tensor.ones((2,), DEVICE)
    assert hash(t) == hash(t) and hash(t) != hash(u)
    seen = {t: "t", u: "u"}  # equal values, two keys, as in PyTorch
    assert seen[t] == "t" and seen[u] == "u"
    assert t in [t] and t in {t}


def test_tensor_data_equality_still_compares_values() -> None:
    t = Tensor.from_data(A, DEVICE)
    assert t.to_data() != Tensor.from_data(B, DEVICE).to_data()
    same = Tensor.from_floats([1.0, 2.0], DEVICE)
    assert same.to_data() == Tensor.from_floats([1.0, 2.0], DEVICE).to_data()


def test_len_is_the_first_dim() -> None:
    assert len(Tensor.zeros((4, 2), DEVICE)) == len(np.zeros((4, 2))) == 4
    assert len(Tensor.zeros((0, 3), DEVICE)) == 0
    with pytest.raises(TypeError, match="rank-0"):
        len(Tensor.zeros((1,), DEVICE).reshape(()))
