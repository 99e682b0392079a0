"""A training loop's memory stays flat on Autodiff[NdArray]: the graph is
freed after backward, and when its tensors die without a backward.

Each step holds a few hundred KB of activations and gradients, so a graph
that outlived its step would add hundreds of MB over the run; the bound
leaves room only for allocator noise.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
from ferrum import D2, Tensor, activation
from ferrum.backend import NdArray

from tests.support.devices import AD, TrainB

STEPS = 3000
WARMUP = 500
MAX_GROWTH_MB = 20.0


def resident_mb() -> float:
    """Resident set size of this process, from /proc/self/statm."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def param(array: Any) -> Tensor[TrainB, D2]:
    return Tensor.from_numpy(np.asarray(array, dtype=np.float32), AD).require_grad()


def sgd(p: Tensor[TrainB, D2], grad: Tensor[NdArray, D2] | None, lr: float) -> Tensor[TrainB, D2]:
    """One SGD update on the inner backend, lifted back as a fresh leaf."""
    assert grad is not None
    return Tensor.from_inner(p.inner() - grad * lr).require_grad()


def run_steps(step: Callable[[int], None]) -> tuple[float, float]:
    """RSS (MB) after the warm-up and at the end of ``STEPS`` calls of ``step``."""
    after_warmup = 0.0
    for i in range(STEPS):
        step(i)
        if i == WARMUP:
            after_warmup = resident_mb()
    return after_warmup, resident_mb()


def test_training_loop_memory_is_flat() -> None:
    rng = np.random.default_rng(0)
    x = Tensor.from_numpy(rng.standard_normal((64, 100)).astype(np.float32), AD)
    y = Tensor.from_numpy(rng.standard_normal((64, 10)).astype(np.float32), AD)
    params = {
        "w1": param(rng.standard_normal((100, 256)) * 0.05),
        "b1": param(np.zeros((1, 256))),
        "w2": param(rng.standard_normal((256, 10)) * 0.05),
        "b2": param(np.zeros((1, 10))),
    }
    losses: list[float] = []

    def step(i: int) -> None:
        w1, b1, w2, b2 = params["w1"], params["b1"], params["w2"], params["b2"]
        h = activation.relu(x @ w1 + b1)
        out = h @ w2 + b2
        loss = ((out - y) ** 2.0).mean()
        if i % 5 == 4:
            # A forward whose graph is dropped without a backward.
            return
        grads = loss.backward()
        for name, p in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)):
            params[name] = sgd(p, p.grad(grads), 0.05)
        if i % 100 == 0:
            losses.append(loss.into_scalar())

    start, end = run_steps(step)
    assert losses[-1] < losses[0], f"training did not reduce the loss: {losses[0]} -> {losses[-1]}"
    assert end - start < MAX_GROWTH_MB, f"RSS grew {end - start:.1f} MB between step {WARMUP} and {STEPS}"


def test_graphs_dropped_without_backward_are_freed() -> None:
    rng = np.random.default_rng(1)
    w = param(rng.standard_normal((128, 128)))
    x = Tensor.from_numpy(rng.standard_normal((32, 128)).astype(np.float32), AD)

    def step(_: int) -> None:
        # A chain of recorded ops holding ~16 KB-64 KB per node.
        h = x
        for _ in range(4):
            h = activation.tanh(h @ w)
        h.sum()

    start, end = run_steps(step)
    assert end - start < MAX_GROWTH_MB, f"RSS grew {end - start:.1f} MB between step {WARMUP} and {STEPS}"


def test_retained_gradients_containers_do_not_keep_graphs_alive() -> None:
    # Keep every Gradients container of the run: each holds only the leaf
    # gradient (512 B), not the step's activations.
    rng = np.random.default_rng(2)
    w = param(rng.standard_normal((1, 128)))
    x = Tensor.from_numpy(rng.standard_normal((64, 128)).astype(np.float32), AD)
    kept: list[Any] = []

    def step(_: int) -> None:
        kept.append(activation.sigmoid(x * w).sum().backward())

    start, end = run_steps(step)
    assert len(kept) == STEPS
    assert end - start < MAX_GROWTH_MB, f"RSS grew {end - start:.1f} MB between step {WARMUP} and {STEPS}"
