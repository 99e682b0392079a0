"""Time the same workloads in ferrum, NumPy and PyTorch, and print a table of ratios.

Each row is one workload; the columns are the time of one call in
microseconds for ferrum, NumPy and PyTorch, then ``numpy/ferrum`` and
``torch/ferrum``: a ratio above 1 means ferrum is faster. A framework that is
missing, or that has no counterpart for a row, shows ``-``.

Only the operation is timed: inputs are made (from the same NumPy data for all
three) before timing, and no result is converted back. Each cell is warmed up,
then a calibrated inner loop is timed in rounds of three samples and the best
round median per call is kept (robust to load from other processes). The
frameworks of a row take turns round by round, so load that comes and goes
falls on all of them alike.
Tiny-op rows call the bound operation directly (no Python frame in between),
so they measure what ``a + b`` costs from Python, dispatch included.

PyTorch is never a dependency of ferrum; it is only the yardstick.

Run with ferrum and NumPy only (the torch columns show ``-``)::

    . /work/venv/bin/activate && pip install .     # from the repository root
    python benches/compare.py                       # full run, a few minutes
    python benches/compare.py --quick --only tiny   # what the smoke test runs

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

Options: ``--quick`` (smaller sizes, fewer repeats), ``--only SUBSTRING`` (rows
whose name contains it, case-insensitive), ``--no-torch`` (skip torch even when
importable), ``--torch-threads N`` (default 2, the machine's cores),
``--repeat N`` (N passes over the rows, then each row's median ratios: on a
shared machine one pass can swing a row by 1.5x). PyTorch
runs with ``torch.set_num_threads(N)`` and under ``torch.no_grad()`` except
for the autodiff rows.

On a shared, loaded machine every multi-threaded op (torch's OpenMP regions,
ferrum's rayon pool, NumPy's BLAS threads) waits for a scheduler slice to wake its
second thread, which can add milliseconds per call: check the load average
printed at the top before trusting a row, and compare with ``--torch-threads 1``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import importlib.metadata
import math
import operator
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import ferrum
import numpy as np
import numpy.typing as npt
from compare_sequence import sequence_cases
from ferrum import D1, D2, D3, D4, Device, Distribution, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Dropout, DropoutConfig, Linear, LinearConfig, PaddingConfig2d, Relu
from ferrum.nn.conv import Conv2d, Conv2dConfig
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig
from ferrum.optim import AdamConfig, GradientsParams

B = TypeVar("B", bound=Backend)
Thunk = Callable[[], object]
F32 = npt.NDArray[np.float32]

FERRUM = "ferrum"
NUMPY = "numpy"
TORCH = "torch"
FRAMEWORKS = (FERRUM, NUMPY, TORCH)
MICRO = "\u00b5s"


@dataclass(frozen=True)
class Settings:
    """How hard to time.

    ``sample_ns``: the least length of one sample (a calibrated loop of calls);
    ``samples``: the most samples per cell, in rounds of three; ``cell_budget_ns``:
    fewer samples past this much time per cell; ``warmup_ns``: calls before
    timing, at least this long (thread pools start, caches fill); ``settle_s``:
    a pause before each turn of a framework so the previous framework's worker
    threads stop spinning on the two shared cores.
    """

    quick: bool
    sample_ns: int
    samples: int
    cell_budget_ns: int
    warmup_ns: int
    settle_s: float


@dataclass(frozen=True)
class Workload:
    """One table row.

    ``setup`` makes the inputs and returns one zero-argument callable per
    framework that has this workload; it runs just before the row is timed
    and everything it made is dropped right after, so no large tensor outlives
    its row. ``per`` divides the measured time (e.g. per recorded op).
    ``grad`` rows keep torch's autograd on.
    """

    name: str
    setup: Callable[[], dict[str, Thunk]]
    per: int = 1
    grad: bool = False


@dataclass(frozen=True)
class Result:
    name: str
    times_us: dict[str, float]
    note: str = ""


# --------------------------------------------------------------------------- timing


def _loop(fn: Thunk, number: int) -> int:
    """Nanoseconds taken by ``number`` calls of ``fn``."""
    it = range(number)
    start = time.perf_counter_ns()
    for _ in it:
        fn()
    return time.perf_counter_ns() - start


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
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        return statistics.median(_loop(fn, number) / number for _ in range(3))
    finally:
        if gc_was_on:
            gc.enable()


# --------------------------------------------------------------------------- frameworks


def load_torch(disabled: bool, threads: int) -> Any:
    """The torch module set for a fair CPU comparison, or None when absent."""
    if disabled:
        return None
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


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


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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


def machine_info(torch: Any, settings: Settings, has_autodiff: bool) -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    lines = [
        f"cpu: {cpu_model()}",
        f"cores: {os.cpu_count()} logical, {usable} usable by this process; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"python: {platform.python_version()} ({sys.executable})",
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
        f"{settings.sample_ns / 1e6:g} ms each",
    )
    return lines


# --------------------------------------------------------------------------- workloads


def _label(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)


def _rand(rng: np.random.Generator, shape: tuple[int, ...]) -> F32:
    return rng.random(shape, dtype=np.float32)


def build_workloads(torch: Any, settings: Settings, has_autodiff: bool) -> list[Workload]:
    rng = np.random.default_rng(0)
    device = NdArray.device()
    quick = settings.quick
    out: list[Workload] = []

    def with_torch(cases: dict[str, Thunk], make: Callable[[], Thunk]) -> dict[str, Thunk]:
        if torch is not None:
            cases[TORCH] = make()
        return cases

    # matmul f32, square
    for n in (64, 128) if quick else (256, 512, 1024, 2048):

        def matmul(n: int = n) -> dict[str, Thunk]:
            a, b = _rand(rng, (n, n)), _rand(rng, (n, n))
            fa: Tensor[NdArray, D2] = Tensor.from_numpy(a, device)
            fb: Tensor[NdArray, D2] = Tensor.from_numpy(b, device)
            cases: dict[str, Thunk] = {
                FERRUM: functools.partial(operator.matmul, fa, fb),
                NUMPY: functools.partial(operator.matmul, a, b),
            }
            return with_torch(
                cases, lambda: functools.partial(operator.matmul, torch.from_numpy(a), torch.from_numpy(b))
            )

        out.append(Workload(f"matmul f32 {n}x{n}", matmul))

    sizes = (1 << 10, 1 << 16) if quick else (1 << 10, 1 << 20, 1 << 24)

    # element-wise
    for n in sizes:

        def add(n: int = n) -> dict[str, Thunk]:
            a, b = _rand(rng, (n,)), _rand(rng, (n,))
            fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
            fb: Tensor[NdArray, D1] = Tensor.from_numpy(b, device)
            cases: dict[str, Thunk] = {
                FERRUM: functools.partial(operator.add, fa, fb),
                NUMPY: functools.partial(operator.add, a, b),
            }
            return with_torch(
                cases, lambda: functools.partial(operator.add, torch.from_numpy(a), torch.from_numpy(b))
            )

        def exp(n: int = n) -> dict[str, Thunk]:
            a = _rand(rng, (n,))
            fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
            cases: dict[str, Thunk] = {FERRUM: fa.exp, NUMPY: functools.partial(np.exp, a)}
            return with_torch(cases, lambda: torch.from_numpy(a).exp)

        def mul_add(n: int = n) -> dict[str, Thunk]:
            a, b = _rand(rng, (n,)), _rand(rng, (n,))
            fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
            fb: Tensor[NdArray, D1] = Tensor.from_numpy(b, device)
            cases: dict[str, Thunk] = {FERRUM: lambda: fa * fb + 1.0, NUMPY: lambda: a * b + 1.0}
            if torch is not None:
                ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                cases[TORCH] = lambda: ta * tb + 1.0
            return cases

        out.append(Workload(f"add {_label(n)}", add))
        out.append(Workload(f"exp {_label(n)}", exp))
        out.append(Workload(f"a*b+1.0 {_label(n)}", mul_add))

    # reductions
    for n in sizes:

        def total(n: int = n) -> dict[str, Thunk]:
            a = _rand(rng, (n,))
            fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
            cases: dict[str, Thunk] = {FERRUM: fa.sum, NUMPY: a.sum}
            return with_torch(cases, lambda: torch.from_numpy(a).sum)

        def sum_last(n: int = n) -> dict[str, Thunk]:
            a = _rand(rng, (n // 1024, 1024))
            fa: Tensor[NdArray, D2] = Tensor.from_numpy(a, device)
            cases: dict[str, Thunk] = {
                FERRUM: functools.partial(fa.sum_dim, 1),
                NUMPY: functools.partial(a.sum, axis=-1),
            }
            return with_torch(cases, lambda: functools.partial(torch.from_numpy(a).sum, dim=-1))

        out.append(Workload(f"sum {_label(n)}", total))
        out.append(Workload(f"sum_dim(-1) [{_label(n // 1024)},1K]", sum_last))

    # tiny-op dispatch
    def tiny_add() -> dict[str, Thunk]:
        a, b = _rand(rng, (4,)), _rand(rng, (4,))
        fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
        fb: Tensor[NdArray, D1] = Tensor.from_numpy(b, device)
        cases: dict[str, Thunk] = {
            FERRUM: functools.partial(operator.add, fa, fb),
            NUMPY: functools.partial(operator.add, a, b),
        }
        return with_torch(
            cases, lambda: functools.partial(operator.add, torch.from_numpy(a), torch.from_numpy(b))
        )

    def tiny_exp() -> dict[str, Thunk]:
        a = _rand(rng, (4,))
        fa: Tensor[NdArray, D1] = Tensor.from_numpy(a, device)
        cases: dict[str, Thunk] = {FERRUM: fa.exp, NUMPY: functools.partial(np.exp, a)}
        return with_torch(cases, lambda: torch.from_numpy(a).exp)

    out.append(Workload("tiny add [4]", tiny_add))
    out.append(Workload("tiny exp [4]", tiny_exp))

    # softmax over the last dim
    for rows in (64, 256) if quick else (64, 4096):

        def softmax(rows: int = rows) -> dict[str, Thunk]:
            a = _rand(rng, (rows, 1024))
            fa: Tensor[NdArray, D2] = Tensor.from_numpy(a, device)

            def np_softmax() -> object:
                e = np.exp(a - a.max(axis=-1, keepdims=True))
                return e / e.sum(axis=-1, keepdims=True)

            cases: dict[str, Thunk] = {
                FERRUM: functools.partial(ferrum.activation.softmax, fa, 1),
                NUMPY: np_softmax,
            }
            return with_torch(cases, lambda: functools.partial(torch.softmax, torch.from_numpy(a), -1))

        out.append(Workload(f"softmax [{rows},1024]", softmax))

    if has_autodiff:
        out.extend(_autodiff_workloads(torch, quick))
        out.extend(_training_workloads(torch))
        out.extend(Workload(name, setup, grad=grad) for name, setup, grad in sequence_cases(torch))
    return out


def _autodiff_workloads(torch: Any, quick: bool) -> list[Workload]:
    device = Autodiff[NdArray].device()
    steps = 50 if quick else 500  # each step records two ops: x * c, then + c
    ops = 2 * steps

    def chain() -> dict[str, Thunk]:
        x0 = Tensor.random((16,), Distribution.Uniform(0.0, 1.0), device).require_grad()

        def ferrum_chain() -> None:
            x = x0
            for _ in range(steps):
                x = x * 1.0001 + 0.0001
            x.sum().backward()

        cases: dict[str, Thunk] = {FERRUM: ferrum_chain}
        if torch is not None:
            t0 = torch.rand(16, requires_grad=True)

            def torch_chain() -> None:
                x = t0
                for _ in range(steps):
                    x = x * 1.0001 + 0.0001
                x.sum().backward()
                t0.grad = None

            cases[TORCH] = torch_chain
        return cases

    batch, n_in, n_hidden, n_out = 64, 784, 512, 10

    def mlp() -> dict[str, Thunk]:
        rng = np.random.default_rng(1)
        normal = Distribution.Normal(0.0, 0.05)
        x = Tensor.random((batch, n_in), Distribution.Uniform(0.0, 1.0), device)
        w1 = Tensor.random((n_in, n_hidden), normal, device).require_grad()
        b1 = Tensor.zeros((1, n_hidden), device).require_grad()
        w2 = Tensor.random((n_hidden, n_out), normal, device).require_grad()
        b2 = Tensor.zeros((1, n_out), device).require_grad()

        def ferrum_mlp() -> None:
            h = ferrum.activation.relu(x @ w1 + b1)
            y = h @ w2 + b2
            grads = (y * y).mean().backward()
            w1.grad(grads)

        # NumPy has no autodiff: the same forward and backward, written by hand.
        nx = rng.random((batch, n_in), dtype=np.float32)
        nw1 = (rng.standard_normal((n_in, n_hidden)) * 0.05).astype(np.float32)
        nb1 = np.zeros(n_hidden, dtype=np.float32)
        nw2 = (rng.standard_normal((n_hidden, n_out)) * 0.05).astype(np.float32)
        nb2 = np.zeros(n_out, dtype=np.float32)

        def numpy_mlp() -> tuple[F32, ...]:
            pre = nx @ nw1 + nb1
            h = np.maximum(pre, np.float32(0.0))
            y = h @ nw2 + nb2
            dy = y * np.float32(2.0 / y.size)
            dw2 = h.T @ dy
            db2 = dy.sum(axis=0)
            dh = dy @ nw2.T
            dh[pre <= 0] = 0
            dw1 = nx.T @ dh
            db1 = dh.sum(axis=0)
            return dw1, db1, dw2, db2

        cases: dict[str, Thunk] = {FERRUM: ferrum_mlp, NUMPY: numpy_mlp}
        if torch is not None:
            tx = torch.from_numpy(nx)
            params = [torch.from_numpy(p.copy()).requires_grad_() for p in (nw1, nb1, nw2, nb2)]
            tw1, tb1, tw2, tb2 = params

            def torch_mlp() -> None:
                h = torch.relu(tx @ tw1 + tb1)
                y = h @ tw2 + tb2
                (y * y).mean().backward()
                for p in params:
                    p.grad = None

            cases[TORCH] = torch_mlp
        return cases

    return [
        Workload(f"autodiff chain {ops} ops, per op", chain, per=ops, grad=True),
        Workload(f"mlp {n_in}-{n_hidden}-{n_out} b{batch} fwd+bwd", mlp, grad=True),
    ]


# --------------------------------------------------------------------------- training


class Mlp(Module[B]):
    """784-512-10 perceptron with a ReLU, as a user writes it."""

    linear1: Linear[B]
    linear2: Linear[B]
    activation: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.linear2.forward(self.activation.forward(self.linear1.forward(x)))


class GuideCnn(Module[B]):
    """The Burn Book guide's MNIST model (``examples/guide``), layer for layer."""

    conv1: Conv2d[B]
    conv2: Conv2d[B]
    pool: AdaptiveAvgPool2d
    dropout: Dropout
    linear1: Linear[B]
    linear2: Linear[B]
    activation: Relu

    def forward(self, images: Tensor[B, D3]) -> Tensor[B, D2]:
        batch, height, width = images.dims()
        x: Tensor[B, D4] = images.reshape((batch, 1, height, width))
        x = self.dropout.forward(self.conv1.forward(x))  # [batch, 8, 26, 26]
        x = self.dropout.forward(self.conv2.forward(x))  # [batch, 16, 24, 24]
        x = self.pool.forward(self.activation.forward(x))  # [batch, 16, 8, 8]
        flat: Tensor[B, D2] = x.reshape((batch, 16 * 8 * 8))
        flat = self.activation.forward(self.dropout.forward(self.linear1.forward(flat)))
        return self.linear2.forward(flat)


