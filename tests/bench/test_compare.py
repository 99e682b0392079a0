"""Smoke tests of benches/compare.py in quick mode, without torch: every table
prints, and the figures derived from the timings (rates, percentiles, medians,
memory growth) agree with each other (no timing checks)."""

import statistics
import subprocess

import pytest

from tests.bench.scripts import bench_process

Rows = list[tuple[str, list[str]]]


def run_compare(*args: str) -> subprocess.CompletedProcess[str]:
    return bench_process("compare.py", *args)


def table(lines: list[str], title: str, cells: int) -> Rows:
    """The rows of the table printed under the line starting with ``title``
    (after its header and dashes, up to a blank line): each row's name (which
    may hold spaces) and its last ``cells`` cells."""
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    first = start + 1
    while not lines[first].startswith("---"):
        first += 1
    rows: Rows = []
    for line in lines[first + 1 :]:
        if not line.strip():
            break
        parts = line.rsplit(maxsplit=cells)
        name = parts[0] if len(parts) > cells else ""
        rows.append((name, parts[-cells:]))
    return rows


def close(shown: str, value: float, decimals: int) -> bool:
    """Whether ``shown`` is ``value`` rounded to ``decimals`` places."""
    return abs(float(shown.rstrip("x")) - value) <= 0.51 * 10.0**-decimals


def rate_matches(shown_rate: str, shown_us: str, work: int) -> bool:
    """Whether ``shown_rate`` (one decimal) is ``work`` per microsecond / 1e3 for
    a time that rounds to ``shown_us``."""
    decimals = len(shown_us.partition(".")[2])
    half = 0.5 * 10.0**-decimals
    t = float(shown_us)
    low, high = work / (t + half) / 1e3, work / (t - half) / 1e3
    return low - 0.051 <= float(shown_rate) <= high + 0.051


def test_compare_quick_tiny_runs() -> None:
    proc = run_compare("--quick", "--only", "tiny")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("workload") and "numpy/ferrum" in line for line in lines), proc.stdout
    rows = [line for line in lines if line.startswith("tiny add [4]")]
    assert len(rows) == 1, proc.stdout
    cells = rows[0].split()
    # workload (3 words), ferrum/numpy/torch microseconds, two ratios
    assert len(cells) == 8, rows[0]
    float(cells[3])  # ferrum and numpy always have a time
    float(cells[4])
    assert cells[6].endswith("x"), rows[0]
    assert any(line.startswith("tiny exp [4]") for line in lines), proc.stdout
    assert not any(line.startswith(("matmul", "softmax", "peak RSS")) for line in lines), proc.stdout
    assert not any(line.startswith(("throughput", "per-call")) for line in lines), proc.stdout
    assert lines[-1].startswith("load average at the end: "), proc.stdout


def test_compare_matmul_rows_report_rates_and_per_call_percentiles() -> None:
    proc = run_compare("--quick", "--only", "matmul mlp", "--no-torch")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    # the MLP's forward and its two backward products, as stored and viewed
    flops = {
        "matmul mlp fwd b64 [64,784]x[784,512]": 2 * 64 * 784 * 512,
        "matmul mlp dX b64 [64,512]x[784,512]^T": 2 * 64 * 512 * 784,
        "matmul mlp dW b64 [64,784]^Tx[64,512]": 2 * 784 * 64 * 512,
    }
    main = dict(table(lines, "workload", 5))
    assert sorted(main) == sorted(flops), proc.stdout
    rates = dict(table(lines, "throughput", 4))
    assert sorted(rates) == sorted(flops), proc.stdout
    for name, work in flops.items():
        ferrum_us, numpy_us, torch_us = main[name][:3]
        assert torch_us == "-" and rates[name][2] == "-" and rates[name][3] == "GF/s", proc.stdout
        for shown_us, shown_rate in ((ferrum_us, rates[name][0]), (numpy_us, rates[name][1])):
            assert rate_matches(shown_rate, shown_us, work), (name, proc.stdout)

    percentiles = table(lines, "per-call GF/s", 6)
    assert [name for name, _ in percentiles] == [n for name in flops for n in (name, "")], proc.stdout
    assert [cells[0] for _, cells in percentiles] == ["ferrum", "numpy"] * 3, proc.stdout
    for _, (_, calls, p10, p50, p90, steadiness) in percentiles:
        assert int(calls) >= 10
        assert float(p10) <= float(p50) <= float(p90), proc.stdout
        # Printed with two decimals: a call slowed 200x by a loaded machine shows 0.00.
        assert 0 <= float(steadiness) <= 1


