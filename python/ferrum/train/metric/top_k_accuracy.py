"""The top-k accuracy metric (Burn's ``TopKAccuracyMetric``), with an optional pad token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeVar, runtime_checkable

from ferrum.backend import Backend
from ferrum.train.metric.accuracy import count_hits
from ferrum.train.metric.adaptor import (
    ClassificationFields,
    ClassificationInput,
    adapt,
)
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import PadTokenMetric

__all__ = ["TopKAccuracyAdaptor", "TopKAccuracyInput", "TopKAccuracyItem", "TopKAccuracyMetric"]

B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class TopKAccuracyInput(ClassificationInput[B]):
    """The top-k accuracy metric's input: ``outputs`` Float [batch, classes], ``targets`` Int [batch].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> TopKAccuracyInput(Tensor.from_floats([[0.1, 0.9]], d), Tensor.from_ints([1], d)).outputs.dims()
        (1, 2)
    """

    adaptor_method = "top_k_accuracy_input"


@runtime_checkable
class TopKAccuracyAdaptor(Protocol):
    """An output that gives the top-k accuracy metric's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def top_k_accuracy_input(self) -> TopKAccuracyInput[Any]: ...
        >>> isinstance(StepOutput(), TopKAccuracyAdaptor)
        True
    """

    def top_k_accuracy_input(self) -> TopKAccuracyInput[Any]:
        """The step output's input to TopKAccuracyMetric."""
        ...


TopKAccuracyItem: TypeAlias = TopKAccuracyInput[Any] | TopKAccuracyAdaptor | ClassificationFields
"""What ``TopKAccuracyMetric.update`` accepts."""


class TopKAccuracyMetric(PadTokenMetric):
    """Top-k accuracy in percent: the share of samples whose target is among their ``k`` highest outputs.

    ``k = 1`` is the accuracy. Targets equal to the pad token are left out,
    as in ``AccuracyMetric``. Name ``"Top-K Accuracy @ TopK(k)"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> outputs = Tensor.from_floats([[0, 0.2, 0.8], [1, 2, 0.5], [0.4, 0.1, 0.2], [0.6, 0.7, 0.2]], d)
        >>> metric = TopKAccuracyMetric(2)
        >>> top_k_input = TopKAccuracyInput(outputs, Tensor.from_ints([2, 2, 1, 1], d))
        >>> _ = metric.update(top_k_input, MetricMetadata.fake())
        >>> metric.name(), metric.value().current()
        ('Top-K Accuracy @ TopK(2)', 50.0)
    """

    def __init__(self, k: int, pad_token: int | None = None) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"TopKAccuracyMetric: k must be an int >= 1, found {k!r}")
        super().__init__(f"Top-K Accuracy @ TopK({k})", pad_token)
        self.k = k

    def update(self, item: TopKAccuracyItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's top-k accuracy (percent)."""
        acc = adapt(item, TopKAccuracyInput, self._name)
        num_classes = acc.outputs.dims()[1]
        if self.k > num_classes:
            raise ValueError(
                f"metric {self._name!r}: k = {self.k} is more than the {num_classes} classes of the outputs"
            )
        top_k = acc.outputs.topk_with_indices(self.k, 1)[1]
        return self._record_share(*count_hits(top_k, acc.targets, self.pad_token))
