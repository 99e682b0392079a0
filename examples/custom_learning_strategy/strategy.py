"""The user's training strategy: a ``TrainingStrategy`` that watches and clips every step's gradients.

Burn's example replaces the whole fitting loop of the Learner and logs each
iteration. ferrum's Learner keeps its loop and asks the strategy at fixed
points: when an epoch starts and ends, and which gradients the optimizer
applies (``sync_gradients``; a data-parallel strategy averages them over the
ranks there). This one, training in this process alone, measures the global
L2 norm of each step's gradients, scales them down when it exceeds
``max_norm`` (clipping by global norm), and prints what it saw.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from ferrum.data.dataloader import DataLoader
from ferrum.module import Module
from ferrum.optim import GradientsParams
from ferrum.train.strategy import SingleDevice


class ClipAndReport(SingleDevice):
    """Clips each step's gradients to a global norm of ``max_norm``; reports every ``log_every`` steps."""

    def __init__(self, max_norm: float, log_every: int = 10) -> None:
        self.max_norm = max_norm
        self.log_every = log_every
        self.iteration = 0  # over the whole run
        self.clipped_total = 0
        self._norms: list[float] = []  # this epoch's
        self._clipped = 0

    def start_epoch(self, loader: DataLoader[Any], epoch: int) -> None:
        self._norms, self._clipped = [], 0
        print(f"[strategy] epoch {epoch}: {len(loader)} training batches, clipping at norm {self.max_norm}")

    def sync_gradients(self, grads: GradientsParams) -> GradientsParams:
        self.iteration += 1
        squares = 0.0
        for pid in grads.ids():
            grad = grads.get(pid)
            if grad is not None:
                squares += grad.square().sum().into_scalar()
        norm = math.sqrt(squares)
        self._norms.append(norm)
        clipped = norm > self.max_norm
        if clipped:
            scale = self.max_norm / norm
            for pid in grads.ids():
                grad = grads.get(pid)
                if grad is not None:
                    grads.register(pid, grad.mul_scalar(scale))
            self._clipped += 1
            self.clipped_total += 1
        if self.iteration % self.log_every == 0:
            note = f", clipped to {self.max_norm}" if clipped else ""
            print(f"[strategy] iteration {self.iteration}: gradient norm {norm:.3f}{note}")
        return grads

    def end_epoch(self, model: Module[Any], epoch: int) -> None:
        norms = self._norms
        print(
            f"[strategy] epoch {epoch} trained: {len(norms)} steps, gradient norm mean "
            f"{statistics.fmean(norms):.3f} max {max(norms):.3f}, {self._clipped} steps clipped"
        )

    def __repr__(self) -> str:
        return f"ClipAndReport(max_norm={self.max_norm}, log_every={self.log_every})"
