"""ferrum.check_closeness: Burn 0.20.1's report (crates/burn-tensor/src/tensor/report.rs, whose doc
comment shows the output for the example used below), counts against NumPy's ``isclose``,
``require`` and the errors."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from ferrum import DType, KindError, ShapeError, Tensor, check_closeness
from ferrum.backend import NdArray
from ferrum.tensor.report import EPSILONS, ClosenessLevel, ClosenessReport

DEVICE = NdArray.device()

BURN_OUTPUT = [1.0, 2.0, 3.0, 4.0, 5.0, 6.001, 7.002, 8.003, 9.004, 10.1]
BURN_EXPECTED = [1.0, 2.0, 3.0, 4.000, 5.0, 6.0, 7.001, 8.002, 9.003, 10.004]

# The text in Burn's doc comment of check_closeness for these tensors.
BURN_REPORT = """Tensor Closeness Check Results:
===============================
Epsilon: 1e-1
  Close elements: 10/10 (100.00%)
  [PASS] All elements are within tolerance

Epsilon: 1e-2
  Close elements: 10/10 (100.00%)
  [PASS] All elements are within tolerance

Epsilon: 1e-3
  Close elements: 9/10 (90.00%)
  [WARN] Most elements are within tolerance

Epsilon: 1e-4
  Close elements: 6/10 (60.00%)
  [FAIL] Significant differences detected

Epsilon: 1e-5
  Close elements: 5/10 (50.00%)
  [FAIL] Significant differences detected

Epsilon: 1e-6
  Close elements: 5/10 (50.00%)
  [FAIL] Significant differences detected

Epsilon: 1e-7
  Close elements: 5/10 (50.00%)
  [FAIL] Significant differences detected

Epsilon: 1e-8
  Close elements: 5/10 (50.00%)
  [FAIL] Significant differences detected

Closeness check complete.
"""


def test_burn_documented_report() -> None:
    out = io.StringIO()
    report = check_closeness(
        Tensor.from_floats(BURN_OUTPUT, DEVICE), Tensor.from_floats(BURN_EXPECTED, DEVICE), file=out
    )
    assert out.getvalue() == BURN_REPORT
    assert str(report) + "\n" == BURN_REPORT
    assert [level.epsilon for level in report.levels] == list(EPSILONS)
    assert report.tightest_passing() == 1e-2


def test_prints_to_stdout_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    check_closeness(Tensor.from_floats(BURN_OUTPUT, DEVICE), Tensor.from_floats(BURN_EXPECTED, DEVICE))
    assert capsys.readouterr().out == BURN_REPORT


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
def test_counts_match_numpy_isclose(dtype: DType) -> None:
    rng = np.random.default_rng(4)
    expected = rng.normal(size=(6, 7))
    # Errors spread over many scales, so each tolerance splits the elements differently.
    output = expected + rng.normal(size=(6, 7)) * 10.0 ** rng.uniform(-9, 0, size=(6, 7))
    np_dtype: Any = np.float32 if dtype == DType.F32 else np.float64
    a: Any = output.astype(np_dtype)
    b: Any = expected.astype(np_dtype)
    tensors = Tensor.from_numpy(a, DEVICE, dtype=dtype), Tensor.from_numpy(b, DEVICE, dtype=dtype)
    report = check_closeness(*tensors, file=io.StringIO())
    for level in report.levels:
        eps = level.epsilon
        # |a - b| <= atol + rtol * |b|, in the tensors' dtype, with rtol = atol = eps.
        want = np.abs(a - b) <= np_dtype(eps) + np_dtype(eps) * np.abs(b)
        assert (level.close, level.total) == (int(want.sum()), 42), eps


def test_status_thresholds() -> None:
    assert ClosenessLevel(1e-3, 10, 10).status == "PASS"
    assert ClosenessLevel(1e-3, 9, 10).status == "WARN"
    assert ClosenessLevel(1e-3, 899, 1000).status == "FAIL"
    assert ClosenessLevel(1e-3, 0, 0).status == "PASS" and ClosenessLevel(1e-3, 0, 0).percentage == 100.0


def test_nan_is_never_close() -> None:
    report = check_closeness(
        Tensor.from_floats([1.0, float("nan")], DEVICE), Tensor.from_floats([1.0, float("nan")], DEVICE),
        file=io.StringIO(),
    )
    assert all((level.close, level.total) == (1, 2) for level in report.levels)
    assert report.tightest_passing() is None


def test_require_passes_and_raises() -> None:
    out, ref = Tensor.from_floats(BURN_OUTPUT, DEVICE), Tensor.from_floats(BURN_EXPECTED, DEVICE)
    assert check_closeness(out, ref, require=1e-2, file=io.StringIO()).level(1e-2).status == "PASS"
    # Not one of the report's tolerances: measured on its own.
    check_closeness(out, ref, require=0.02, file=io.StringIO())
    with pytest.raises(AssertionError, match=r"1 of 10 elements differ by more than 0\.001") as raised:
        check_closeness(out, ref, require=1e-3, file=io.StringIO())
    assert "Tensor Closeness Check Results:" in str(raised.value)
    with pytest.raises(ValueError, match="require must be a positive finite number, found 0"):
        check_closeness(out, ref, require=0, file=io.StringIO())


def test_color_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, ref = Tensor.from_floats([1.0, 2.0], DEVICE), Tensor.from_floats([1.0, 2.05], DEVICE)
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = Terminal()
    check_closeness(out, ref, file=tty)
    assert "\x1b[1mTensor Closeness Check Results:\x1b[0m" in tty.getvalue()
    assert "\x1b[31m[FAIL]\x1b[0m Significant differences detected" in tty.getvalue()
    assert "\x1b[32m[PASS]\x1b[0m" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    check_closeness(out, ref, file=plain)
    assert "\x1b[" not in plain.getvalue()


def test_report_lookup() -> None:
    report = ClosenessReport((ClosenessLevel(1e-1, 3, 4), ClosenessLevel(2.5e-3, 4, 4)))
    assert report.level(2.5e-3).close == 4
    assert "Epsilon: 2.5e-3" in str(report)
    with pytest.raises(KeyError, match=r"no closeness measured at epsilon 0\.5; measured: 1e-1, 2\.5e-3"):
        report.level(0.5)


def test_bad_inputs() -> None:
    a: Any = Tensor.zeros((2, 3), DEVICE)
    with pytest.raises(ShapeError, match=r"output has shape \[2, 3\], expected has \[3, 2\]"):
        check_closeness(a, Tensor.zeros((3, 2), DEVICE), file=io.StringIO())
    with pytest.raises(KindError, match="expected must be a Float tensor, found kind Int"):
        check_closeness(a, a.int(), file=io.StringIO())
    with pytest.raises(TypeError, match="output must be a Tensor, found list"):
        check_closeness([1.0], a, file=io.StringIO())  # type: ignore[arg-type]
