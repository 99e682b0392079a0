"""What the standalone bench scripts share: timing candidates in alternating
rounds, their statistics, and the report (JSON on disk with the machine it ran
on, and a comparison with an earlier run's JSON).

A script times its candidates with ``alternate`` (each a zero-argument
callable; one call per candidate per round, the candidates taking turns so a
burst of load on the shared machine falls on all of them alike), prints its
table as before, and records each table row in a ``Report``. With
``add_report_args`` its command line gains ``--json PATH`` (write the rows,
the CPU model, core count, date and ferrum version) and ``--compare-with
OLD.json`` (print new/old per row and metric after the table).

``compare_core.py`` stays the engine of ``compare.py``'s framework table
(calibrated loops of fast calls, per-framework columns); this module is for
the scripts whose one call is already long (an epoch, a file load) and
imports neither ferrum nor torch at load time.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Thunk = Callable[[], object]

# JSON files this module writes say which layout they use.
FORMAT = 1

SPIN_SETTLE_S = 0.1
"""A pause before each candidate's turn when the candidates run on thread pools that keep spinning
after a call (onnxruntime's intra-op threads, OpenMP's in torch, ferrum's own team): without it the
candidate that follows runs on one core while the previous one's workers still hold the other."""


# --------------------------------------------------------------------------- timing


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values``, linear between the nearest two."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    pos = (len(ordered) - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class Stats:
    """Seconds of each timed call of one candidate, and what they sum up to.

    ``best`` is the fastest call, ``p10``/``p50`` the 10th and 50th percentile
    (``median`` is ``p50``), ``worst`` the slowest, ``spread`` the fastest to
    slowest range as a fraction of the median.
    """

    times_s: list[float]

    @property
    def best(self) -> float:
        return min(self.times_s)

    @property
    def worst(self) -> float:
        return max(self.times_s)

    @property
    def p10(self) -> float:
        return percentile(self.times_s, 10.0)

    @property
    def p50(self) -> float:
        return percentile(self.times_s, 50.0)

    @property
    def median(self) -> float:
        return statistics.median(self.times_s)

    @property
    def spread(self) -> float:
        return (self.worst - self.best) / self.median if self.median > 0 else 0.0

    def summary(self) -> dict[str, float]:
        return {
            "best_s": self.best,
            "p10_s": self.p10,
            "p50_s": self.p50,
            "worst_s": self.worst,
            "spread": self.spread,
            "runs": float(len(self.times_s)),
        }


Measure = Callable[[Thunk], float]


def time_call(fn: Thunk) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def mean_over(min_s: float) -> Measure:
    """A ``Measure``: mean seconds per call of ``fn`` over back-to-back calls
    lasting at least ``min_s`` in all (for calls too short to time one by one)."""

    def measure(fn: Thunk) -> float:
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_s:
                return elapsed / calls

    return measure


def median_of(calls: int, warmup: int = 1) -> Measure:
    """A ``Measure``: after ``warmup`` untimed calls, the median seconds of
    ``calls`` calls of ``fn`` timed one by one (a round of a few long calls)."""
    if calls < 1:
        raise ValueError(f"calls must be at least 1, got {calls}")

    def measure(fn: Thunk) -> float:
        for _ in range(warmup):
            fn()
        return statistics.median(time_call(fn) for _ in range(calls))

    return measure


def reported(fn: Thunk) -> float:
    """A ``Measure`` for candidates that time themselves: ``fn`` returns the
    seconds it measured (a span inside it, past its setup; a time taken in
    another process)."""
    seconds = fn()
    if not isinstance(seconds, (int, float)):
        raise TypeError(
            f"a candidate timed with harness.reported returns its seconds, found {type(seconds).__name__}"
        )
    return float(seconds)


def alternate(
    candidates: Mapping[str, Thunk],
    rounds: int,
    warmup: int = 0,
    settle_s: float = 0.0,
    measure: Measure = time_call,
    no_gc: bool = False,
    rotate: bool = False,
) -> dict[str, Stats]:
    """Time every candidate ``rounds`` times, the candidates taking turns.

    First each candidate runs ``warmup`` untimed calls (threads, allocator,
    page cache); then each round measures every candidate once, in the
    mapping's order, after a pause of ``settle_s`` seconds (so the previous
    candidate's worker threads stop spinning). ``measure`` gives the seconds of
    one round (by default one call; ``mean_over`` for short calls). A
    candidate's order inside a round is kept, so one may depend on an earlier
    one (a load after its save), and ``Stats.times_s`` are in round order, so
    two candidates' rounds pair up. ``no_gc``: the cyclic garbage collector
    off while measuring (off by default: a script's collections are part of
    what it costs). ``rotate``: round ``r`` starts at the ``r``-th candidate
    (in a ring), so none always runs right after the same other one (for
    independent candidates whose runs leave state behind: caches, threads).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in candidates}
    names = list(candidates)
    for r in range(rounds):
        first = r % len(names) if rotate and names else 0
        for name in names[first:] + names[:first]:
            fn = candidates[name]
            if settle_s:
                time.sleep(settle_s)
            gc_was_on = gc.isenabled()
            if no_gc:
                gc.disable()
            try:
                times[name].append(measure(fn))
            finally:
                if gc_was_on:
                    gc.enable()
    return {name: Stats(ts) for name, ts in times.items()}


def round_ratios(numerator: Stats, denominator: Stats) -> list[float]:
    """Per round, ``numerator``'s time over ``denominator``'s (both from one
    ``alternate`` call, so a round's two times were taken close together: on a
    shared machine their ratio moves less than either time)."""
    return [a / b for a, b in zip(numerator.times_s, denominator.times_s, strict=True)]


def median_range(values: list[float]) -> str:
    """``median (lowest-highest)`` of ratios, two decimals: ``1.37 (1.33-1.54)``."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


# --------------------------------------------------------------------------- machine


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ferrum_version() -> str:
    try:
        import ferrum
    except ImportError:
        return "not importable"
    return str(ferrum.__version__)


def machine() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


# --------------------------------------------------------------------------- report


def bench_parser(
    doc: str | None, *, rounds: int | None = None, repeat: int | None = None
) -> argparse.ArgumentParser:
    """The command line every suite shares: its docstring as help, ``--tiny``, the report options,
    and ``--rounds N`` (alternating rounds) or ``--repeat N`` (timed runs) where a default is given.

    Each suite adds its own options to the parser it gets back.
    """
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="a seconds-long smoke run")
    if rounds is not None:
        parser.add_argument("--rounds", type=int, default=rounds, help="rounds of candidates taking turns")
    if repeat is not None:
        parser.add_argument("--repeat", type=int, default=repeat, help="timed runs per candidate")
    add_report_args(parser)
    return parser


