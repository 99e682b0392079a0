"""benches/harness.py's timing pieces on their own: the order ``alternate`` runs candidates in,
the measures, and the figures ``Stats``, ``round_ratios`` and ``median_range`` derive (checked
against NumPy and hand-computed values)."""

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benches"))
from harness import (
    Stats,
    alternate,
    bench_parser,
    lower_is_better,
    median_of,
    median_range,
    percentile,
    reported,
    round_ratios,
)


def _recorder(calls: list[str], name: str, seconds: float = 1.0) -> Callable[[], float]:
    """A candidate that notes its turn in ``calls`` and reports ``seconds``."""

    def run() -> float:
        calls.append(name)
        return seconds

    return run


def test_alternate_warms_up_then_takes_turns_in_order() -> None:
    calls: list[str] = []
    names = ("a", "b", "c")
    candidates = {n: _recorder(calls, n, i + 1.0) for i, n in enumerate(names)}
    stats = alternate(candidates, 2, warmup=1, measure=reported)
    assert calls == ["a", "b", "c"] + ["a", "b", "c"] * 2
    assert [stats[n].times_s for n in names] == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]


def test_alternate_rotates_the_first_candidate_each_round() -> None:
    calls: list[str] = []
    alternate({n: _recorder(calls, n) for n in "abc"}, 4, measure=reported, rotate=True)
    assert calls == list("abc" "bca" "cab" "abc")


def test_alternate_refuses_no_rounds() -> None:
    with pytest.raises(ValueError, match="rounds must be at least 1, got 0"):
        alternate({"a": lambda: None}, 0)


def test_reported_wants_seconds_back() -> None:
    assert reported(lambda: 2) == 2.0
    with pytest.raises(TypeError, match="returns its seconds, found NoneType"):
        reported(lambda: None)


def test_median_of_warms_up_and_times_each_call() -> None:
    count = [0]

    def call() -> None:
        count[0] += 1

    seconds = median_of(5, warmup=2)(call)
    assert count[0] == 7 and 0 <= seconds < 0.1
    with pytest.raises(ValueError, match="calls must be at least 1, got 0"):
        median_of(0)


def test_stats_and_percentiles_match_numpy() -> None:
    times = [0.5, 0.1, 0.4, 0.2, 0.3, 0.9]
    stats = Stats(times)
    for q in (0.0, 10.0, 37.5, 50.0, 100.0):
        assert percentile(times, q) == pytest.approx(float(np.percentile(times, q)))
    summary = stats.summary()
    assert summary["best_s"] == 0.1 and summary["worst_s"] == 0.9 and summary["runs"] == 6
    assert summary["p10_s"] == pytest.approx(float(np.percentile(times, 10)))
    assert stats.median == pytest.approx(0.35)
    assert summary["spread"] == pytest.approx((0.9 - 0.1) / 0.35)


def test_round_ratios_pair_rounds_and_median_range_formats_them() -> None:
    ratios = round_ratios(Stats([2.0, 3.0, 8.0]), Stats([1.0, 2.0, 2.0]))
    assert ratios == [2.0, 1.5, 4.0]
    assert median_range(ratios) == "2.00 (1.50-4.00)"
    with pytest.raises(ValueError):
        round_ratios(Stats([1.0]), Stats([1.0, 2.0]))


@pytest.mark.parametrize(
    ("metric", "lower"),
    [("ms", True), ("ferrum us", True), ("median s", True), ("MB/s", False), ("ferrum GF/s", False),
     ("samples/s", False), ("ratio", None), ("numpy/ferrum", None), ("peak MiB", None), ("%", None),
     ("us per step", None)],
)  # fmt: skip
def test_lower_is_better_reads_the_unit(metric: str, lower: bool | None) -> None:
    assert lower_is_better(metric) is lower


def test_bench_parser_gives_every_suite_the_shared_options() -> None:
    parser = bench_parser("A suite.\n\nMore.", rounds=7)
    args = parser.parse_args(["--tiny", "--json", "out.json"])
    assert (args.tiny, args.rounds, args.json, args.compare_with) == (True, 7, "out.json", None)
    assert not hasattr(args, "repeat")
    assert parser.description == "A suite.\n\nMore."
    repeat = bench_parser(None, repeat=3)
    assert repeat.parse_args([]).repeat == 3 and repeat.parse_args(["--repeat", "5"]).repeat == 5
    assert not hasattr(repeat.parse_args([]), "rounds")
    with pytest.raises(SystemExit):
        repeat.parse_args(["--rounds", "2"])
