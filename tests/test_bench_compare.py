"""Smoke test of benches/compare.py: it runs and prints the tiny-op rows (no timing checks)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benches" / "compare.py"


def test_compare_quick_tiny_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--only", "tiny"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
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
