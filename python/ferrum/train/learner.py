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
from ferrum.train.precision import MixedPrecision, Precision
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

    def __init__(
        self,
        model: M,
        optimizer: Optimizer[Any],
        lr_scheduler: LrSchedulerLike,
        *,
        precision: Precision | MixedPrecision | None = None,
    ) -> None:
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
        # None trains in the model's own dtype; SupervisedTraining.with_precision sets it at launch.
        self.precision: MixedPrecision | None = None
        if precision is not None:
            self.set_precision(precision)

    def set_precision(self, precision: Precision | MixedPrecision) -> None:
        """Train in ``precision`` from the next step on: ``Precision.BF16_MIXED``, ``F16_MIXED``, ``FULL``
        (or a ``MixedPrecision`` holding a ``GradScaler`` of one's own); see ``ferrum.train.precision``."""
        if isinstance(precision, MixedPrecision):
            self.precision = precision
        elif isinstance(precision, Precision):
            self.precision = MixedPrecision(precision)
        else:
            raise TypeError(
                f"set_precision takes a Precision or a MixedPrecision, found {type(precision).__name__}"
            )

    def lr_current(self) -> float:
        """The learning rate of the current iteration (0.0 before the first ``lr_step``)."""
        return self._lr

    def lr_step(self) -> None:
        """Advance the schedule by one iteration."""
        self._lr = self.lr_scheduler.step()

    def train_step(self, batch: Any) -> TrainOutput[Any]:
        """The model's ``train_step`` on ``batch`` (forward, loss, backward).

        Under a mixed precision the step runs on a bf16/f16 working copy of the model
        with the batch cast alike; the ``TrainOutput`` returned holds f32 gradients
        (unscaled) and the item in f32.
        """
        mixed = self.precision
        if mixed is None or not mixed.precision.is_mixed:
            return self._checked(self.model.train_step(batch))  # type: ignore[attr-defined]
        working = mixed.working_copy(self.model)
        with mixed._scope() as scope:
            output = self._checked(working.train_step(mixed.cast_batch(batch)))  # type: ignore[attr-defined]
        if mixed.scaler is not None and not scope.scaled:
            raise RuntimeError(
                f"{type(self.model).__name__}.train_step ran in {mixed.precision.name}, which scales the "
                "loss: call ferrum.train.scale_loss(loss).backward() there instead of loss.backward() "
                "(in f32 and bf16 scale_loss returns the loss itself)"
            )
        mixed.sync_states(self.model, working)
        return TrainOutput(self.model, mixed.master_grads(output.grads, working), mixed.to_full(output.item))

    def _checked(self, output: object) -> TrainOutput[Any]:
        if not isinstance(output, TrainOutput):
            raise TypeError(
                f"{type(self.model).__name__}.train_step must return a TrainOutput "
                f"(TrainOutput(self, loss.backward(), item)), found {type(output).__name__}"
            )
        return output

    def optimizer_step(self, grads: GradientsParams) -> None:
        """Update the model with ``grads`` at the current learning rate (``model.optimize`` if it has one).

        Under ``F16_MIXED`` a step whose gradients are not finite is skipped and the loss scale backs off.
        """
        if self.precision is not None and not self.precision.check_grads(grads):
            return
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
        base = f"Learner({type(self.model).__name__}, {type(self.optimizer).__name__}, {self.lr_scheduler!r}"
        if self.precision is not None and self.precision.precision.is_mixed:
            base += f", precision={self.precision.precision.name}"
        return base + ")"


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
