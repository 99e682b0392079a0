"""benches/harness.py through a script that uses it: ``--json`` writes the rows with
the machine's CPU model, ``--compare-with`` prints new/old against that file."""

import json
from pathlib import Path

from tests.bench.scripts import compared, run_bench


def _run(script: str, *args: str) -> str:
    return run_bench(script, "--tiny", *args)


def test_json_records_the_machine_and_compares(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    _run("store_load.py", "--torch-python", "", "--json", str(old))
    data = json.loads(old.read_text(encoding="utf-8"))
    assert data["suite"] == "store_load"
    assert isinstance(data["machine"]["cpu"], str) and data["machine"]["cpu"]
    assert data["machine"]["cores"] >= 1
    assert data["ferrum"] and data["date"]
    assert data["settings"]["repeat"] == 1
    rows = data["rows"]
    assert len(rows) == 7, rows
    assert all(row["ms"] > 0 and row["MB/s"] > 0 for row in rows.values()), rows
    assert set(data["stats"]["read bytes (.bpk)"]) >= {"best_s", "p10_s", "p50_s", "spread"}

    out = _run("store_load.py", "--torch-python", "", "--compare-with", str(old))
    assert "compared with an earlier run of store_load" in out, out
    ratios = compared(out)
    # 7 rows x (ms, MB/s); the file size is no speed and is left out
    assert len(ratios) == 14, out
    assert all(float(row[-2]) > 0 for row in ratios), out


def test_image_folder_json(tmp_path: Path) -> None:
    path = tmp_path / "images.json"
    out = _run("image_folder.py", "--json", str(path))
    assert [line.split()[0] for line in out.splitlines()[2:4]] == ["0", "2"], out
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    assert set(rows) == {"0 workers", "2 workers"}, rows
    assert all(
        row["best images/s"] >= row["median images/s"] >= row["worst images/s"] > 0 for row in rows.values()
    )