def guide_cnn(device: Device[B], hidden: int = 512, classes: int = 10, dropout: float = 0.5) -> GuideCnn[B]:
    """``ModelConfig::new(10, 512).init(device)`` of the Burn Book guide."""
    return GuideCnn(
        conv1=Conv2dConfig((1, 8), (3, 3)).init(device),
        conv2=Conv2dConfig((8, 16), (3, 3)).init(device),
        pool=AdaptiveAvgPool2dConfig((8, 8)).init(),
        dropout=DropoutConfig(dropout).init(),
        linear1=LinearConfig(16 * 8 * 8, hidden).init(device),
        linear2=LinearConfig(hidden, classes).init(device),
        activation=Relu(),
    )


def _np(param: Any) -> F32:
    """A parameter's value as a NumPy array (copied, so torch can own it)."""
    return np.array(param.val().to_numpy(), dtype=np.float32)


def _torch_linear(torch: Any, layer: Linear[Any]) -> Any:
    """A torch Linear holding ``layer``'s weights (ferrum stores ``[d_input, d_output]``)."""
    d_input, d_output = layer.weight.shape()
    out = torch.nn.Linear(d_input, d_output)
    with torch.no_grad():
        out.weight.copy_(torch.from_numpy(_np(layer.weight).T.copy()))
        if layer.bias is not None:
            out.bias.copy_(torch.from_numpy(_np(layer.bias)))
    return out


