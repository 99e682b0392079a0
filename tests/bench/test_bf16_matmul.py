"""Smoke test of benches/bf16_matmul.py: the tiny run prints its rows and speed-ups (no timing checks)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.scripts import run_bench


def test_tiny_run_prints_every_row(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    out = run_bench("bf16_matmul.py", "--tiny", "--json", str(path))
    assert "matmul 64" in out and "MLP 64-256-64 b8" in out
    assert out.count("over ferrum f32") == 2
    rows = json.loads(path.read_text())["rows"]
    for row in ("matmul 64", "MLP 64-256-64 b8"):
        for candidate in ("ferrum bf16", "ferrum f32"):
            assert rows[f"{row} {candidate}"]["GF/s"] > 0
