"""Confusion statistics (Burn's ``ConfusionStats``) and the metrics built on them.

Precision, recall and the F-beta score read a ``ConfusionStatsInput``:
scores [samples, classes] and a boolean target mask of the same shape. A
decision rule turns the scores into a predicted mask; each sample/class
cell is then a true or false positive or negative, counted over samples
(and over classes too, for a micro reduction).

From Burn's outputs the input is built as Burn's ``Adaptor`` impls do: for
a ``ClassificationOutput`` (targets [batch] class indices) the targets are
one-hot encoded over the output's classes (or, with a single output
column, the targets themselves are the binary mask); for a
``MultiLabelClassificationOutput`` (targets [batch, labels] of 0/1) the
targets are the mask. The scores are the output as it is: logits, unless
the step gives probabilities, so choose the threshold accordingly (top-k
rules do not care).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

from typing_extensions import Self

from ferrum import D1, D2, Bool, Float, Int, Tensor
from ferrum.backend import Backend
from ferrum.train.metric.adaptor import (
    ClassificationFields,
    MetricInput,
    MissingField,
    MultiLabelFields,
    adapt,
    article,
    check_same_shape,
    check_tensor,
    read_field,
)
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.classification import ClassificationMetricConfig, ClassReduction, Threshold, TopK
from ferrum.train.metric.state_metric import StateMetric

__all__ = [
    "ConfusionStats",
    "ConfusionStatsAdaptor",
    "ConfusionStatsInput",
    "ConfusionStatsItem",
    "ConfusionStatsMetric",
    "class_average",
]

B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class ConfusionStatsInput(MetricInput, Generic[B]):
    """Input of precision, recall and F-beta: ``predictions`` Float [samples, classes], ``targets`` Bool.

    ``targets`` [samples, classes] marks each sample's true classes
    (one-hot for single-label classification).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> ConfusionStatsInput(Tensor.from_floats([[0.3], [0.7]], d), Tensor.from_bool([[False], [True]], d))
        ConfusionStatsInput(predictions=..., targets=...)
    """

    predictions: Tensor[B, D2, Float]
    targets: Tensor[B, D2, Bool]

    adaptor_method = "confusion_stats_input"
    fields_description = (
        "the fields `output` (Float [batch, classes]) and `targets` (Int [batch] class indices, "
        "or Int/Bool [batch, classes] 0/1 labels)"
    )

    def __post_init__(self) -> None:
        check_tensor("ConfusionStatsInput", "predictions", self.predictions, 2, (Float,))
        check_tensor("ConfusionStatsInput", "targets", self.targets, 2, (Bool,))
        check_same_shape("ConfusionStatsInput", self.predictions, self.targets, "predictions and targets")

    def __repr__(self) -> str:
        return "ConfusionStatsInput(predictions=..., targets=...)"

    @classmethod
    def from_fields(cls, item: object) -> Self:
        """Burn's adaptation of a ``ClassificationOutput`` or a ``MultiLabelClassificationOutput``."""
        output = read_field(item, "output", 2, Float)
        targets = getattr(item, "targets", None)
        if isinstance(targets, Tensor) and targets.rank() == 1 and targets.kind is Int:
            num_classes = output.dims()[1]
            if num_classes > 1:
                return cls(output, targets.one_hot(num_classes).bool())
            return cls(output, targets.unsqueeze_dim(1).bool())
        if isinstance(targets, Tensor) and targets.rank() == 2 and targets.kind in (Int, Bool):
            return cls(output, targets if targets.kind is Bool else targets.bool())
        found = "no field `targets`" if targets is None else f"its `targets` is {_describe(targets)}"
        raise MissingField(found)


def _describe(value: object) -> str:
    if isinstance(value, Tensor):
        return f"{article(value.kind.__name__)} tensor {value.dims()}"
    return article(type(value).__name__)


