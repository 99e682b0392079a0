"""Smoke test of benches/quantized_linear.py: the tiny run prints its rows and ratios (no timing checks)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.scripts import run_bench


def test_tiny_run_prints_every_row(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    out = run_bench("quantized_linear.py", "--tiny", "--json", str(path))
    for case in ("MLP 64-256-64 b8", "linear 64->256 b8", "linear 256->64 b8"):
        assert case in out
    assert out.count("ferrum int8 / ferrum f32") == 3
    rows = json.loads(path.read_text())["rows"]
    assert {"MLP 64-256-64 b8 ferrum f32", "MLP 64-256-64 b8 ferrum int8"} <= set(rows)
    assert all(row["p50 ms"] > 0 for row in rows.values())
