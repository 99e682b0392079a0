"""Smoke test of benches/data_records.py: the tiny run prints both tables (no timing checks)."""

from tests.bench.scripts import run_bench


def test_data_records_tiny_runs() -> None:
    out = run_bench("data_records.py", "--tiny")
    lines = out.splitlines()
    loader_rows = [line.split() for line in lines if line.split()[:1] in (["0"], ["1"], ["2"])]
    assert [row[0] for row in loader_rows] == ["0", "1", "2"], out
    assert all(float(row[1]) > 0 and row[2].endswith("x") for row in loader_rows), out
    record_rows = [
        line.split() for line in lines if line.endswith(tuple("0123456789")) and "Recorder" in line
    ]
    # 6 recorders x (Full, Half): name, precision, save ms, load ms, size MB, MB/s
    assert len(record_rows) == 12, out
    assert {row[1] for row in record_rows} == {"Full", "Half"}, out
    assert all(len(row) == 6 and float(row[4]) > 0 for row in record_rows), out