@runtime_checkable
class ConfusionStatsAdaptor(Protocol):
    """An output that gives the confusion-stats input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def confusion_stats_input(self) -> ConfusionStatsInput[Any]: ...
        >>> isinstance(StepOutput(), ConfusionStatsAdaptor)
        True
    """

    def confusion_stats_input(self) -> ConfusionStatsInput[Any]:
        """The step output's input to the confusion-matrix metrics (precision, recall, F-beta)."""
        ...


ConfusionStatsItem: TypeAlias = (
    ConfusionStatsInput[Any] | ConfusionStatsAdaptor | ClassificationFields | MultiLabelFields
)
"""What precision, recall and F-beta accept in ``update``."""


class ConfusionStats:
    """True/false positives and negatives of predictions against targets, per class or pooled.

    Each count is a Float tensor: [classes] with ``Macro``, [1] with ``Micro``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> scores = Tensor.from_floats([[0.3], [0.2], [0.7], [0.1], [0.55]], d)
        >>> targets = Tensor.from_bool([[False], [True], [False], [False], [True]], d)
        >>> stats = ConfusionStats(ConfusionStatsInput(scores, targets), ClassificationMetricConfig())
        >>> stats.true_positive().to_numpy(), stats.false_positive().to_numpy()
        (array([1.], dtype=float32), array([1.], dtype=float32))
    """

    def __init__(self, stats_input: ConfusionStatsInput[Any], config: ClassificationMetricConfig) -> None:
        predictions = stats_input.predictions
        rule = config.decision_rule
        if isinstance(rule, Threshold):
            predicted = predictions.greater_elem(rule.value)
        else:
            predicted = _top_k_mask(predictions, rule)
        # 0: true negative, 1: false positive, 2: false negative, 3: true positive.
        self._cells = predicted.int() + stats_input.targets.int() * 2
        self.class_reduction = config.class_reduction

    def _count(self, cell: int) -> Tensor[Any, D1, Float]:
        mask = self._cells.equal_elem(cell).float()
        if self.class_reduction is ClassReduction.Micro:
            return mask.sum()
        return mask.sum_dim(0).reshape((mask.dims()[1],))

    def true_positive(self) -> Tensor[Any, D1, Float]:
        """Predicted and true."""
        return self._count(3)

    def true_negative(self) -> Tensor[Any, D1, Float]:
        """Neither predicted nor true."""
        return self._count(0)

    def false_positive(self) -> Tensor[Any, D1, Float]:
        """Predicted but not true."""
        return self._count(1)

    def false_negative(self) -> Tensor[Any, D1, Float]:
        """True but not predicted."""
        return self._count(2)

    def positive(self) -> Tensor[Any, D1, Float]:
        """True: true positives + false negatives."""
        return self.true_positive() + self.false_negative()

    def negative(self) -> Tensor[Any, D1, Float]:
        """Not true: true negatives + false positives."""
        return self.true_negative() + self.false_positive()

    def predicted_positive(self) -> Tensor[Any, D1, Float]:
        """Predicted: true positives + false positives."""
        return self.true_positive() + self.false_positive()

    def support(self) -> Tensor[Any, D1, Float]:
        """Every cell counted: positives + negatives."""
        return self.positive() + self.negative()

    def ratio_of_support(self, counts: Tensor[Any, D1, Float]) -> Tensor[Any, D1, Float]:
        """``counts`` divided by the support."""
        return counts / self.support()


def _top_k_mask(predictions: Tensor[Any, D2, Float], rule: TopK) -> Tensor[Any, D2, Bool]:
    batch_size, num_classes = predictions.dims()
    if rule.k > num_classes:
        raise ValueError(
            f"TopK({rule.k}) needs at least {rule.k} classes, the predictions have {num_classes}"
        )
    indices = predictions.topk_with_indices(rule.k, 1)[1]
    ones = Tensor.ones((batch_size, rule.k), predictions.device())
    return predictions.zeros_like().scatter(1, indices, ones).bool()


