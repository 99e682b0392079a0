"""The recall metric (Burn's ``RecallMetric``): true positives over actual positives."""

from __future__ import annotations

from typing import Any

from ferrum import D1, Float, Tensor
from ferrum.train.metric.confusion_stats import ConfusionRatioMetric, ConfusionStats

__all__ = ["RecallMetric"]


class RecallMetric(ConfusionRatioMetric):
    """Recall in percent: TP / (TP + FN), per class then averaged (``Macro``) or pooled (``Micro``).

    Build it with ``binary(threshold)``, ``multiclass(top_k, class_reduction)``
    or ``multilabel(threshold, class_reduction)``; the input is read as
    ``ConfusionStatsInput`` (see ``ferrum.train.metric.confusion_stats``). A
    class absent from the batch's targets has no recall and is left out of a
    macro average. Name ``"Recall @ <rule> [<reduction>]"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train import MultiLabelClassificationOutput
        >>> from ferrum.train.metric import ClassReduction, MetricMetadata
        >>> d = NdArray.device()
        >>> scores = Tensor.from_floats([[0.9, 0.2], [0.8, 0.7], [0.1, 0.3]], d)
        >>> targets = Tensor.from_ints([[1, 1], [1, 0], [0, 1]], d)
        >>> out = MultiLabelClassificationOutput(Tensor.from_floats([0.4], d), scores, targets)
        >>> metric = RecallMetric.multilabel(0.5, ClassReduction.Macro)
        >>> _ = metric.update(out, MetricMetadata.fake())
        >>> metric.name(), metric.value().current()
        ('Recall @ Threshold(0.5) [Macro]', 50.0)
    """

    label = "Recall"

    def _score(self, stats: ConfusionStats) -> Tensor[Any, D1, Float]:
        return stats.true_positive() / stats.positive()
