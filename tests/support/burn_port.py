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

# Re-exported: the ported tests take their devices from here.
from tests.support.devices import AD as AD
from tests.support.devices import DEVICE as DEVICE

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


# The 6x6 linear layer and two inputs of Burn's optimizer tests (crates/burn-optim, adam.rs and its
# neighbours), shared by the ports of those tests.
BURN_LINEAR_WEIGHT = [
    [-0.3206, 0.1374, 0.4043, 0.3200, 0.0859, 0.0671],
    [0.0777, -0.0185, -0.3667, 0.2550, 0.1955, -0.2922],
    [-0.0190, 0.0346, -0.2962, 0.2484, -0.2780, 0.3130],
    [-0.2980, -0.2214, -0.3715, -0.2981, -0.0761, 0.1626],
    [0.3300, -0.2182, 0.3717, -0.1729, 0.3796, -0.0304],
    [-0.0159, -0.0120, 0.1258, 0.1921, 0.0293, 0.3833],
]
BURN_LINEAR_BIAS = [-0.3905, 0.0884, -0.0970, 0.1176, 0.1366, 0.0130]
BURN_X1 = [[0.6294, 0.0940, 0.8176, 0.8824, 0.5228, 0.4310], [0.7152, 0.9559, 0.7893, 0.5684, 0.5939, 0.8883]]
BURN_X2 = [[0.8491, 0.2108, 0.8939, 0.4433, 0.5527, 0.2528], [0.3270, 0.0412, 0.5538, 0.9605, 0.3195, 0.9085]]
