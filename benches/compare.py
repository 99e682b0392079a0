"""Time the same workloads in ferrum, NumPy and PyTorch, and print tables of ratios.

The single entry point of the comparison; the rows live beside it, one file per
family: compare_matmul.py (matmul rows, per-call percentiles),
compare_elementwise.py (element-wise, tiny-op dispatch, softmax),
compare_reduce.py (sum, mean, sum_dim), compare_creation.py (tensors from
Python lists), compare_training.py (autodiff, conv,
training steps), compare_sequence.py (LSTM, transformer, attention) and
compare_memory.py (peak memory of a training step); compare_core.py holds
the timing, compare_torch.py the PyTorch side.

Tables, in the order printed:

- main table: each row is one workload; the columns are the time of one call
  in microseconds for ferrum, NumPy and PyTorch, then ``numpy/ferrum`` and
  ``torch/ferrum``: a ratio above 1 means ferrum is faster. A framework that
  is missing, or that has no counterpart for a row, shows ``-``. Then the
  geometric mean of each ratio column.
- throughput: the main table's rows that state their work, as rates from the
  same best-round times: GF/s (floating-point operations per second) for
  matmul rows, GB/s (input bytes read per second) for reductions.
- per-call GF/s: each matmul row's single calls (up to 200 per framework,
  timed one by one) as p10, p50 and p90 of their GF/s, and p10/p50: 1 when
  every call runs at the median speed, 0.5 when a tenth of the calls run at
  half of it (e.g. on one core of two).
- with ``--repeat N``: per row, the median over passes of each ratio and its
  lowest-highest per-pass value, then the per-call table's figures, each the
  median over passes.
- peak memory (``--memory``; in every full run): the guide CNN training step
  (the ``cnn guide adam step b64`` row) run 100 times in a fresh process per
  framework: RSS before the first step, the high-water mark (VmHWM) over the
  steps, and the growth between them, in MiB.

The load average is printed at the start and at the end: a row measured
while other processes ran is not worth comparing.

Only the operation is timed: inputs are made (from the same NumPy data for all
three) before timing, and no result is converted back. Each cell is warmed up,
then a calibrated inner loop is timed in rounds of three samples and the best
round median per call is kept (robust to load from other processes). The
frameworks of a row take turns round by round, so load that comes and goes
falls on all of them alike; single calls are timed in turns the same way.
Tiny-op rows call the bound operation directly (no Python frame in between),
so they measure what ``a + b`` costs from Python, dispatch included.

PyTorch is never a dependency of ferrum; it is only the yardstick.

Run with ferrum and NumPy only (the torch columns show ``-``)::

    . /work/venv/bin/activate && pip install .     # from the repository root
    python benches/compare.py                       # full run, several minutes
    python benches/compare.py --quick --only tiny   # what the smoke test runs
    python benches/compare.py --quick --only matmul --memory

Where the environment sets ``OPENBLAS_CORETYPE`` (the header says so), NumPy
runs OpenBLAS kernels other than its own choice for the CPU; drop it for a
fair NumPy column::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benches/compare.py

Run against PyTorch, from a separate virtual environment that holds torch and
ferrum both (ferrum is built into it from the source tree)::

    python3 -m venv /work/torch-venv
    /work/torch-venv/bin/pip install torch numpy
    /work/torch-venv/bin/pip install /work/main
    /work/torch-venv/bin/python benches/compare.py

Options: ``--quick`` (smaller sizes, fewer repeats and single calls, 10
memory steps), ``--only SUBSTRING`` (rows whose name contains it,
case-insensitive; a full run with ``--only`` leaves the memory check out
unless ``--memory`` is given), ``--no-torch`` (skip torch even when
importable), ``--torch-threads N`` (default 2, the machine's cores),
``--repeat N`` (N passes over the rows, then each row's median ratios and
their spread: on a shared machine one pass can swing a row by 1.5x),
``--memory`` (run the peak-memory check, also in quick mode or with
``--only``; once, after the passes), ``--json PATH`` (write each row's
figures, the settings and the machine, in the format of the scripts on
``harness.py``; with ``--repeat``, medians over the passes),
``--compare-with OLD.json`` (after the tables, new/old per row and figure
against an earlier ``--json`` file). PyTorch runs with
``torch.set_num_threads(N)`` and under ``torch.no_grad()`` except for the
autodiff rows.

On a shared, loaded machine every multi-threaded op (torch's OpenMP regions,
ferrum's rayon pool, NumPy's BLAS threads) waits for a scheduler slice to wake its
second thread, which can add milliseconds per call: check the load average
printed at the top before trusting a row, and compare with ``--torch-threads 1``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from typing import Any

import ferrum
import numpy as np
from compare_core import (
    FERRUM,
    FRAMEWORKS,
    FULL,
    NAME_WIDTH,
    NUMPY,
    QUICK,
    TORCH,
    Result,
    Settings,
    Workload,
    format_cells,
    run,
)
from compare_creation import creation_workloads
from compare_elementwise import elementwise_workloads
from compare_matmul import (
    PERCENTILE_HEADER,
    PERCENTILE_WIDTHS,
    CallRates,
    half_matmul_workloads,
    matmul_workloads,
    median_percentiles,
    pass_percentiles,
    percentile_rows,
)
from compare_memory import TITLE as MEMORY_TITLE
from compare_memory import memory_metrics, memory_report
from compare_reduce import reduce_workloads
from compare_sequence import sequence_cases
from compare_torch import load_torch
from compare_training import autodiff_workloads, training_workloads
from ferrum import Tensor
from ferrum.backend import Autodiff, NdArray
from harness import Report, Stats, add_report_args, machine

MICRO = "\u00b5s"

# --------------------------------------------------------------------------- machine


def autodiff_works() -> bool:
    """Whether the installed build records and differentiates ops."""
    try:
        device = Autodiff[NdArray].device()
        x = Tensor.from_floats([1.0, 2.0], device).require_grad()
        grads = (x * x).sum().backward()
        g = x.grad(grads)
        return g is not None and g.to_data().to_list() == [2.0, 4.0]
    except Exception:
        return False


def _blas_note() -> str:
    """Which OpenBLAS kernels NumPy runs, where the environment forces them.

    Some machines set ``OPENBLAS_CORETYPE`` (e.g. ``Haswell`` on AVX-512
    CPUs, for old OpenBLAS builds): NumPy then runs AVX2 kernels at half its
    native matmul speed. Compare against NumPy's own choice by running this
    script with ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE``.
    """
    forced = os.environ.get("OPENBLAS_CORETYPE")
    if forced:
        return f"; OpenBLAS core type forced to {forced} by OPENBLAS_CORETYPE (not NumPy's native kernels)"
    return "; OpenBLAS picks its own kernels"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine_info(torch: Any, settings: Settings, has_autodiff: bool) -> list[str]:
    host = machine()
    lines = [
        f"cpu: {host['cpu']}",
        f"cores: {host['cores']} logical, {host['usable_cores']} usable by this process; "
        f"load average {load_average()}",
        f"python: {host['python']} ({sys.executable})",
        f"ferrum: {ferrum.__version__} ({os.path.dirname(ferrum.__file__)}); "
        f"autodiff: {'yes' if has_autodiff else 'no (autodiff rows skipped)'}",
        f"numpy: {np.__version__}{_blas_note()}",
    ]
    if torch is None:
        lines.append("torch: not importable (torch columns show -)")
    else:
        lines.append(f"torch: {torch.__version__}, {torch.get_num_threads()} threads")
    mode = "quick" if settings.quick else "full"
    lines.append(
        f"mode: {mode}; best of up to {settings.samples // 3} medians of 3 samples of >= "
        f"{settings.sample_ns / 1e6:g} ms each; per-call percentiles of up to {settings.calls} calls "
        f"in {settings.call_turns} turns",
    )
    return lines


# --------------------------------------------------------------------------- rows


def build_workloads(torch: Any, settings: Settings, has_autodiff: bool) -> list[Workload]:
    quick = settings.quick
    sizes = (1 << 10, 1 << 16) if quick else (1 << 10, 1 << 20, 1 << 24)
    out = [
        *matmul_workloads(torch, quick),
        *half_matmul_workloads(torch, quick),
        *elementwise_workloads(torch, sizes, quick),
        *reduce_workloads(torch, sizes),
        *creation_workloads(torch, quick),
    ]
    if has_autodiff:
        out.extend(autodiff_workloads(torch, quick))
        out.extend(training_workloads(torch))
        out.extend(Workload(name, setup, grad=grad) for name, setup, grad in sequence_cases(torch))
    return out


# --------------------------------------------------------------------------- tables


def print_header(header: tuple[str, ...], widths: tuple[int, ...]) -> None:
    print(format_cells(header, widths))
    print(format_cells(tuple("-" * w for w in widths), widths))


def print_table(header: tuple[str, ...], widths: tuple[int, ...], rows: list[tuple[str, ...]]) -> None:
    print_header(header, widths)
    for cells in rows:
        print(format_cells(cells, widths))


def _fmt_us(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 10:
        return f"{value:.3f}"
    if value < 1000:
        return f"{value:.1f}"
    return f"{value:.0f}"


def _ratio(times: dict[str, float], other: str) -> float | None:
    mine, theirs = times.get(FERRUM), times.get(other)
    if mine is None or theirs is None or mine <= 0:
        return None
    return theirs / mine


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


HEADER = (
    "workload",
    f"ferrum {MICRO}",
    f"numpy {MICRO}",
    f"torch {MICRO}",
    "numpy/ferrum",
    "torch/ferrum",
)
WIDTHS = (NAME_WIDTH, 12, 12, 12, 12, 12)


def result_cells(result: Result) -> tuple[str, ...]:
    t = result.times_us
    return (
        result.name,
        _fmt_us(t.get(FERRUM)),
        _fmt_us(t.get(NUMPY)),
        _fmt_us(t.get(TORCH)),
        _fmt_ratio(_ratio(t, NUMPY)),
        _fmt_ratio(_ratio(t, TORCH)),
    )


def geomean(values: list[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


RATE_HEADER = ("workload", "ferrum", "numpy", "torch", "unit")
RATE_WIDTHS = (NAME_WIDTH, 10, 10, 10, 5)


def rate_rows(results: list[Result]) -> list[tuple[str, ...]]:
    """GF/s or GB/s of each row that states its flops or bytes, from its best-round times."""
    rows: list[tuple[str, ...]] = []
    for r in results:
        work, unit = _work(r)
        if not work:
            continue
        rates = [_rate(work, r.times_us.get(framework)) for framework in FRAMEWORKS]
        cells = tuple("-" if rate is None else f"{rate:.1f}" for rate in rates)
        rows.append((r.name, *cells, unit))
    return rows


def _work(result: Result) -> tuple[int, str]:
    """What one call of a row does, and the unit of its rate: flops (GF/s), else bytes read (GB/s)."""
    return (result.flops, "GF/s") if result.flops else (result.nbytes, "GB/s")


def _rate(work: int, time_us: float | None) -> float | None:
    # work per microsecond / 1e3 = giga-units per second
    return None if time_us is None or time_us <= 0 else work / time_us / 1e3


def print_percentiles(title: str, named: list[tuple[str, dict[str, CallRates]]]) -> None:
    if not named:
        return
    print(title)
    print_table(PERCENTILE_HEADER, PERCENTILE_WIDTHS, percentile_rows(named))
    print()


SUMMARY_HEADER = ("workload", "numpy/ferrum", "min-max", "torch/ferrum", "min-max")
SUMMARY_WIDTHS = (NAME_WIDTH, 12, 11, 12, 11)


def summary_rows(passes: list[list[Result]]) -> list[tuple[str, ...]]:
    """Per workload: the median over passes of its ratios against NumPy and
    torch, each followed by the lowest and highest of the per-pass ratios.

    A single pass can land on a burst of load from other processes; the
    median over passes taken minutes apart is the figure to compare, and the
    spread says how far one pass can be trusted.
    """
    rows: list[tuple[str, ...]] = []
    for i, first in enumerate(passes[0]):
        cells = [first.name]
        for other in (NUMPY, TORCH):
            ratios = [r for r in (_ratio(p[i].times_us, other) for p in passes) if r is not None]
            if ratios:
                cells += [_fmt_ratio(statistics.median(ratios)), f"{min(ratios):.2f}-{max(ratios):.2f}"]
            else:
                cells += ["-", "-"]
        rows.append(tuple(cells))
    return rows


def report_rows(report: Report, passes: list[list[Result]]) -> None:
    """Each main-table row into ``report``: per framework its microseconds per call
    (``ferrum us``) and, for rows that state their work, its rate (``ferrum GF/s``),
    and the ratios ``numpy/ferrum`` and ``torch/ferrum``; with several passes, the
    median time over the passes and the median of the per-pass ratios (as the
    summary table). Rows with single calls keep their statistics (ferrum's calls)."""
    for i, first in enumerate(passes[0]):
        results = [p[i] for p in passes]
        metrics: dict[str, float | None] = {}
        for framework in FRAMEWORKS:
            times = [r.times_us[framework] for r in results if framework in r.times_us]
            metrics[f"{framework} us"] = statistics.median(times) if times else None
        for other in (NUMPY, TORCH):
            ratios = [x for x in (_ratio(r.times_us, other) for r in results) if x is not None]
            metrics[f"{other}/ferrum"] = statistics.median(ratios) if ratios else None
        work, unit = _work(first)
        if work:
            for framework in FRAMEWORKS:
                metrics[f"{framework} {unit}"] = _rate(work, metrics[f"{framework} us"])
        calls = [ns / 1e9 for r in results for ns in r.calls_ns.get(FERRUM, [])]
        report.add(first.name, metrics, Stats(calls) if calls else None)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (smoke test)")
    parser.add_argument("--only", metavar="SUBSTRING", help="only rows whose name contains SUBSTRING")
    parser.add_argument("--no-torch", action="store_true", help="leave torch out even when importable")
    parser.add_argument(
        "--torch-threads", type=int, default=2, metavar="N", help="torch.set_num_threads(N) (default 2)"
    )
    parser.add_argument(
        "--repeat",
        type=_positive,
        default=1,
        metavar="N",
        help="time every row in N passes, then print each row's median ratios and spread (default 1)",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="measure the peak RSS of guide CNN training steps, each framework in a fresh process "
        "(default: in full runs without --only)",
    )
    add_report_args(parser)
    return parser.parse_args(argv)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a count of at least 1, found {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    settings = QUICK if args.quick else FULL
    torch = load_torch(args.no_torch, args.torch_threads)
    has_autodiff = autodiff_works()
    NdArray.seed(0)

    for line in machine_info(torch, settings, has_autodiff):
        print(line)
    print()

    workloads = build_workloads(torch, settings, has_autodiff)
    only: str | None = args.only
    memory: bool = args.memory or (not settings.quick and only is None)
    if only is not None:
        workloads = [w for w in workloads if only.lower() in w.name.lower()]
        if not workloads and not memory:
            print(f"no workload matches --only {only!r}", file=sys.stderr)
            return 2

    report = Report(
        "compare",
        {
            "quick": settings.quick,
            "only": only,
            "repeat": args.repeat,
            "memory": memory,
            "numpy": np.__version__,
            "torch": None if torch is None else str(torch.__version__),
            "torch_threads": args.torch_threads,
        },
    )
    passes = [run_pass(workloads, torch, settings, n + 1, args.repeat) for n in range(args.repeat)]
    if workloads:
        report_rows(report, passes)
    if args.repeat > 1 and workloads:
        print(f"median over {args.repeat} passes: each row's median ratio, then its per-pass lowest-highest")
        print_table(SUMMARY_HEADER, SUMMARY_WIDTHS, summary_rows(passes))
        print()
        print_percentiles(
            f"per-call GF/s of the matmul rows, each figure the median over {args.repeat} passes",
            median_percentiles(passes),
        )
    failed = any(r.note for results in passes for r in results)
    if memory:
        lines, ok, found = memory_report(settings.memory_steps, torch is not None, args.torch_threads)
        print("\n".join(lines))
        print()
        failed = failed or not ok
        for framework, figures in found.items():
            report.add(f"{MEMORY_TITLE} {framework}", memory_metrics(figures))
    print(f"load average at the end: {load_average()}")
    report.finish(args)
    return 1 if failed else 0


def run_pass(
    workloads: list[Workload], torch: Any, settings: Settings, number: int, passes: int
) -> list[Result]:
    """Time every workload once, printing the tables of one pass."""
    if not workloads:
        return []
    if passes > 1:
        print(f"pass {number} of {passes}")
    print_header(HEADER, WIDTHS)
    results: list[Result] = []
    for workload in workloads:
        result = run(workload, torch, settings)
        results.append(result)
        print(format_cells(result_cells(result), WIDTHS), flush=True)
        if result.note:
            print(f"    ! {result.note}", flush=True)

    print()
    for other in (NUMPY, TORCH):
        ratios = [r for r in (_ratio(res.times_us, other) for res in results) if r is not None]
        mean = geomean(ratios)
        if mean is not None:
            print(f"geometric mean {other}/ferrum over {len(ratios)} rows: {mean:.2f}x")
    print()
    rates = rate_rows(results)
    if rates:
        print("throughput from the best-round times (GF/s: flops per second; GB/s: bytes read per second)")
        print_table(RATE_HEADER, RATE_WIDTHS, rates)
        print()
    print_percentiles(
        "per-call GF/s of the matmul rows: p10, p50, p90 of single calls; p10/p50 is 1 when no call is slow",
        pass_percentiles(results),
    )
    return results


if __name__ == "__main__":
    sys.exit(main())
