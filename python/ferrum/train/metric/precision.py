"""The precision metric (Burn's ``PrecisionMetric``): true positives over predicted positives."""

from __future__ import annotations

from typing import Any

from ferrum import D1, Float, Tensor
from ferrum.train.metric.confusion_stats import ConfusionRatioMetric, ConfusionStats

__all__ = ["PrecisionMetric"]


class PrecisionMetric(ConfusionRatioMetric):
    """Precision in percent: TP / (TP + FP), per class then averaged (``Macro``) or pooled (``Micro``).

    Build it with ``binary(threshold)``, ``multiclass(top_k, class_reduction)``
    or ``multilabel(threshold, class_reduction)``; the input is read as
    ``ConfusionStatsInput`` (see ``ferrum.train.metric.confusion_stats``). A
    class nothing was predicted for has no precision and is left out of a
    macro average; a batch with no predicted positive at all has none
    (NaN, weight 0). Name ``"Precision @ <rule> [<reduction>]"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train import ClassificationOutput
        >>> from ferrum.train.metric import ClassReduction, MetricMetadata
        >>> d = NdArray.device()
        >>> logits = Tensor.from_floats([[2, 0.1, 0.3], [0.2, 1.5, 0.1], [0.9, 0.1, 0.4], [0.1, 0.2, 3]], d)
        >>> targets = Tensor.from_ints([0, 1, 2, 2], d)
        >>> out = ClassificationOutput(Tensor.from_floats([0.7], d), logits, targets)
        >>> metric = PrecisionMetric.multiclass(1, ClassReduction.Micro)
        >>> _ = metric.update(out, MetricMetadata.fake())
        >>> metric.name(), metric.value().current()
        ('Precision @ TopK(1) [Micro]', 75.0)
    """

    label = "Precision"

    def _score(self, stats: ConfusionStats) -> Tensor[Any, D1, Float]:
        return stats.true_positive() / stats.predicted_positive()
