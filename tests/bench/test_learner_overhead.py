"""Smoke test of benches/learner_overhead.py: the tiny run prints both tables (no timing checks)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benches" / "learner_overhead.py"


def test_learner_overhead_tiny_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(SCRIPT), "--tiny"], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        if line.strip():
            rows.setdefault(line.split()[0], line.split())
    assert float(rows["hand+metrics"][1]) > 0 and rows["learner"][3].endswith("x"), proc.stdout
    assert "Learner overhead:" in proc.stdout and proc.stdout.rstrip().splitlines()[-1].startswith("ratio ")
