"""What every part of benches/compare.py shares: the frameworks, the settings, a
table row (``Workload``) and what timing it gives (``Result``), the timing
itself, the table line format, and the inputs the rows are made from.

Imports neither ferrum nor torch, so the memory check's torch process
(compare_memory.py) can use it without loading ferrum.
"""

from __future__ import annotations

import contextlib
import gc
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

Thunk = Callable[[], object]
F32 = npt.NDArray[np.float32]
N = TypeVar("N", int, float)

FERRUM = "ferrum"
NUMPY = "numpy"
TORCH = "torch"
FRAMEWORKS = (FERRUM, NUMPY, TORCH)

# Fewer single calls than this leave no 10th percentile to speak of.
MIN_CALLS = 10


@dataclass(frozen=True)
class Settings:
    """How hard to time.

    ``sample_ns``: the least length of one sample (a calibrated loop of calls);
    ``samples``: the most samples per cell, in rounds of three; ``cell_budget_ns``:
    fewer samples past this much time per cell; ``warmup_ns``: calls before
    timing, at least this long (thread pools start, caches fill); ``settle_s``:
    a pause before each turn of a framework so the previous framework's worker
    threads stop spinning on the two shared cores. ``calls``: the most single
    calls timed per framework for the per-call percentiles, spread over
    ``call_turns`` turns, fewer past ``calls_budget_ns`` (but at least
    ``MIN_CALLS``); ``memory_steps``: training steps of the peak-memory check.
    """

    quick: bool
    sample_ns: int
    samples: int
    cell_budget_ns: int
    warmup_ns: int
    settle_s: float
    calls: int
    call_turns: int
    calls_budget_ns: int
    memory_steps: int


def _settings(quick: bool) -> Settings:
    """The ``--quick`` smoke-run settings or the full ones; each pair reads (quick, full)."""

    def pick(quick_value: N, full_value: N) -> N:
        return quick_value if quick else full_value

    return Settings(
        quick=quick,
        sample_ns=pick(1_000_000, 2_000_000),
        samples=pick(3, 15),
        cell_budget_ns=pick(50_000_000, 1_500_000_000),
        warmup_ns=pick(10_000_000, 200_000_000),
        # OpenBLAS's threads spin for about 0.1 s after a call.
        settle_s=pick(0.01, 0.25),
        calls=pick(20, 200),
        call_turns=pick(2, 5),
        calls_budget_ns=pick(100_000_000, 4_000_000_000),
        memory_steps=pick(10, 100),
    )


QUICK = _settings(quick=True)
FULL = _settings(quick=False)


@dataclass(frozen=True)
class Workload:
    """One table row.

    ``setup`` makes the inputs and returns one zero-argument callable per
    framework that has this workload; it runs just before the row is timed
    and everything it made is dropped right after, so no large tensor outlives
    its row. ``per`` divides the measured time (e.g. per recorded op).
    ``grad`` rows keep torch's autograd on. ``flops`` (floating-point
    operations of one call) gives the row a GF/s figure and single-call
    percentiles; ``nbytes`` (bytes one call reads) gives it a GB/s figure.
    """

    name: str
    setup: Callable[[], dict[str, Thunk]]
    per: int = 1
    grad: bool = False
    flops: int = 0
    nbytes: int = 0


@dataclass(frozen=True)
class Result:
    """One row's timing: microseconds per call (the best round) per framework,
    and for rows with ``flops``, the nanoseconds of each single call timed."""

    name: str
    times_us: dict[str, float]
    note: str = ""
    flops: int = 0
    nbytes: int = 0
    calls_ns: dict[str, list[int]] = field(default_factory=dict)


# --------------------------------------------------------------------------- timing


def _loop(fn: Thunk, number: int) -> int:
    """Nanoseconds taken by ``number`` calls of ``fn``."""
    it = range(number)
    start = time.perf_counter_ns()
    for _ in it:
        fn()
    return time.perf_counter_ns() - start


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector off, so a collection does not land in a sample."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_on:
            gc.enable()


