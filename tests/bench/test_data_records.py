"""Smoke test of benches/data_records.py: the tiny run prints both tables (no timing checks)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benches" / "data_records.py"


def test_data_records_tiny_runs() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--tiny"], capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    loader_rows = [line.split() for line in lines if line.split()[:1] in (["0"], ["1"], ["2"])]
    assert [row[0] for row in loader_rows] == ["0", "1", "2"], proc.stdout
    assert all(float(row[1]) > 0 and row[2].endswith("x") for row in loader_rows), proc.stdout
    record_rows = [
        line.split() for line in lines if line.endswith(tuple("0123456789")) and "Recorder" in line
    ]
    # 6 recorders x (Full, Half): name, precision, save ms, load ms, size MB, MB/s
    assert len(record_rows) == 12, proc.stdout
    assert {row[1] for row in record_rows} == {"Full", "Half"}, proc.stdout
    assert all(len(row) == 6 and float(row[4]) > 0 for row in record_rows), proc.stdout
