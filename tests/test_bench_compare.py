"""Smoke test of benches/compare.py: it runs and prints the tiny-op rows (no timing checks)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benches" / "compare.py"


def run_compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_compare_quick_tiny_runs() -> None:
    proc = run_compare("--quick", "--only", "tiny")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("workload") and "numpy/ferrum" in line for line in lines), proc.stdout
    rows = [line for line in lines if line.startswith("tiny add [4]")]
    assert len(rows) == 1, proc.stdout
    cells = rows[0].split()
    # workload (3 words), ferrum/numpy/torch microseconds, two ratios
    assert len(cells) == 8, rows[0]
    float(cells[3])  # ferrum and numpy always have a time
    float(cells[4])
    assert cells[6].endswith("x"), rows[0]
    assert any(line.startswith("tiny exp [4]") for line in lines), proc.stdout
    assert not any(line.startswith(("matmul", "softmax")) for line in lines), proc.stdout


def test_compare_repeat_prints_each_pass_and_the_median_ratio() -> None:
    proc = run_compare("--quick", "--only", "tiny add", "--no-torch", "--repeat", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert [line for line in lines if line.startswith("pass ")] == ["pass 1 of 2", "pass 2 of 2"], proc.stdout
    summary = lines[lines.index("median over 2 passes (each pass's ratio, then the median):") + 1 :]
    row = next(line for line in summary if line.startswith("tiny add [4]"))
    # name, NumPy's two ratios, their median, then torch's (absent): "-" twice
    cells = row.split("  ")
    assert cells[0] == "tiny add [4]", row
    ratios = [float(r) for r in cells[1].split()]
    assert len(ratios) == 2 and all(r > 0 for r in ratios), row
    low, high = sorted(ratios)
    assert cells[2].endswith("x") and abs(float(cells[2][:-1]) - (low + high) / 2) < 0.006, row
    assert cells[3:] == ["-", "-"], row


def test_compare_refuses_a_repeat_count_below_one() -> None:
    proc = run_compare("--repeat", "0")
    assert proc.returncode == 2
    assert "expected a count of at least 1, found 0" in proc.stderr
