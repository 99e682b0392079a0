"""Smoke test of benches/onnx_real.py: one round of one case prints its row (no timing checks)."""

from tests.bench.scripts import run_bench


def test_one_round_prints_the_case_row() -> None:
    out = run_bench("onnx_real.py", "--rounds", "1", "--only", "squeezenet-ts")
    rows = [line.split() for line in out.splitlines() if line.startswith("squeezenet-ts")]
    assert len(rows) == 1, out
    assert int(rows[0][1]) > 10 and float(rows[0][2]) > 0, out