def class_average(per_class: Tensor[Any, D1, Float], class_reduction: ClassReduction) -> float:
    """One value from a metric's per-class (``Macro``) or pooled (``Micro``, [1]) values, in one sync.

    ``Macro`` averages the classes whose value is defined (not NaN); NaN if none is.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> per_class = Tensor.from_floats([0.5, float("nan"), 1.0], NdArray.device())
        >>> class_average(per_class, ClassReduction.Macro)
        0.75
    """
    if class_reduction is ClassReduction.Micro:
        return float(per_class.into_scalar())
    undefined = per_class.is_nan()
    total = per_class.mask_fill(undefined, 0.0).sum()
    defined = undefined.bool_not().float().sum()
    return float((total / defined).into_scalar())


class ConfusionStatsMetric(StateMetric, abc.ABC):
    """Base of the metrics computed from ``ConfusionStats``, in percent, named ``"<label> @ <config>"``.

    A subclass gives ``_score``: the per-class (or pooled) metric from the stats.

    Example:
        >>> from typing import Any
        >>> from ferrum import D1, Float, Tensor
        >>> class Specificity(ConfusionStatsMetric):
        ...     def _score(self, stats: ConfusionStats) -> Tensor[Any, D1, Float]:
        ...         return stats.true_negative() / stats.negative()
        >>> Specificity("Specificity", ClassificationMetricConfig()).name()
        'Specificity @ Threshold(0.5) [Macro]'
    """

    def __init__(self, label: str, config: ClassificationMetricConfig) -> None:
        super().__init__(f"{label} @ {config.describe()}", unit="%")
        self.config = config

    @abc.abstractmethod
    def _score(self, stats: ConfusionStats) -> Tensor[Any, D1, Float]:
        """The per-class (or aggregated) score from the batch's confusion counts."""

    def update(self, item: ConfusionStatsItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's value (percent), weighted by its number of samples."""
        stats_input = adapt(item, ConfusionStatsInput, self._name)
        samples = stats_input.predictions.dims()[0]
        if samples == 0:
            return self._record(math.nan, 0)
        stats = ConfusionStats(stats_input, self.config)
        value = class_average(self._score(stats), self.config.class_reduction)
        return self._record(100.0 * value, samples)


class ConfusionRatioMetric(ConfusionStatsMetric):
    """Base of precision and recall: Burn's ``binary``, ``multiclass`` and ``multilabel`` constructors.

    A subclass sets ``label`` and gives ``_score``; the default config is ``Threshold(0.5)``, ``Macro``.

    Example:
        >>> from ferrum.train.metric import PrecisionMetric
        >>> PrecisionMetric.multiclass(2, ClassReduction.Micro).config
        ClassificationMetricConfig(decision_rule=TopK(k=2), class_reduction=<ClassReduction.Micro: 'Micro'>)
    """

    label = ""

    def __init__(self, config: ClassificationMetricConfig | None = None) -> None:
        super().__init__(self.label, ClassificationMetricConfig() if config is None else config)

    @classmethod
    def binary(cls, threshold: float = 0.5) -> Self:
        """For binary classification: positive where the score is above ``threshold``."""
        return cls(ClassificationMetricConfig(Threshold(threshold)))

    @classmethod
    def multiclass(cls, top_k: int = 1, class_reduction: ClassReduction = ClassReduction.Macro) -> Self:
        """For multiclass classification: the ``top_k`` highest scores of a sample are its predictions."""
        return cls(ClassificationMetricConfig(TopK(top_k), class_reduction))

    @classmethod
    def multilabel(
        cls, threshold: float = 0.5, class_reduction: ClassReduction = ClassReduction.Macro
    ) -> Self:
        """For multi-label classification: a label is predicted where its score is above ``threshold``."""
        return cls(ClassificationMetricConfig(Threshold(threshold), class_reduction))
