"""benches/compare.py's ``--json`` and ``--compare-with``: the report has the harness's layout, its
figures are the printed table's, and a second run prints new/old per row and time."""

import json
from pathlib import Path
from typing import Any

from tests.bench.scripts import compared, run_bench

ROW = "tiny add [4]"


def run_compare(*args: str) -> str:
    return run_bench("compare.py", "--quick", "--only", ROW, "--no-torch", *args)


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_compare_json_holds_the_table_rows_and_compares(tmp_path: Path) -> None:
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    out = run_compare("--json", str(old_path))
    assert f"results written to {old_path}" in out, out
    old = read(old_path)
    assert old["format"] == 1 and old["suite"] == "compare", old
    assert isinstance(old["machine"]["cpu"], str) and old["machine"]["cores"] >= 1, old
    assert old["settings"]["quick"] is True and old["settings"]["only"] == ROW, old
    assert old["settings"]["torch"] is None and old["settings"]["repeat"] == 1, old
    assert list(old["rows"]) == [ROW], old
    row = old["rows"][ROW]
    assert set(row) == {"ferrum us", "numpy us", "numpy/ferrum"}, row
    # the ratio is the two times' (one pass), and the table shows the same figures rounded
    assert abs(row["numpy/ferrum"] - row["numpy us"] / row["ferrum us"]) < 1e-9 * row["numpy/ferrum"]
    printed = next(line for line in out.splitlines() if line.startswith(ROW)).split()
    ferrum_us, numpy_us, torch_us, ratio = printed[3], printed[4], printed[5], printed[6]
    assert torch_us == "-", printed
    for shown, value in ((ferrum_us, row["ferrum us"]), (numpy_us, row["numpy us"])):
        decimals = len(shown.partition(".")[2])
        assert abs(float(shown) - value) <= 0.51 * 10.0**-decimals, (shown, value)
    assert abs(float(ratio.rstrip("x")) - row["numpy/ferrum"]) <= 0.0051, (ratio, row)

    out = run_compare("--compare-with", str(old_path), "--json", str(new_path))
    new = read(new_path)
    assert f"compared with an earlier run of compare ({old['date']})" in out.splitlines(), out
    by_framework = {cells[-6]: cells for cells in compared(out)}
    # times only: the ratio column is no speed and is left out
    assert sorted(by_framework) == ["ferrum", "numpy"], out
    for framework, cells in by_framework.items():
        metric = f"{framework} us"
        assert cells[-5] == "us", cells
        expected = new["rows"][ROW][metric] / old["rows"][ROW][metric]
        assert abs(float(cells[-2]) - expected) <= 0.0006, (cells, expected)
        faster = "same" if expected == 1 else ("now" if expected < 1 else "then")
        assert cells[-1] == faster, cells
