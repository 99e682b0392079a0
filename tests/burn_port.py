"""Helpers of the tests ported from Burn 0.20.1's own test suite.

``assert_eq`` is Burn's ``TensorData::assert_eq`` (values and shape);
``assert_approx`` is ``assert_approx_eq`` with Burn's ``Tolerance::default()``
(relative 0.5%, absolute 1e-5), the tolerance Burn's authors checked their
expected values with.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ferrum import Tensor, TensorData
from ferrum.backend import Autodiff, NdArray

DEVICE = NdArray.device()
AD = Autodiff[NdArray].device()

#: Burn's ``Tolerance::default()`` (``balanced``).
RELATIVE = 0.005
ABSOLUTE = 1e-5


def values(t: Tensor[Any, Any, Any] | TensorData) -> Any:
    """The values of a tensor (or its data) as nested lists."""
    data = t if isinstance(t, TensorData) else t.to_data()
    return data.to_list()


def assert_eq(t: Tensor[Any, Any, Any] | TensorData, expected: Any) -> None:
    """Exactly Burn's expected values, with their shape."""
    got = np.asarray(values(t))
    want = np.asarray(expected)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(got, want)


def assert_approx(
    t: Tensor[Any, Any, Any] | TensorData,
    expected: Any,
    relative: float = RELATIVE,
    absolute: float = ABSOLUTE,
) -> None:
    """Burn's ``assert_approx_eq``: |a - b| < max(absolute, relative * max(|a|, |b|)), NaN == NaN."""
    got = np.asarray(values(t), dtype=np.float64)
    want = np.asarray(expected, dtype=np.float64)
    assert got.shape == want.shape, f"shape {got.shape}, expected {want.shape}"
    both_nan = np.isnan(got) & np.isnan(want)
    with np.errstate(invalid="ignore"):
        ok = (got == want) | (
            np.abs(got - want) < np.maximum(absolute, relative * np.maximum(np.abs(got), np.abs(want)))
        )
    assert np.all(ok | both_nan), f"{got.tolist()} != {want.tolist()}"
