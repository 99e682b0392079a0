"""Smoke test of benches/distributed_scaling.py on two MPI ranks: rank 0 alone prints each line and writes
``--json`` (no timing checks)."""

import json
from pathlib import Path

import pytest

from tests.bench.scripts import run_bench
from tests.support.mpi import find_mpiexec


def test_two_ranks_tiny_run_prints_and_writes_once(tmp_path: Path) -> None:
    pytest.importorskip("mpi4py")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        pytest.skip("mpiexec not found beside the interpreter or on PATH")
    path = tmp_path / "distributed.json"
    out = run_bench("distributed_scaling.py", "--tiny", "--json", str(path), launcher=[mpiexec, "-n", "2"])
    lines = [line for line in out.splitlines() if line.startswith("ranks 2")]
    # one line per measurement: printed by rank 0 only
    assert len(lines) == 3, out
    assert out.count("results written to") == 1, out
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    encoder = "encoder d256 L4 s128, batch 16/rank"
    assert list(rows) == ["all_reduce 1 MB", "guide CNN, batch 64/rank", encoder], rows
    assert rows["all_reduce 1 MB"]["ms"] > 0 and rows["all_reduce 1 MB"]["exchange ms"] > 0, rows
    printed = float(lines[1].split()[-2])
    assert abs(rows["guide CNN, batch 64/rank"]["samples/s"] - printed) <= 0.51, (rows, out)
