"""One epoch of training and one of validation: Burn's ``SingleDeviceTrainEpoch``/``ValidEpoch``.

A training step: the scheduler's learning rate for this iteration, the
model's ``train_step``, a check that the loss is finite, the optimizer step
(or the gradients added up, with gradient accumulation), then the output to
the metrics. A validation step: ``inference_step`` of the inner-backend
model, then the output to the metrics. Both stop after the current step
when the interrupter is set.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any

from ferrum.data.dataloader import DataLoader, DataLoaderIterator, Progress
from ferrum.distributed.strategy import SingleDevice, TrainingStrategy
from ferrum.optim import GradientsAccumulator
from ferrum.train.interrupter import Interrupter
from ferrum.train.learner import Learner
from ferrum.train.processor import EventProcessor, is_finite, loss_value
from ferrum.train.store import Split

__all__ = ["EpochResult", "report", "train_epoch", "valid_epoch"]

_log = logging.getLogger("ferrum.train")


@dataclass(frozen=True)
class EpochResult:
    """How a split's epoch went: steps and items done, and why it ended early (``None``: it ran through).

    ``diverged``: it stopped on a loss that was not finite.
    """

    iterations: int
    items: int
    stop_reason: str | None = None
    diverged: bool = False

    @property
    def complete(self) -> bool:
        """Whether every batch was seen."""
        return self.stop_reason is None


def report(message: str, *, error: bool = False) -> None:
    """Log ``message`` (to ``experiment.log``) and show it on stderr, where progress output won't hide it."""
    (_log.error if error else _log.warning)(message)
    print(f"\nferrum.train: {message}", file=sys.stderr, flush=True)


def _interrupted(interrupter: Interrupter) -> str:
    return f"interrupted ({interrupter.get_message() or 'reason unknown'})"


def _start(
    loader: DataLoader[Any], processor: EventProcessor, split: Split, epoch: int, epoch_total: int, what: str
) -> tuple[DataLoaderIterator[Any], Progress]:
    """Log the epoch's start, begin iterating ``loader``, tell ``processor``: the iterator, its progress."""
    _log.info("epoch %d/%d: %s", epoch, epoch_total, what)
    iterator = iter(loader)
    progress = iterator.progress()
    processor.start(split, epoch, epoch_total, progress.items_total)
    return iterator, progress


def train_epoch(
    learner: Learner[Any],
    loader: DataLoader[Any],
    epoch: int,
    epoch_total: int,
    accumulation: int | None,
    processor: EventProcessor,
    interrupter: Interrupter,
    strategy: TrainingStrategy | None = None,
) -> EpochResult:
    """Train ``learner`` on one pass over ``loader``.

    Under a data-parallel ``strategy`` the ranks step in lockstep: the
    gradients are averaged over ranks before each optimizer step, and a
    non-finite loss or an interrupt on any rank stops every rank at the same step.
    """
    strategy = strategy or SingleDevice()
    iterator, progress = _start(loader, processor, Split.Train, epoch, epoch_total, "training")
    accumulator: GradientsAccumulator[Any] | None = GradientsAccumulator() if accumulation else None
    pending = 0
    iteration = 0
    stop: str | None = None
    diverged = False
    with iterator:
        for batch in iterator:
            iteration += 1
            learner.lr_step()
            output = learner.train_step(batch)
            loss = loss_value(output.item)
            if strategy.agree(not is_finite(loss)):
                diverged = True
                at = f"at epoch {epoch}, iteration {iteration}"
                if is_finite(loss):
                    stop = f"the training loss of another rank is not finite {at}"
                else:
                    stop = f"the training loss is {loss} {at}"
                report(
                    f"{stop}: training stopped; the model returned is the one before this step", error=True
                )
                break
            if accumulator is None:
                learner.optimizer_step(strategy.sync_gradients(output.grads))
            else:
                accumulator.accumulate(learner.model, output.grads)
                pending += 1
                if pending == accumulation:
                    learner.optimizer_step(strategy.sync_gradients(accumulator.grads()))
                    pending = 0
            progress = iterator.progress()
            processor.process(
                Split.Train, output.item, progress, epoch, epoch_total, iteration, learner.lr_current()
            )
            if strategy.agree(interrupter.should_stop()):
                here = interrupter.should_stop()
                stop = _interrupted(interrupter) if here else "interrupted on another rank"
                break
    if accumulator is not None and pending and not diverged:
        # The last batches of an epoch count, even when fewer than `accumulation` are left.
        learner.optimizer_step(strategy.sync_gradients(accumulator.grads()))
    processor.end(Split.Train, epoch, epoch_total, iteration, progress)
    return EpochResult(iteration, progress.items_processed, stop, diverged)


def valid_epoch(
    model: Any,
    loader: DataLoader[Any],
    epoch: int,
    epoch_total: int,
    processor: EventProcessor,
    interrupter: Interrupter,
    split: Split = Split.Valid,
) -> EpochResult:
    """Run ``model.inference_step`` (a model on the inner backend) over ``loader``.

    ``split`` is ``Split.Valid`` for the Learner's validation and ``Split.Test`` for an evaluation
    (``Evaluator.eval``, which runs it as epoch 1 of 1).
    """
    what = "validation" if split is Split.Valid else "evaluation"
    iterator, progress = _start(loader, processor, split, epoch, epoch_total, what)
    iteration = 0
    stop: str | None = None
    warned = False
    with iterator:
        for batch in iterator:
            iteration += 1
            output = model.inference_step(batch)
            if not warned:
                loss = loss_value(output)
                if not is_finite(loss):
                    warned = True
                    report(f"the {what} loss is {loss} at epoch {epoch}, iteration {iteration}")
            progress = iterator.progress()
            processor.process(split, output, progress, epoch, epoch_total, iteration, None)
            if interrupter.should_stop():
                stop = _interrupted(interrupter)
                break
    processor.end(split, epoch, epoch_total, iteration, progress)
    return EpochResult(iteration, progress.items_processed, stop)
