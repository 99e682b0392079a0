"""Closeness reports: Burn's ``check_closeness``, how many elements of two tensors agree at each tolerance.

``check_closeness(output, expected)`` prints, for each epsilon from 1e-1 down
to 1e-8, how many elements satisfy ``|output - expected| <= eps + eps * |expected|``
(``Tensor.is_close`` with ``rtol = atol = eps``), with Burn's verdict: PASS (all),
WARN (at least 90%) or FAIL. It returns the figures as a ``ClosenessReport``;
``require=eps`` also raises ``AssertionError`` unless every element is close at
``eps`` (Burn only prints).

Example:
    >>> import io
    >>> from ferrum import Tensor, check_closeness
    >>> from ferrum.backend import NdArray
    >>> device = NdArray.device()
    >>> out = Tensor.from_floats([1.0, 2.0, 3.001], device)
    >>> report = check_closeness(out, Tensor.from_floats([1.0, 2.0, 3.0], device), file=io.StringIO())
    >>> report.level(1e-3).status, report.level(1e-4).close
    ('PASS', 2)
"""

from __future__ import annotations

import dataclasses
import decimal
import math
import os
import sys
from typing import Any, TextIO

from ferrum._ferrum import Float, KindError, ShapeError, Tensor

__all__ = ["EPSILONS", "ClosenessLevel", "ClosenessReport", "check_closeness"]

EPSILONS: tuple[float, ...] = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
"""The tolerances of Burn's report, loosest first."""

