"""The learning-rate metric (Burn's ``LearningRateMetric``): the step's learning rate, from the metadata."""

from __future__ import annotations

from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import StateMetric

__all__ = ["LearningRateMetric"]


class LearningRateMetric(StateMetric):
    """The learning rate of each step (0 where there is none, as in validation). Name ``"Learning Rate"``.

    Reads ``metadata.lr``, not the item; each step weighs 1.

    Example:
        >>> from ferrum.data.dataloader import Progress
        >>> from ferrum.train.metric import MetricMetadata
        >>> metric = LearningRateMetric()
        >>> metric.update(None, MetricMetadata(Progress(1, 10), 1, 1, 1, lr=1e-3)).serialized
        '0.001,1'
    """

    higher_is_better = False

    def __init__(self) -> None:
        super().__init__("Learning Rate")

    def update(self, item: object, metadata: MetricMetadata) -> MetricEntry:
        """Record ``metadata.lr`` (0.0 when ``None``)."""
        return self._record(0.0 if metadata.lr is None else float(metadata.lr), 1)
