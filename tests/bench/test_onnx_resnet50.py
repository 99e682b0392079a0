"""Smoke test of benches/onnx_resnet50.py: one round at batch 1 prints ferrum's row (no timing checks;
onnxruntime is not installed in the test environment, so its column is a dash)."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benches" / "onnx_resnet50.py"


def test_one_round_prints_the_batch_row() -> None:
    pytest.importorskip("onnx")
    args = ["--batches", "1", "--rounds", "1", "--repeats", "1"]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] == ["1"]]
    assert len(rows) == 1, proc.stdout
    assert float(rows[0][1]) > 0, proc.stdout
