"""``repr(tensor)``: one line with backend, rank, kind, values, shape and dtype; large tensors summarised.

The summarised values are checked against NumPy's own summary (``np.array2string`` with the same
threshold and edge items); ``str`` stays Burn's block (tests/interop/test_burn_port_ops.py checks its text).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from ferrum import PrintOptions, Tensor, set_print_options
from ferrum.backend import Autodiff, NdArray

DEVICE = NdArray.device()


@pytest.fixture(autouse=True)
def default_print_options() -> Iterator[None]:
    set_print_options(PrintOptions())
    yield
    set_print_options(PrintOptions())


def numpy_summary(values: np.ndarray, threshold: int = 1000, edge_items: int = 3) -> str:
    text = np.array2string(
        values, threshold=threshold, edgeitems=edge_items, separator=", ", max_line_width=sys.maxsize,
        formatter={"float_kind": lambda v: repr(float(v)) if float(v) == float(np.float32(v)) else str(v),
                   "int": str},
    )
    # NumPy puts rows on lines of their own and a lone "..." between elided rows; one line, one space.
    return re.sub(r"\s+", " ", text.replace("\n", " ")).replace("[ ", "[")


def values_of(t: Tensor[Any, Any, Any]) -> str:
    match = re.fullmatch(r"Tensor\[[\w\[\]]+, D\d, \w+\]\((.*), shape=\[[\d, ]*\], dtype=\w+\)", repr(t))
    assert match, repr(t)
    return match[1]


def test_repr_is_one_line_with_type_shape_and_dtype() -> None:
    t = Tensor.from_floats([[0.1, 0.2], [0.3, 0.4]], DEVICE)
    assert repr(t) == "Tensor[NdArray, D2, Float]([[0.1, 0.2], [0.3, 0.4]], shape=[2, 2], dtype=f32)"
    ad = Tensor.from_floats([1.5], Autodiff[NdArray].device())
    assert repr(ad) == "Tensor[Autodiff[NdArray], D1, Float]([1.5], shape=[1], dtype=f32)"


def test_f32_values_print_as_f32() -> None:
    t = Tensor.from_floats([0.1, 1.0 / 3.0, 1e-3], DEVICE)
    assert values_of(t) == "[0.1, 0.33333334, 0.001]"  # the shortest text that reads back as the f32
    assert "0.1," in str(t) and "0.10000000149011612" not in str(t)


SHAPES = [(10, 10, 10, 10), (2000,), (40, 30), (5, 300), (1001,), (1000,), (7, 7, 7)]


@pytest.mark.parametrize("shape", SHAPES)
def test_large_tensors_are_summarised_as_numpy_does(shape: tuple[int, ...]) -> None:
    values = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    t = Tensor.from_data(values, DEVICE)
    assert values_of(t) == numpy_summary(values)
    assert "\n" not in repr(t)


def test_the_issue_example_is_short() -> None:
    t = Tensor.ones((10, 10, 10, 10), DEVICE)
    # 6 x 6 x 6 x 6 values shown instead of 10,000 (was 29,076 characters).
    assert repr(t).count("1.0") == 6**4
    assert len(repr(t)) < 10_000


def test_print_options_change_the_summary() -> None:
    values = np.arange(30, dtype=np.float32) / 4
    t = Tensor.from_data(values, DEVICE)
    set_print_options(PrintOptions(threshold=10, edge_items=2))
    assert values_of(t) == numpy_summary(values, threshold=10, edge_items=2) == "[0.0, 0.25, ..., 7.0, 7.25]"
    set_print_options(PrintOptions(threshold=10, edge_items=2, precision=1))
    assert values_of(t) == "[0.0, 0.2, ..., 7.0, 7.2]"
    assert "[0.0, 0.2, ..., 7.0, 7.2]" in str(t)


def test_tensor_data_repr_is_summarised_too() -> None:
    data = Tensor.from_data(np.zeros((50, 50), dtype=np.float32), DEVICE).to_data()
    assert repr(data).startswith("TensorData([[0.0, 0.0, 0.0, ..., 0.0, 0.0, 0.0], [0.0,")
    assert repr(data).endswith("shape=[50, 50], dtype=f32)")
