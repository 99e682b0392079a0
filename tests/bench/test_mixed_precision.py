"""Smoke test of benches/mixed_precision.py: the tiny run prints both workloads and their ratios."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.scripts import run_bench


def test_tiny_run_prints_both_workloads(tmp_path: Path) -> None:
    path = tmp_path / "mp.json"
    out = run_bench("mixed_precision.py", "--tiny", "--json", str(path))
    assert "guide CNN training step" in out and "transformer encoder training step" in out
    assert out.count("ferrum bf16-mixed / ferrum f32") == 2
    rows = json.loads(path.read_text())["rows"]
    for workload in ("cnn", "encoder"):
        for candidate in ("ferrum f32", "ferrum bf16-mixed"):
            assert rows[f"{workload} {candidate}"]["p50 ms"] > 0
