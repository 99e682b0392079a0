"""Metrics for the Learner (Burn's ``burn_train::metric``).

Each metric is computed as Burn computes it: a value per batch, and an
epoch value that is the mean of the batch values weighted by their counts
(samples, or the tokens a batch scores). Pass them to the Learner
(``SupervisedTraining(...).metrics(AccuracyMetric(), LossMetric())``) or
call ``update(item, metadata)`` yourself. The system metrics (``CpuUse``,
``CpuMemory``, ``CpuTemperature``) need the ``sys-metrics`` extra
(``pip install 'ferrum-dl[sys-metrics]'``, which brings psutil).

How a metric reads a step's output (Burn's ``Adaptor``)
--------------------------------------------------------
Every metric reads one input type: ``LossInput``, ``AccuracyInput``,
``TopKAccuracyInput``, ``ConfusionStatsInput`` (precision, recall,
F-beta), ``HammingScoreInput``, ``PerplexityInput``, ``AurocInput``,
``CerInput``, ``WerInput``, ``DiceInput``. An output gives it in one of
two ways (or is the input itself):

1. **Structurally**, with the fields of Burn's output types: ``loss``
   (Float [1]), ``output`` and ``targets``. ``ClassificationOutput``,
   ``MultiLabelClassificationOutput`` and ``RegressionOutput`` have them,
   and so does any class of yours with the same fields. The metric builds
   its input as Burn's ``Adaptor`` impls do: e.g. the confusion-stats
   input one-hot encodes class-index targets [batch], and takes 0/1 label
   targets [batch, labels] as the mask. Protocols such as
   ``ClassificationFields`` and ``MultiLabelFields`` let mypy check such a
   class.
2. **Explicitly**, with a method named after the input in snake case that
   returns it: ``loss_input()``, ``accuracy_input()``,
   ``top_k_accuracy_input()``, ``confusion_stats_input()``,
   ``hamming_score_input()``, ``perplexity_input()``, ``auroc_input()``,
   ``cer_input()``, ``wer_input()``, ``dice_input()``. The protocols
   ``LossAdaptor``, ``AccuracyAdaptor``, ... name them for mypy. A method
   wins over fields of the same output.

An output that gives neither is a ``TypeError`` naming the metric, the
output's class and what the metric needed.

Example:
    >>> from dataclasses import dataclass
    >>> from typing import Any
    >>> from ferrum import D1, D2, Float, Int, Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.train.metric import (
    ...     AccuracyInput, AccuracyMetric, LossMetric, MetricMetadata, TopKAccuracyMetric
    ... )
    >>> @dataclass
    ... class StepOutput:  # structural: Burn's field names
    ...     loss: Tensor[Any, D1, Float]
    ...     logits: Tensor[Any, D2, Float]
    ...     labels: Tensor[Any, D1, Int]
    ...     def accuracy_input(self) -> AccuracyInput[Any]:  # explicit: names differ
    ...         return AccuracyInput(self.logits, self.labels)
    >>> d = NdArray.device()
    >>> out = StepOutput(Tensor.from_floats([0.3], d), Tensor.from_floats([[0.1, 0.9], [0.8, 0.2]], d),
    ...                  Tensor.from_ints([1, 1], d))
    >>> AccuracyMetric().update(out, MetricMetadata.fake()).formatted
    'epoch 50.00 % - batch 50.00 %'
    >>> LossMetric().update(out, MetricMetadata.fake()).serialized
    '0.30000001192092896,1'
    >>> TopKAccuracyMetric(1).update(out, MetricMetadata.fake())
    Traceback (most recent call last):
    ...
    TypeError: metric 'Top-K Accuracy @ TopK(1)' cannot read its input from a StepOutput: ...
"""

