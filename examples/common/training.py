"""Learner settings that several examples share: early stopping on the validation loss.

``mnist`` and ``custom_learning_strategy`` stop as Burn's examples do, when
the mean validation loss has not reached a new low for ``patience`` epochs.
"""

from __future__ import annotations

from ferrum.train import Aggregate, Direction, MetricEarlyStoppingStrategy, Split, StoppingCondition
from ferrum.train.metric import LossMetric


def stop_when_valid_loss_stalls(patience: int) -> MetricEarlyStoppingStrategy:
    """Stops the run once ``patience`` epochs in a row bring no lower mean validation loss."""
    return MetricEarlyStoppingStrategy(
        LossMetric(),
        Aggregate.Mean,
        Direction.Lowest,
        Split.Valid,
        StoppingCondition.NoImprovementSince(patience),
    )