def _torch_conv(torch: Any, layer: Conv2d[Any], padding: int) -> Any:
    """A torch Conv2d holding ``layer``'s weights (same ``[out, in, kh, kw]`` layout)."""
    c_out, c_in, kh, kw = layer.weight.shape()
    out = torch.nn.Conv2d(c_in, c_out, (kh, kw), padding=padding)
    with torch.no_grad():
        out.weight.copy_(torch.from_numpy(_np(layer.weight)))
        if layer.bias is not None:
            out.bias.copy_(torch.from_numpy(_np(layer.bias)))
    return out


def _training_workloads(torch: Any) -> list[Workload]:
    """Conv forward+backward and whole train steps (forward, loss, backward, Adam).

    Both frameworks start from the same weights and data; ferrum goes through
    its public API the way a training loop does (``GradientsParams.from_grads``,
    a functional ``optim.step``), torch through ``nn``, ``F.cross_entropy`` and
    ``torch.optim.Adam`` with the same hyper-parameters. Train steps keep
    updating the model, so every call is a real step.
    """
    device = Autodiff[NdArray].device()
    lr = 1e-4
    out: list[Workload] = []

    # conv2d 3x3, padding 1: input, weight and bias gradients of sum(conv(x))
    same = PaddingConfig2d.Explicit(1, 1)
    for batch, c_in, c_out, size in ((64, 1, 8, 28), (64, 8, 16, 28), (32, 64, 64, 56)):

        def conv(
            batch: int = batch, c_in: int = c_in, c_out: int = c_out, size: int = size
        ) -> dict[str, Thunk]:
            rng = np.random.default_rng(2)
            nx = rng.random((batch, c_in, size, size), dtype=np.float32)
            layer = Conv2dConfig((c_in, c_out), (3, 3)).with_padding(same).init(device)
            x: Tensor[Autodiff[NdArray], D4] = Tensor.from_numpy(nx, device).require_grad()

            def ferrum_conv() -> None:
                grads = layer.forward(x).sum().backward()
                x.grad(grads)

            cases: dict[str, Thunk] = {FERRUM: ferrum_conv}
            if torch is not None:
                tconv = _torch_conv(torch, layer, 1)
                tx = torch.from_numpy(nx).requires_grad_()

                def torch_conv() -> None:
                    tconv(tx).sum().backward()
                    tx.grad = None
                    tconv.zero_grad(set_to_none=True)

                cases[TORCH] = torch_conv
            return cases

        name = f"conv2d 3x3 b{batch} {c_in}->{c_out} {size}x{size} f+b"
        out.append(Workload(name, conv, grad=True))

    def train_step(
        model: Any, inputs: Tensor[Autodiff[NdArray], Any], targets: Tensor[Autodiff[NdArray], D1, Int]
    ) -> Thunk:
        optim = AdamConfig().init()
        loss_fn = CrossEntropyLossConfig().init(device)

        def step() -> None:
            nonlocal model
            loss = loss_fn.forward(model.forward(inputs), targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(lr, model, grads)

        return step

    def torch_train_step(model: Any, inputs: F32, targets: npt.NDArray[np.int64]) -> Thunk:
        # Burn's Adam defaults: epsilon 1e-5
        optim = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-5)
        tx, ty = torch.from_numpy(inputs), torch.from_numpy(targets)
        model.train()

        def step() -> None:
            optim.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(tx), ty).backward()
            optim.step()

        return step

    def data(batch: int, shape: tuple[int, ...]) -> tuple[F32, npt.NDArray[np.int64]]:
        rng = np.random.default_rng(3)
        return rng.random((batch, *shape), dtype=np.float32), rng.integers(0, 10, batch, dtype=np.int64)

    for batch in (64, 256):

        def mlp(batch: int = batch) -> dict[str, Thunk]:
            nx, ny = data(batch, (784,))
            model = Mlp(
                linear1=LinearConfig(784, 512).init(device),
                linear2=LinearConfig(512, 10).init(device),
                activation=Relu(),
            )
            cases: dict[str, Thunk] = {
                FERRUM: train_step(model, Tensor.from_numpy(nx, device), Tensor.from_numpy(ny, device))
            }
            if torch is not None:
                tmodel = torch.nn.Sequential(
                    _torch_linear(torch, model.linear1), torch.nn.ReLU(), _torch_linear(torch, model.linear2)
                )
                cases[TORCH] = torch_train_step(tmodel, nx, ny)
            return cases

        out.append(Workload(f"mlp 784-512-10 adam step b{batch}", mlp, grad=True))

    def cnn() -> dict[str, Thunk]:
        nx, ny = data(64, (28, 28))
        model = guide_cnn(device)
        cases: dict[str, Thunk] = {
            FERRUM: train_step(model, Tensor.from_numpy(nx, device), Tensor.from_numpy(ny, device))
        }
        if torch is not None:
            nn = torch.nn
            tmodel = nn.Sequential(
                nn.Unflatten(1, (1, 28)),
                _torch_conv(torch, model.conv1, 0),
                nn.Dropout(0.5),
                _torch_conv(torch, model.conv2, 0),
                nn.Dropout(0.5),
                nn.ReLU(),
                nn.AdaptiveAvgPool2d((8, 8)),
                nn.Flatten(),
                _torch_linear(torch, model.linear1),
                nn.Dropout(0.5),
                nn.ReLU(),
                _torch_linear(torch, model.linear2),
            )
            cases[TORCH] = torch_train_step(tmodel, nx, ny)
        return cases

    out.append(Workload("cnn guide adam step b64", cnn, grad=True))
    return out


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def _torch_mode(torch: Any, grad: bool) -> Iterator[None]:
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
    rayon) stop spinning on the two cores.
    """
    times: dict[str, float] = {}
    notes: list[str] = []
    try:
        cases = workload.setup()
    except Exception as exc:  # an op the installed build lacks: report, keep going
        return Result(workload.name, {}, f"setup failed: {type(exc).__name__}: {exc}")
    plans: dict[str, tuple[Thunk, int, int]] = {}
    for framework in FRAMEWORKS:
        fn = cases.pop(framework, None)
        if fn is None:
            continue
        time.sleep(settings.settle_s)
        try:
            with _torch_mode(torch, workload.grad if framework == TORCH else True):
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
            with _torch_mode(torch, workload.grad if framework == TORCH else True):
                t = timed_round(fn, number)
            best[framework] = min(best.get(framework, t), t)
    for framework, t in best.items():
        times[framework] = t / 1e3 / workload.per
    del cases, plans
    gc.collect()
    return Result(workload.name, times, "; ".join(notes))


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
WIDTHS = (34, 12, 12, 12, 12, 12)


def format_row(cells: tuple[str, ...]) -> str:
    first = cells[0].ljust(WIDTHS[0])
    rest = " ".join(cell.rjust(width) for cell, width in zip(cells[1:], WIDTHS[1:], strict=True))
    return f"{first} {rest}".rstrip()


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
        help="time every row in N passes, then print each row's median ratios (default 1)",
    )
    return parser.parse_args(argv)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a count of at least 1, found {value}")
    return value


def summary_rows(passes: list[list[Result]]) -> list[tuple[str, ...]]:
    """Per workload: each pass's ratios against NumPy and torch, then their medians.

    A single pass can land on a burst of load from other processes; the
    median over passes taken minutes apart is the figure to compare.
    """
    rows: list[tuple[str, ...]] = []
    for i, first in enumerate(passes[0]):
        cells = [first.name]
        for other in (NUMPY, TORCH):
            ratios = [r for r in (_ratio(p[i].times_us, other) for p in passes) if r is not None]
            listed = " ".join(f"{r:.2f}" for r in ratios) or "-"
            median = _fmt_ratio(statistics.median(ratios) if ratios else None)
            cells += [listed, median]
        rows.append(tuple(cells))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quick: bool = args.quick
    if quick:
        settings = Settings(
            quick=True,
            sample_ns=1_000_000,
            samples=3,
            cell_budget_ns=50_000_000,
            warmup_ns=10_000_000,
            settle_s=0.01,
        )
    else:
        settings = Settings(
            quick=False,
            sample_ns=2_000_000,
            samples=15,
            cell_budget_ns=1_500_000_000,
            warmup_ns=200_000_000,
            # OpenBLAS's threads spin for about 0.1 s after a call.
            settle_s=0.25,
        )
    torch = load_torch(args.no_torch, args.torch_threads)
    has_autodiff = autodiff_works()
    NdArray.seed(0)

    for line in machine_info(torch, settings, has_autodiff):
        print(line)
    print()

    workloads = build_workloads(torch, settings, has_autodiff)
    only: str | None = args.only
    if only is not None:
        workloads = [w for w in workloads if only.lower() in w.name.lower()]
        if not workloads:
            print(f"no workload matches --only {only!r}", file=sys.stderr)
            return 2

    passes = [run_pass(workloads, torch, settings, n + 1, args.repeat) for n in range(args.repeat)]
    if args.repeat > 1:
        print(f"median over {args.repeat} passes (each pass's ratio, then the median):")
        print("  ".join(("workload", "numpy/ferrum", "median", "torch/ferrum", "median")))
        for cells in summary_rows(passes):
            print("  ".join(cells))
    failed = [r.name for results in passes for r in results if r.note]
    return 1 if failed else 0


def run_pass(
    workloads: list[Workload], torch: Any, settings: Settings, number: int, passes: int
) -> list[Result]:
    """Time every workload once, printing the table and its geometric means."""
    if passes > 1:
        print(f"pass {number} of {passes}")
    print(format_row(HEADER))
    print(format_row(tuple("-" * w for w in WIDTHS)))
    results: list[Result] = []
    for workload in workloads:
        result = run(workload, torch, settings)
        results.append(result)
        print(format_row(result_cells(result)), flush=True)
        if result.note:
            print(f"    ! {result.note}", flush=True)

    print()
    for other in (NUMPY, TORCH):
        ratios = [r for r in (_ratio(res.times_us, other) for res in results) if r is not None]
        mean = geomean(ratios)
        if mean is not None:
            print(f"geometric mean {other}/ferrum over {len(ratios)} rows: {mean:.2f}x")
    print()
    return results


if __name__ == "__main__":
    sys.exit(main())
