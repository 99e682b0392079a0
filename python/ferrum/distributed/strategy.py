"""How the Learner trains: alone, or as one rank of a data-parallel job (Burn's ``TrainingStrategy``).

A strategy answers the questions that differ between the two: is this the
rank that logs, renders and writes checkpoints; what the gradients of a step
are once every rank's are combined; what a metric value is across ranks; and
whether the ranks agree to stop. ``SingleDevice`` answers them for one
process; ``ferrum.distributed.DataParallel`` for an MPI job.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ferrum.data.dataloader import DataLoader
from ferrum.module import Module
from ferrum.optim import GradientsParams

M = TypeVar("M", bound=Module[Any])

__all__ = ["SingleDevice", "TrainingStrategy"]


class TrainingStrategy:
    """One process's part in training; the base trains alone (every method is the single-process answer).

    Example:
        >>> strategy = SingleDevice()
        >>> strategy.is_main, strategy.agree(True), strategy.world_size
        (True, True, 1)
    """

    @property
    def is_main(self) -> bool:
        """Whether this process logs, renders, validates and writes checkpoints."""
        return True

    @property
    def world_size(self) -> int:
        """The number of processes training together."""
        return 1

    def prepare_model(self, model: M) -> M:
        """The model every process starts from."""
        return model

    def prepare_loader(self, loader: DataLoader[Any]) -> DataLoader[Any]:
        """The training loader of this process (its share of each epoch)."""
        return loader

    def require_same(self, what: str, value: object) -> None:
        """Called at launch with each setting every process must share (``"optimizer"``: the optimizer);
        data-parallel: raises when the ranks' settings differ."""

    def start_epoch(self, loader: DataLoader[Any], epoch: int) -> None:
        """Called before training epoch ``epoch`` on ``loader`` (data-parallel: the ranks must agree)."""

    def end_epoch(self, model: Module[Any], epoch: int) -> None:
        """Called on every process once training epoch ``epoch`` ended, before validation
        (data-parallel: the ranks' parameters must still be equal)."""

    def sync_gradients(self, grads: GradientsParams) -> GradientsParams:
        """The gradients the optimizer applies: this step's, combined over processes."""
        return grads

    def reduce_sum(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``values`` summed elementwise over processes (the metric exchange)."""
        return values

    def agree(self, flag: bool) -> bool:
        """Whether any process passed True: every process stops together."""
        return flag

    def decide(self, flag: bool) -> bool:
        """The main process's ``flag``, on every process (decisions made where validation ran)."""
        return flag

    def failed(self, error: BaseException) -> None:
        """This process raised ``error``; the others should stop too."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SingleDevice(TrainingStrategy):
    """Train in this process only (the default unless launched under ``mpiexec`` with several ranks)."""
