"""Smoke test of benches/vision.py: the tiny run prints and records every row (no timing checks)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.scripts import run_bench


def test_tiny_run_prints_every_row(tmp_path: Path) -> None:
    path = tmp_path / "vision.json"
    out = run_bench("vision.py", "--tiny", "--json", str(path))
    cases = [
        "dilate u8 48x48x1 rect 5x5",
        "dilate u8 48x48x1 ellipse 5x5",
        "erode f32 48x48x3 cross 3x3",
        "connected components 4 48x48",
        "connected components 8 48x48",
        "nms 64 boxes",
    ]
    for case in cases:
        assert case in out
    rows = json.loads(path.read_text())["rows"]
    assert {f"{case} ferrum" for case in cases} <= set(rows)
    assert all(row["p50 ms"] > 0 for row in rows.values())
