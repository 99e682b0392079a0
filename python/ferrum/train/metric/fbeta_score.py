"""The F-beta score (Burn's ``FBetaScoreMetric``): a weighted harmonic mean of precision and recall."""

from __future__ import annotations

import math
from typing import Any

from typing_extensions import Self

from ferrum import D1, Float, Tensor
from ferrum.train.metric.classification import ClassificationMetricConfig, ClassReduction, Threshold, TopK
from ferrum.train.metric.confusion_stats import ConfusionStats, ConfusionStatsMetric
from ferrum.train.metric.naming import rust_display

__all__ = ["FBetaScoreMetric"]


class FBetaScoreMetric(ConfusionStatsMetric):
    """F-beta score in percent: (1 + b²) TP / ((1 + b²) TP + b² FN + FP).

    ``beta`` weighs recall against precision (``beta > 1`` favours recall,
    ``beta = 1`` is the F1 score). Build it with ``binary(beta, threshold)``,
    ``multiclass(beta, top_k, class_reduction)`` or
    ``multilabel(beta, threshold, class_reduction)``; the input is read as
    ``ConfusionStatsInput``. A class with no true, predicted or missed
    positive has no score and is left out of a macro average. Name
    ``"FBetaScore (<beta>) @ <rule> [<reduction>]"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import ConfusionStatsInput, MetricMetadata
        >>> d = NdArray.device()
        >>> scores = Tensor.from_floats([[0.3], [0.2], [0.7], [0.1], [0.55]], d)
        >>> targets = Tensor.from_bool([[False], [True], [False], [False], [True]], d)
        >>> metric = FBetaScoreMetric.binary(2.0, 0.5)
        >>> _ = metric.update(ConfusionStatsInput(scores, targets), MetricMetadata.fake())
        >>> metric.name(), round(metric.value().current(), 4)
        ('FBetaScore (2) @ Threshold(0.5) [Macro]', 50.0)
    """

    def __init__(self, beta: float = 1.0, config: ClassificationMetricConfig | None = None) -> None:
        if not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta >= 0):
            raise ValueError(f"FBetaScoreMetric: beta must be a finite number >= 0, found {beta!r}")
        super().__init__(
            f"FBetaScore ({rust_display(beta)})", ClassificationMetricConfig() if config is None else config
        )
        self.beta = float(beta)

    @classmethod
    def binary(cls, beta: float, threshold: float = 0.5) -> Self:
        """For binary classification: positive where the score is above ``threshold``."""
        return cls(beta, ClassificationMetricConfig(Threshold(threshold)))

    @classmethod
    def multiclass(
        cls, beta: float, top_k: int = 1, class_reduction: ClassReduction = ClassReduction.Macro
    ) -> Self:
        """For multiclass classification: the ``top_k`` highest scores of a sample are its predictions."""
        return cls(beta, ClassificationMetricConfig(TopK(top_k), class_reduction))

    @classmethod
    def multilabel(
        cls, beta: float, threshold: float = 0.5, class_reduction: ClassReduction = ClassReduction.Macro
    ) -> Self:
        """For multi-label classification: a label is predicted where its score is above ``threshold``."""
        return cls(beta, ClassificationMetricConfig(Threshold(threshold), class_reduction))

    def _score(self, stats: ConfusionStats) -> Tensor[Any, D1, Float]:
        beta2 = self.beta**2
        scaled_tp = stats.true_positive() * (1.0 + beta2)
        return scaled_tp / (scaled_tp + stats.false_negative() * beta2 + stats.false_positive())
