"""Smoke test of benches/module_plan.py: one round of the smallest case prints its row (no timing checks)."""

from tests.bench.scripts import run_bench


def test_one_round_prints_the_case_row() -> None:
    out = run_bench("module_plan.py", "--rounds", "1", "--only", "encoder b1")
    rows = [line.split() for line in out.splitlines() if line.startswith("encoder b1 s16")]
    assert len(rows) == 1, out
    eager_ms, plan_ms, kernels_ms = (float(v) for v in rows[0][3:6])
    assert eager_ms > 0 and plan_ms > 0 and 0 < kernels_ms, out