def calibrate(fn: Thunk, settings: Settings) -> tuple[int, int]:
    """Warm ``fn`` up and size its samples: ``(calls per sample, rounds)``.

    A sample is a loop of calls lasting about ``settings.sample_ns``; a round
    is three samples, and a cell gets as many rounds as ``settings.samples``
    and ``settings.cell_budget_ns`` allow.
    """
    deadline = time.perf_counter_ns() + settings.warmup_ns
    first = _loop(fn, 1)  # warm-up: thread pools, caches, allocator
    while time.perf_counter_ns() < deadline:
        first = _loop(fn, 1)
    estimate = first
    if first < settings.sample_ns:
        # The fastest of up to 20 single calls, so calls stalled by a busy machine
        # do not set the loop length.
        deadline = time.perf_counter_ns() + settings.warmup_ns // 2
        for _ in range(20):
            estimate = min(estimate, _loop(fn, 1))
            if time.perf_counter_ns() > deadline:
                break
    number = max(1, settings.sample_ns // max(estimate, 1))
    taken = _loop(fn, number)
    while taken < settings.sample_ns // 2:
        number *= 2
        taken = _loop(fn, number)
    rounds = max(1, min(settings.samples, settings.cell_budget_ns // max(taken, 1)) // 3)
    return number, rounds


def timed_round(fn: Thunk, number: int) -> float:
    """Nanoseconds per call: the median of three samples of ``number`` calls."""
    with _no_gc():
        return statistics.median(_loop(fn, number) / number for _ in range(3))


def timed_calls(fn: Thunk, count: int) -> list[int]:
    """Nanoseconds of each of ``count`` calls of ``fn``, timed one by one."""
    out: list[int] = []
    clock = time.perf_counter_ns
    with _no_gc():
        for _ in range(count):
            start = clock()
            fn()
            out.append(clock() - start)
    return out


def call_count(estimate_ns: float, settings: Settings) -> int:
    """How many single calls to time of a framework whose call takes ``estimate_ns``."""
    fit = int(settings.calls_budget_ns // max(estimate_ns, 1.0))
    return max(MIN_CALLS, min(settings.calls, fit))


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def torch_mode(torch: Any, grad: bool) -> Iterator[None]:
    """torch's autograd off unless ``grad`` (a no-op without torch)."""
    if torch is None or grad:
        yield
    else:
        with torch.no_grad():
            yield


def run(workload: Workload, torch: Any, settings: Settings) -> Result:
    """Time every framework of one row, their rounds interleaved.

    The frameworks take turns, one round each, so a burst of load on the
    shared machine falls on all of them alike instead of on whichever was
    being timed at that moment; each keeps its best round. A pause before
    every turn lets the previous framework's worker threads (OpenMP, BLAS,
    rayon) stop spinning on the two cores. Rows with ``flops`` then time
    single calls, in turns the same way (see ``time_single_calls``).
    """
    notes: list[str] = []
    try:
        cases = workload.setup()
    except Exception as exc:  # an op the installed build lacks: report, keep going
        return Result(workload.name, {}, f"setup failed: {type(exc).__name__}: {exc}")

    def mode(framework: str) -> contextlib.AbstractContextManager[None]:
        return torch_mode(torch, workload.grad if framework == TORCH else True)

    plans: dict[str, tuple[Thunk, int, int]] = {}
    for framework in FRAMEWORKS:
        fn = cases.pop(framework, None)
        if fn is None:
            continue
        time.sleep(settings.settle_s)
        try:
            with mode(framework):
                number, rounds = calibrate(fn, settings)
        except Exception as exc:
            notes.append(f"{framework} failed: {type(exc).__name__}: {exc}")
            continue
        plans[framework] = (fn, number, rounds)
    best: dict[str, float] = {}
    for turn in range(max((rounds for _, _, rounds in plans.values()), default=0)):
        for framework, (fn, number, rounds) in plans.items():
            if turn >= rounds:
                continue
            time.sleep(settings.settle_s)
            with mode(framework):
                t = timed_round(fn, number)
            best[framework] = min(best.get(framework, t), t)
    calls: dict[str, list[int]] = {}
    if workload.flops:
        fns = {framework: plan[0] for framework, plan in plans.items()}
        calls = time_single_calls(fns, best, mode, settings)
    times = {framework: t / 1e3 / workload.per for framework, t in best.items()}
    del cases, plans
    gc.collect()
    return Result(workload.name, times, "; ".join(notes), workload.flops, workload.nbytes, calls)


def time_single_calls(
    fns: dict[str, Thunk],
    estimates_ns: dict[str, float],
    mode: Callable[[str], contextlib.AbstractContextManager[None]],
    settings: Settings,
) -> dict[str, list[int]]:
    """Nanoseconds of single calls of each framework, taken in turns.

    Each framework gets ``call_count`` calls (sized by its best-round time
    in ``estimates_ns``), spread over ``settings.call_turns`` turns; the
    frameworks alternate turn by turn with the same settling pause as the
    rounds. The first call after each pause is made but not counted: it wakes
    the framework's threads from idle, which a run of back-to-back calls (a
    training loop) does not pay.
    """
    counts = {framework: call_count(estimates_ns[framework], settings) for framework in fns}
    taken: dict[str, list[int]] = {framework: [] for framework in fns}
    for _ in range(settings.call_turns):
        for framework, fn in fns.items():
            left = counts[framework] - len(taken[framework])
            if left <= 0:
                continue
            time.sleep(settings.settle_s)
            with mode(framework):
                fn()
                per_turn = math.ceil(counts[framework] / settings.call_turns)
                taken[framework] += timed_calls(fn, min(per_turn, left))
    return taken


# The first column of every table: the longest row name fits.
NAME_WIDTH = 46


def format_cells(cells: tuple[str, ...], widths: tuple[int, ...]) -> str:
    """One table line: the first cell left-aligned, the others right-aligned."""
    first = cells[0].ljust(widths[0])
    rest = " ".join(cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
    return f"{first} {rest}".rstrip()


# --------------------------------------------------------------------------- inputs


def rand(rng: np.random.Generator, shape: tuple[int, ...]) -> F32:
    """Uniform [0, 1) float32 data (speed does not depend on the values)."""
    return rng.random(shape, dtype=np.float32)


def size_label(n: int) -> str:
    """``n`` as a row name says it: 1K, 16M, 4096."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)


# The guide CNN's training batch: the "cnn guide adam step" row and the memory check.
GUIDE_BATCH = 64
GUIDE_IMAGE = (28, 28)


def training_data(batch: int, shape: tuple[int, ...]) -> tuple[F32, npt.NDArray[np.int64]]:
    """A batch of inputs in [0, 1) and class targets in 0..9, the same for every framework."""
    rng = np.random.default_rng(3)
    return rng.random((batch, *shape), dtype=np.float32), rng.integers(0, 10, batch, dtype=np.int64)


def with_torch(cases: dict[str, Thunk], torch: Any, make: Callable[[], Thunk]) -> dict[str, Thunk]:
    """``cases`` with torch's callable added, made by ``make``, when torch is loaded."""
    if torch is not None:
        cases[TORCH] = make()
    return cases