def add_report_args(parser: argparse.ArgumentParser) -> None:
    """``--json PATH`` and ``--compare-with OLD.json`` on a script's command line."""
    parser.add_argument("--json", metavar="PATH", help="write the results, with the machine, as JSON")
    parser.add_argument(
        "--compare-with", metavar="OLD.json", help="print new/old per row against an earlier --json file"
    )


@dataclass
class Report:
    """One run of a suite: its settings and its rows, each row metric -> number
    (``lower_is_better`` tells from a metric's name which way is faster), and
    for timed rows the statistics of their runs."""

    suite: str
    settings: dict[str, Any] = field(default_factory=dict)
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    stats: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, row: str, metrics: Mapping[str, float | None], stats: Stats | None = None) -> None:
        """Record one table row (metrics that are ``None``, not measured, are left out)."""
        self.rows[row] = {k: float(v) for k, v in metrics.items() if v is not None}
        if stats is not None:
            self.stats[row] = stats.summary()

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "suite": self.suite,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "ferrum": ferrum_version(),
            "machine": machine(),
            "settings": self.settings,
            "rows": self.rows,
            "stats": self.stats,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    def finish(self, args: argparse.Namespace) -> None:
        """What ``add_report_args`` asked for: write ``--json``, print ``--compare-with``."""
        if getattr(args, "json", None):
            self.write(args.json)
            print(f"results written to {args.json}")
        if getattr(args, "compare_with", None):
            old = json.loads(Path(args.compare_with).read_text(encoding="utf-8"))
            print()
            for line in compare_lines(self.to_json(), old):
                print(line)


def lower_is_better(metric: str) -> bool | None:
    """Whether a smaller ``metric`` is faster: times (``ms``, ``save ms``, ``best_s``)
    yes, rates (``MB/s``, ``items/s``) no; ``None`` for the rest (sizes, counts),
    which the comparison leaves out."""
    if "/s" in metric:
        return False
    unit = metric.replace("_", " ").split()[-1]
    if unit in ("ms", "s", "us", "ns"):
        return True
    return None


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def compare_lines(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[str]:
    """A table of new/old per row and metric both runs have, and what differs about the runs."""
    lines = [f"compared with an earlier run of {old.get('suite', '?')} ({old.get('date', '?')})"]
    old_machine, new_machine = old.get("machine", {}), new.get("machine", {})
    if old_machine.get("cpu") != new_machine.get("cpu"):
        lines.append(f"  other machine: then {old_machine.get('cpu')}, now {new_machine.get('cpu')}")
    if old.get("ferrum") != new.get("ferrum"):
        lines.append(f"  ferrum: then {old.get('ferrum')}, now {new.get('ferrum')}")
    if old.get("settings") != new.get("settings"):
        lines.append(f"  other settings: then {old.get('settings')}, now {new.get('settings')}")
    new_rows: Mapping[str, Mapping[str, float]] = new.get("rows", {})
    width = max([len(row) for row in new_rows] + [24])
    mwidth = max([len(m) for metrics in new_rows.values() for m in metrics] + [6])
    lines.append(f"{'row':<{width}} {'metric':>{mwidth}} {'old':>12} {'new':>12} {'new/old':>8}  faster")
    old_rows: Mapping[str, Mapping[str, float]] = old.get("rows", {})
    for row, metrics in new_rows.items():
        before = old_rows.get(row)
        if before is None:
            lines.append(f"{row:<{width}} (not in the earlier run)")
            continue
        for metric, value in metrics.items():
            lower = lower_is_better(metric)
            if metric not in before or lower is None:
                continue
            then = before[metric]
            ratio = value / then if then else float("nan")
            if ratio != ratio or ratio == 1.0:
                verdict = "same"
            else:
                verdict = "now" if (ratio < 1.0) == lower else "then"
            lines.append(
                f"{row:<{width}} {metric:>{mwidth}} {_number(then):>12} {_number(value):>12}"
                f" {ratio:>8.3f}  {verdict}"
            )
    for row in old_rows:
        if row not in new_rows:
            lines.append(f"{row:<{width}} (only in the earlier run)")
    return lines