from ferrum.train.metric.accuracy import AccuracyAdaptor, AccuracyInput, AccuracyItem, AccuracyMetric
from ferrum.train.metric.adaptor import ClassificationFields, LossFields, MetricInput, MultiLabelFields, adapt
from ferrum.train.metric.auroc import AurocAdaptor, AurocInput, AurocItem, AurocMetric
from ferrum.train.metric.base import Metric, MetricEntry, MetricMetadata, Numeric, NumericEntry, format_float
from ferrum.train.metric.cer import CerAdaptor, CerInput, CerItem, CharErrorRate
from ferrum.train.metric.classification import (
    ClassificationMetricConfig,
    ClassReduction,
    DecisionRule,
    Threshold,
    TopK,
)
from ferrum.train.metric.confusion_stats import (
    ConfusionStats,
    ConfusionStatsAdaptor,
    ConfusionStatsInput,
    ConfusionStatsItem,
)
from ferrum.train.metric.cpu_memory import CpuMemory
from ferrum.train.metric.cpu_temperature import CpuTemperature
from ferrum.train.metric.cpu_use import CpuUse
from ferrum.train.metric.edit_distance import TokenSequencesFields
from ferrum.train.metric.fbeta_score import FBetaScoreMetric
from ferrum.train.metric.hamming import HammingScore, HammingScoreAdaptor, HammingScoreInput, HammingScoreItem
from ferrum.train.metric.iteration_speed import IterationSpeedMetric
from ferrum.train.metric.learning_rate import LearningRateMetric
from ferrum.train.metric.loss import LossAdaptor, LossInput, LossItem, LossMetric
from ferrum.train.metric.perplexity import (
    PerplexityAdaptor,
    PerplexityInput,
    PerplexityItem,
    PerplexityMetric,
)
from ferrum.train.metric.precision import PrecisionMetric
from ferrum.train.metric.recall import RecallMetric
from ferrum.train.metric.state import FormatOptions, NumericMetricState
from ferrum.train.metric.state_metric import PadTokenMetric, StateMetric
from ferrum.train.metric.top_k_accuracy import (
    TopKAccuracyAdaptor,
    TopKAccuracyInput,
    TopKAccuracyItem,
    TopKAccuracyMetric,
)
from ferrum.train.metric.vision import DiceAdaptor, DiceInput, DiceItem, DiceMetric, DiceMetricConfig
from ferrum.train.metric.wer import WerAdaptor, WerInput, WerItem, WordErrorRate

__all__ = [
    "AccuracyAdaptor",
    "AccuracyInput",
    "AccuracyItem",
    "AccuracyMetric",
    "AurocAdaptor",
    "AurocInput",
    "AurocItem",
    "AurocMetric",
    "CerAdaptor",
    "CerInput",
    "CerItem",
    "CharErrorRate",
    "ClassReduction",
    "ClassificationFields",
    "ClassificationMetricConfig",
    "ConfusionStats",
    "ConfusionStatsAdaptor",
    "ConfusionStatsInput",
    "ConfusionStatsItem",
    "CpuMemory",
    "CpuTemperature",
    "CpuUse",
    "DecisionRule",
    "DiceAdaptor",
    "DiceInput",
    "DiceItem",
    "DiceMetric",
    "DiceMetricConfig",
    "FBetaScoreMetric",
    "FormatOptions",
    "HammingScore",
    "HammingScoreAdaptor",
    "HammingScoreInput",
    "HammingScoreItem",
    "IterationSpeedMetric",
    "LearningRateMetric",
    "LossAdaptor",
    "LossFields",
    "LossInput",
    "LossItem",
    "LossMetric",
    "Metric",
    "MetricEntry",
    "MetricInput",
    "MetricMetadata",
    "MultiLabelFields",
    "Numeric",
    "NumericEntry",
    "NumericMetricState",
    "PadTokenMetric",
    "PerplexityAdaptor",
    "PerplexityInput",
    "PerplexityItem",
    "PerplexityMetric",
    "PrecisionMetric",
    "RecallMetric",
    "StateMetric",
    "Threshold",
    "TokenSequencesFields",
    "TopK",
    "TopKAccuracyAdaptor",
    "TopKAccuracyInput",
    "TopKAccuracyItem",
    "TopKAccuracyMetric",
    "WerAdaptor",
    "WerInput",
    "WerItem",
    "WordErrorRate",
    "adapt",
    "format_float",
]
