"""Smoke test of benches/learner_overhead.py: the tiny run prints both tables (no timing checks), and
``--json`` / ``--compare-with`` record its rows and compare them with an earlier run."""

import json
from pathlib import Path

from tests.bench.scripts import compared, run_bench


def _tiny(*args: str) -> str:
    return run_bench("learner_overhead.py", "--tiny", *args, python_flags=["-W", "error"])


def _first_rows(out: str) -> dict[str, list[str]]:
    """Each printed line, split, by its first word; the first such line (the epoch table's ``hand``)."""
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.strip():
            rows.setdefault(line.split()[0], line.split())
    return rows


def test_learner_overhead_tiny_runs() -> None:
    out = _tiny()
    rows = _first_rows(out)
    assert float(rows["hand+metrics"][1]) > 0 and rows["learner"][3].endswith("x"), out
    assert "Learner overhead:" in out and out.rstrip().splitlines()[-1].startswith("ratio "), out


def test_learner_overhead_json_and_compare(tmp_path: Path) -> None:
    old_path = tmp_path / "old.json"
    out = _tiny("--json", str(old_path))
    data = json.loads(old_path.read_text(encoding="utf-8"))
    assert data["suite"] == "learner_overhead" and data["settings"]["rounds"] == 1, data
    assert data["machine"]["cpu"] and data["machine"]["cores"] >= 1, data
    rows = data["rows"]
    assert list(rows)[:3] == ["hand", "hand+metrics", "learner"], rows
    printed = _first_rows(out)
    for name in ("hand", "hand+metrics", "learner"):
        assert abs(float(printed[name][1]) - rows[name]["median s"]) <= 0.0005, (name, out, rows)
        assert data["stats"][name]["runs"] == 1, data["stats"]
    # one round: a round's ratio is the ratio of the epochs' times
    for name, denominator in (("hand+metrics", "hand"), ("learner", "hand+metrics")):
        expected = rows[name]["median s"] / rows[denominator]["median s"]
        assert abs(rows[name]["ratio"] - expected) <= 1e-9, (name, rows)
    overhead = rows["Learner overhead"]
    assert abs(overhead["%"] - 100 * (rows["learner"]["ratio"] - 1)) <= 1e-6, rows
    own = rows["Learner loop per step"]["us"] - rows["metric updates per step"]["us"]
    assert abs(rows["Learner's own work"]["us per step"] - own) <= 1e-6, rows
    assert rows["metric updates per step"]["us"] > 0 and rows["learner launch"]["median s"] > 0, rows

    out = _tiny("--compare-with", str(old_path))
    assert "compared with an earlier run of learner_overhead" in out, out
    lines = compared(out)
    metrics = {" ".join(cells[:-4]) for cells in lines}
    # times only (seconds, microseconds); ratios, shares and differences are left out
    assert {"hand median s", "learner min s", "metric updates per step us"} <= metrics, out
    assert not any("ratio" in m or "%" in m or "own work" in m for m in metrics), out
    assert all(float(cells[-2]) > 0 for cells in lines), out
