"""Smoke test of benches/onnx_resnet50.py: one round at batch 1 prints ferrum's row and records it with
``--json`` (no timing checks; onnxruntime is no test dependency: without it its column is a dash)."""

import importlib.util
import json
from pathlib import Path

import pytest

from tests.bench.scripts import run_bench


def test_one_round_prints_the_batch_row(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    path = tmp_path / "resnet.json"
    args = ["--batches", "1", "--rounds", "1", "--repeats", "1", "--json", str(path)]
    out = run_bench("onnx_resnet50.py", *args)
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["1"]]
    assert len(rows) == 1, out
    assert float(rows[0][1]) > 0, out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["suite"] == "onnx_resnet50" and data["settings"]["batches"] == [1], data
    row = data["rows"]["batch 1"]
    assert abs(row["ferrum ms"] - float(rows[0][1])) <= 0.051, (row, out)
    if importlib.util.find_spec("onnxruntime") is None:
        assert rows[0][2] == "-" and set(row) == {"ferrum ms"}, (row, out)
    else:
        # one round: the ratio is the two medians'
        assert abs(row["ferrum/ort"] - row["ferrum ms"] / row["onnxruntime ms"]) <= 1e-9, row
        assert abs(row["onnxruntime ms"] - float(rows[0][2])) <= 0.051, (row, out)