_WARN_PERCENT = 90.0
_BOLD, _GREEN, _YELLOW, _RED, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[0m"
_VERDICTS = {
    "PASS": (_GREEN, "All elements are within tolerance"),
    "WARN": (_YELLOW, "Most elements are within tolerance"),
    "FAIL": (_RED, "Significant differences detected"),
}


@dataclasses.dataclass(frozen=True)
class ClosenessLevel:
    """The count at one tolerance: ``close`` of ``total`` elements within ``epsilon``.

    Example:
        >>> from ferrum.tensor.report import ClosenessLevel
        >>> level = ClosenessLevel(1e-3, 9, 10)
        >>> level.percentage, level.status
        (90.0, 'WARN')
    """

    epsilon: float
    close: int
    total: int

    @property
    def percentage(self) -> float:
        """``100 * close / total`` (100 for empty tensors: nothing differs)."""
        return 100.0 if self.total == 0 else self.close / self.total * 100.0

    @property
    def status(self) -> str:
        """``"PASS"`` when every element is close, ``"WARN"`` from 90%, ``"FAIL"`` below."""
        if self.close == self.total:
            return "PASS"
        return "WARN" if self.percentage >= _WARN_PERCENT else "FAIL"


@dataclasses.dataclass(frozen=True)
class ClosenessReport:
    """One ``ClosenessLevel`` per tolerance of ``EPSILONS``; ``str(report)`` is Burn's text.

    Example:
        >>> from ferrum.tensor.report import ClosenessLevel, ClosenessReport
        >>> report = ClosenessReport((ClosenessLevel(1e-1, 4, 4), ClosenessLevel(1e-2, 1, 4)))
        >>> report.tightest_passing()
        0.1
        >>> print(str(report).splitlines()[2])
        Epsilon: 1e-1
    """

    levels: tuple[ClosenessLevel, ...]

    def level(self, epsilon: float) -> ClosenessLevel:
        """The level measured at ``epsilon`` (``KeyError`` naming the measured ones otherwise)."""
        for level in self.levels:
            if level.epsilon == epsilon:
                return level
        measured = ", ".join(_rust_exp(level.epsilon) for level in self.levels)
        raise KeyError(f"no closeness measured at epsilon {epsilon!r}; measured: {measured}")

    def tightest_passing(self) -> float | None:
        """The smallest epsilon at which every element is close, or ``None``."""
        passing = [level.epsilon for level in self.levels if level.status == "PASS"]
        return min(passing) if passing else None

    def render(self, color: bool = False) -> str:
        """Burn's report text; ``color`` adds its ANSI bold and green/yellow/red verdicts."""

        def paint(code: str, text: str) -> str:
            return f"{code}{text}{_RESET}" if color else text

        lines = [paint(_BOLD, "Tensor Closeness Check Results:"), "==============================="]
        for level in self.levels:
            code, verdict = _VERDICTS[level.status]
            lines += [
                f"{paint(_BOLD, 'Epsilon:')} {_rust_exp(level.epsilon)}",
                f"  Close elements: {level.close}/{level.total} ({level.percentage:.2f}%)",
                f"  {paint(code, f'[{level.status}]')} {verdict}",
                "",
            ]
        lines.append(paint(_BOLD, "Closeness check complete."))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def check_closeness(
    output: Tensor[Any, Any, Float],
    expected: Tensor[Any, Any, Float],
    *,
    require: float | None = None,
    file: TextIO | None = None,
) -> ClosenessReport:
    """Print Burn's closeness report of ``output`` against ``expected`` and return it.

    Both are Float tensors of the same shape. The report goes to ``file``
    (standard output by default), coloured when that is a terminal and
    ``NO_COLOR`` is unset. With ``require``, raises ``AssertionError`` (with the
    report) unless every element is within ``require`` (a positive number; it
    need not be one of ``EPSILONS``).

    Raises:
        ShapeError: the shapes differ.
        KindError: a tensor is not Float.
        ValueError: ``require`` is not a positive finite number.
        AssertionError: some element is not within ``require``.

    Example:
        >>> import io
        >>> from ferrum import Tensor, check_closeness
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> out = Tensor.from_floats([1.0, 2.0, 6.001, 7.002], device)
        >>> ref = Tensor.from_floats([1.0, 2.0, 6.0, 7.001], device)
        >>> text = io.StringIO()
        >>> report = check_closeness(out, ref, require=1e-2, file=text)
        >>> for line in text.getvalue().splitlines()[14:17]:
        ...     print(line)
        Epsilon: 1e-4
          Close elements: 2/4 (50.00%)
          [FAIL] Significant differences detected
    """
    for name, tensor in (("output", output), ("expected", expected)):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"check_closeness: {name} must be a Tensor, found {type(tensor).__name__}")
        if tensor.kind is not Float:
            found = tensor.kind.__name__
            raise KindError(f"check_closeness: {name} must be a Float tensor, found kind {found}")
    if output.dims() != expected.dims():
        raise ShapeError(
            f"check_closeness: output has shape {list(output.dims())}, expected has {list(expected.dims())}"
        )
    if require is not None and (
        isinstance(require, bool) or not isinstance(require, (int, float)) or not 0 < require < math.inf
    ):
        raise ValueError(f"check_closeness: require must be a positive finite number, found {require!r}")
    report = ClosenessReport(tuple(_measure(output, expected, eps) for eps in EPSILONS))
    stream = sys.stdout if file is None else file
    print(report.render(color=_wants_color(stream)), file=stream)
    if require is not None:
        level = _measure(output, expected, float(require))
        if level.close != level.total:
            raise AssertionError(
                f"check_closeness: {level.total - level.close} of {level.total} elements differ by more than"
                f" {require!r} (|output - expected| <= eps + eps * |expected|)\n{report}"
            )
    return report


def _measure(
    output: Tensor[Any, Any, Float], expected: Tensor[Any, Any, Float], eps: float
) -> ClosenessLevel:
    close = output.is_close(expected, rtol=eps, atol=eps)
    return ClosenessLevel(eps, int(close.to_numpy().sum()), output.num_elements())


def _rust_exp(value: float) -> str:
    """``value`` as Rust's ``{:e}`` writes it: shortest digits, ``1e-1``, ``2.5e-3``."""
    sign, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    if not isinstance(exponent, int):  # NaN or an infinity
        return repr(value)
    mantissa = "".join(map(str, digits))
    power = exponent + len(mantissa) - 1
    body = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if sign else ''}{body}e{power}"


def _wants_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False
