"""Smoke test of benches/store_load.py: the tiny run prints its table (no timing checks)."""

from tests.bench.scripts import run_bench


def test_store_load_tiny_runs() -> None:
    out = run_bench("store_load.py", "--tiny", "--torch-python", "")
    rows = [line for line in out.splitlines() if line.startswith(("read", "safetensors", "ferrum"))]
    assert len(rows) == 7, out
    assert all(float(row.split()[-1]) > 0 for row in rows), out
