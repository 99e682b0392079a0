"""``Learner``: the model, its optimizer and its learning-rate schedule, stepped together (Burn's Learner).

``SupervisedTraining.launch(Learner(model, optimizer, lr))`` trains it. The
learning rate is a float (a constant) or an ``LrScheduler``; the scheduler
steps once per iteration, before the train step, as in Burn.

Example:
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.optim import AdamConfig
    >>> from ferrum.train import Learner
    >>> learner = Learner(LinearConfig(2, 1).init(Autodiff[NdArray].device()), AdamConfig().init(), 1e-3)
    >>> learner.lr_step()
    >>> learner.lr_current()
    0.001
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ferrum.lr_scheduler import LrScheduler, LrSchedulerLike, as_lr_scheduler
from ferrum.module import Module
from ferrum.optim import GradientsParams, Optimizer
from ferrum.train.step import TrainOutput

if TYPE_CHECKING:
    from ferrum.train.summary import LearnerSummary

__all__ = ["Learner", "LearningResult"]

M = TypeVar("M", bound=Module[Any])


class Learner(Generic[M]):
    """Everything that changes as a model trains: the model, the optimizer's state and the schedule.

    ``lr_scheduler`` is a learning rate (a float, constant) or a scheduler
    (``ferrum.lr_scheduler``); ``SupervisedTraining.launch`` trains it.

    Example:
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.nn import LinearConfig
        >>> from ferrum.optim import AdamConfig
        >>> learner = Learner(LinearConfig(2, 1).init(Autodiff[NdArray].device()), AdamConfig().init(), 1e-3)
        >>> learner.model.num_params()
        3
    """

    def __init__(self, model: M, optimizer: Optimizer[Any], lr_scheduler: LrSchedulerLike) -> None:
        if not isinstance(model, Module):
            raise TypeError(f"Learner trains a Module, found {type(model).__name__}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"Learner needs an optimizer (e.g. AdamConfig().init()), found {type(optimizer).__name__}"
            )
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler: LrScheduler = as_lr_scheduler(lr_scheduler)
        self._lr = 0.0

    def lr_current(self) -> float:
        """The learning rate of the current iteration (0.0 before the first ``lr_step``)."""
        return self._lr

    def lr_step(self) -> None:
        """Advance the schedule by one iteration."""
        self._lr = self.lr_scheduler.step()

    def train_step(self, batch: Any) -> TrainOutput[Any]:
        """The model's ``train_step`` on ``batch`` (forward, loss, backward)."""
        output = self.model.train_step(batch)  # type: ignore[attr-defined]
        if not isinstance(output, TrainOutput):
            raise TypeError(
                f"{type(self.model).__name__}.train_step must return a TrainOutput "
                f"(TrainOutput(self, loss.backward(), item)), found {type(output).__name__}"
            )
        return output

    def optimizer_step(self, grads: GradientsParams) -> None:
        """Update the model with ``grads`` at the current learning rate (``model.optimize`` if it has one)."""
        optimize = getattr(self.model, "optimize", None)
        if callable(optimize):
            self.model = optimize(self.optimizer, self._lr, grads)
        else:
            self.model = self.optimizer.step(self._lr, self.model, grads)

    def load_model(self, record: Mapping[str, Any]) -> None:
        """Replace the model's tensors (and parameter ids) with a record's."""
        self.model = self.model.load_record(record)

    def load_optim(self, record: Mapping[str, Any]) -> None:
        """Replace the optimizer's state with a record's."""
        self.optimizer = self.optimizer.load_record(record)

    def load_scheduler(self, record: Mapping[str, Any]) -> None:
        """Resume the schedule where a record left it."""
        self.lr_scheduler = self.lr_scheduler.load_record(record)

    def __repr__(self) -> str:
        return f"Learner({type(self.model).__name__}, {type(self.optimizer).__name__}, {self.lr_scheduler!r})"


@dataclass(frozen=True)
class LearningResult(Generic[M]):
    """What ``SupervisedTraining.launch`` returns (Burn's ``LearningResult``).

    ``model`` is the trained model on the inner backend (as ``valid()``
    gives it; mypy with ``ferrum.mypy`` types it so). ``summary`` holds every
    numeric metric's epoch values per split (min, max, last), whether or not
    ``summary()`` asked for it to be printed. ``stop_reason`` says why
    training ended before ``num_epochs`` (``None`` when it ran them all):
    an interrupt, early stopping, or a loss that was not finite.
    """

    model: M
    summary: LearnerSummary
    stop_reason: str | None = None
