"""Smoke test of benches/onnx_real.py: one round of one case prints its row (no timing checks)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benches" / "onnx_real.py"


def test_one_round_prints_the_case_row() -> None:
    args = ["--rounds", "1", "--only", "squeezenet-ts"]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("squeezenet-ts")]
    assert len(rows) == 1, proc.stdout
    assert int(rows[0][1]) > 10 and float(rows[0][2]) > 0, proc.stdout
