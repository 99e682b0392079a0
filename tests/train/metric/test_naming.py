"""Numbers in metric names, as Rust's Display and Debug write them (Burn's names become log file names)."""

from __future__ import annotations

import pytest
from ferrum.train.metric.naming import rust_debug, rust_display


@pytest.mark.parametrize(
    ("value", "display", "debug"),
    [
        (0.5, "0.5", "0.5"),
        (1.0, "1", "1.0"),
        (2.0, "2", "2.0"),
        (0.1, "0.1", "0.1"),
        (0.0001, "0.0001", "0.0001"),
        (1e-5, "0.00001", "1e-5"),
        (1.5e-7, "0.00000015", "1.5e-7"),
        (1e16, "10000000000000000", "1e16"),
        (123456.0, "123456", "123456.0"),
        (-0.25, "-0.25", "-0.25"),
        (float("nan"), "NaN", "NaN"),
        (float("inf"), "inf", "inf"),
    ],
)
def test_f64(value: float, display: str, debug: str) -> None:
    assert rust_display(value) == display
    assert rust_debug(value) == debug


def test_f32_display_is_the_shortest_single_precision_digits() -> None:
    assert rust_display(0.3, single=True) == "0.3"
    assert rust_display(0.7, single=True) == "0.7"
    assert rust_display(0.3) == "0.3"
