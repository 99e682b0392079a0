"""Smoke test of benches/int8_paths.py: the tiny run times both paths in child processes (no timing)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.scripts import run_bench


def test_tiny_run_times_both_paths_and_writes_json(tmp_path: Path) -> None:
    path = tmp_path / "paths.json"
    out = run_bench("int8_paths.py", "--tiny", "--json", str(path))
    assert "linear 64->256 b8" in out and "amx/vnni" in out
    report = json.loads(path.read_text())
    assert report["suite"] == "int8_paths"
    rows = report["rows"]
    assert set(rows) == {"linear 64->256 b8 amx", "linear 64->256 b8 vnni"}
    assert all(row["p50 ms"] > 0 for row in rows.values())
    assert all(report["stats"][name]["runs"] == 1 for name in rows)