@pytest.mark.parametrize(
    ("only", "elements"),
    [
        ("mean", {"mean 1K": 1024, "mean 64K": 64 * 1024}),
        ("sum_dim(0)", {"sum_dim(0) [1,1K]": 1024, "sum_dim(0) [64,1K]": 64 * 1024}),
    ],
)
def test_compare_reduction_rows_report_bandwidth(only: str, elements: dict[str, int]) -> None:
    proc = run_compare("--quick", "--only", only, "--no-torch")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    main = dict(table(lines, "workload", 5))
    rates = dict(table(lines, "throughput", 4))
    assert sorted(main) == sorted(rates) == sorted(elements), proc.stdout
    for name, n in elements.items():
        assert rates[name][2:] == ["-", "GB/s"], proc.stdout
        for shown_us, shown_rate in zip(main[name][:2], rates[name][:2], strict=True):
            assert rate_matches(shown_rate, shown_us, 4 * n), (name, proc.stdout)
    assert not any(line.startswith("per-call") for line in lines), proc.stdout


def test_compare_repeat_prints_each_pass_then_the_median_ratio_and_spread() -> None:
    proc = run_compare("--quick", "--only", "matmul f32 64x64", "--no-torch", "--repeat", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    passes = [i for i, line in enumerate(lines) if line.startswith("pass ")]
    assert [lines[i] for i in passes] == ["pass 1 of 3", "pass 2 of 3", "pass 3 of 3"], proc.stdout
    ratios = [float(table(lines[i:], "workload", 5)[0][1][3].rstrip("x")) for i in passes]
    summary = table(lines, "median over 3 passes", 4)
    assert len(summary) == 1, proc.stdout
    name, (median, spread, torch_median, torch_spread) = summary[0]
    assert name == "matmul f32 64x64", proc.stdout
    # the summary works on unrounded ratios, the pass tables show them rounded
    assert median.endswith("x") and close(median, statistics.median(ratios), 2), proc.stdout
    low, high = spread.split("-")
    assert close(low, min(ratios), 2) and close(high, max(ratios), 2), proc.stdout
    assert (torch_median, torch_spread) == ("-", "-"), proc.stdout

    medians = table(lines, "per-call GF/s of the matmul rows, each figure the median over 3 passes", 6)
    per_pass = [table(lines[i:], "per-call GF/s", 6) for i in passes]
    assert [cells[0] for _, cells in medians] == ["ferrum", "numpy"], proc.stdout
    for row, (_, cells) in enumerate(medians):
        for column in (2, 3, 4, 5):  # p10, p50, p90, p10/p50
            values = [float(p[row][1][column]) for p in per_pass]
            assert close(cells[column], statistics.median(values), 2 if column == 5 else 1), proc.stdout


def test_compare_memory_runs_the_training_step_in_a_child_process() -> None:
    proc = run_compare("--quick", "--memory", "--only", "no such row", "--no-torch")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert not any(line.startswith("workload") for line in lines), proc.stdout
    title = next(line for line in lines if line.startswith("peak RSS cnn guide adam step b64"))
    assert "10 steps" in title, proc.stdout
    rows = {line.split()[0]: line.split() for line in lines if line.startswith(("ferrum ", "torch "))}
    before, peak, growth = (float(v) for v in rows["ferrum"][1:4])
    assert 0 < before <= peak and abs(growth - (peak - before)) <= 0.15, proc.stdout
    assert rows["torch"][1:] == ["-", "-", "-", "(torch", "not", "loaded)"], proc.stdout
    assert lines[-1].startswith("load average at the end: "), proc.stdout


def test_compare_refuses_a_repeat_count_below_one() -> None:
    proc = run_compare("--repeat", "0")
    assert proc.returncode == 2
    assert "expected a count of at least 1, found 0" in proc.stderr


def test_compare_says_when_no_row_matches() -> None:
    proc = run_compare("--quick", "--only", "no such row", "--no-torch")
    assert proc.returncode == 2
    assert "no workload matches --only 'no such row'" in proc.stderr
