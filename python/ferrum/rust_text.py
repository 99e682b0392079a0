"""Numbers written as Rust writes them: ``{}`` (Display) and ``{:?}`` (Debug).

Burn's texts (module displays, metric names that become log file names)
hold numbers formatted by Rust; ferrum spells them alike so the two read,
and name files, the same.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["rust_debug", "rust_display"]

_EXPONENT = re.compile(r"e([+-])0*(\d+)$")


def rust_display(value: float, *, single: bool = False) -> str:
    """``value`` as Rust's ``{}`` writes an ``f64`` (an ``f32`` with ``single``).

    Shortest round-trip digits, never an exponent, no ``.0`` on whole numbers.

    Example:
        >>> rust_display(1.0), rust_display(0.5), rust_display(1e-7), rust_display(0.3, single=True)
        ('1', '0.5', '0.0000001', '0.3')
    """
    if not np.isfinite(value):
        return _non_finite(value)
    number = np.float32(value) if single else np.float64(value)
    return np.format_float_positional(number, trim="-")


def rust_debug(value: float) -> str:
    """``value`` as Rust's ``{:?}`` writes an ``f64``.

    Like Python's ``repr`` (the same digits, and an exponent below 1e-4 or
    from 1e16 on), with Rust's exponent spelling.

    Example:
        >>> rust_debug(1.0), rust_debug(0.75), rust_debug(1e-7), rust_debug(2e20)
        ('1.0', '0.75', '1e-7', '2e20')
    """
    if not np.isfinite(value):
        return _non_finite(value)
    return _EXPONENT.sub(lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), repr(float(value)))


def _non_finite(value: float) -> str:
    if np.isnan(value):
        return "NaN"
    return "inf" if value > 0 else "-inf"
