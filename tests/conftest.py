"""Fixtures shared by every test area. Helper functions live in tests/support/."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.tensors import DEVICE


@pytest.fixture
def device() -> Any:
    """The NdArray device (also available as ``tests.support.tensors.DEVICE``)."""
    return DEVICE
