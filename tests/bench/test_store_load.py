"""Smoke test of benches/store_load.py: the tiny run prints its table (no timing checks)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benches" / "store_load.py"


def test_store_load_tiny_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--tiny", "--torch-python", ""],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("read", "safetensors", "ferrum"))]
    assert len(rows) == 7, proc.stdout
    assert all(float(row.split()[-1]) > 0 for row in rows), proc.stdout
