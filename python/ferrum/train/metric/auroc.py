"""The AUROC metric (Burn's ``AurocMetric``): area under the ROC curve of a binary classifier."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ferrum import D1, Float, Tensor
from ferrum.activation import softmax
from ferrum.train.metric.adaptor import B, ClassificationFields, ClassificationInput, adapt
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import StateMetric

__all__ = ["AurocAdaptor", "AurocInput", "AurocItem", "AurocMetric"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AurocInput(ClassificationInput[B]):
    """The AUROC metric's input: ``outputs`` logits Float [batch, 2], ``targets`` Int [batch] of 0/1.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> AurocInput(Tensor.from_floats([[0.1, 0.9]], d), Tensor.from_ints([1], d)).outputs.dims()
        (1, 2)
    """

    adaptor_method = "auroc_input"


@runtime_checkable
class AurocAdaptor(Protocol):
    """An output that gives the AUROC metric's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def auroc_input(self) -> AurocInput[Any]: ...
        >>> isinstance(StepOutput(), AurocAdaptor)
        True
    """

    def auroc_input(self) -> AurocInput[Any]:
        """The step output's input to AurocMetric."""
        ...


AurocItem: TypeAlias = AurocInput[Any] | AurocAdaptor | ClassificationFields
"""What ``AurocMetric.update`` accepts."""


class AurocMetric(StateMetric):
    """AUROC in percent, for binary classification: how often a positive outranks a negative.

    The score of a sample is the softmax probability of class 1; over every
    (positive, negative) pair of the batch, a pair ranked right counts 1 and
    a tie 1/2. A batch whose targets are all of one class has no AUROC: as
    Burn, it logs a warning and records 0. Name ``"AUROC"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> outputs = Tensor.from_floats([[0.1, 0.9], [0.7, 0.3], [0.6, 0.4], [0.2, 0.8]], d)
        >>> metric = AurocMetric()
        >>> _ = metric.update(AurocInput(outputs, Tensor.from_ints([1, 0, 0, 1], d)), MetricMetadata.fake())
        >>> metric.value().current()
        100.0
    """

    def __init__(self) -> None:
        super().__init__("AUROC", unit="%")

    def update(self, item: AurocItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's AUROC (percent), weighted by its number of samples."""
        auroc = adapt(item, AurocInput, self._name)
        batch_size, num_classes = auroc.outputs.dims()
        if num_classes != 2:
            raise ValueError(
                f"metric {self._name!r} supports binary classification only: outputs must be [batch, 2], "
                f"found {auroc.outputs.dims()}"
            )
        scores = softmax(auroc.outputs, 1).narrow(1, 1, 1).reshape((batch_size,))
        return self._record(100.0 * _binary_auroc(scores, auroc.targets), batch_size)


def _binary_auroc(scores: Tensor[Any, D1, Float], targets: Tensor[Any, D1, Any]) -> float:
    positives = _where(scores, targets.equal_elem(1))
    negatives = _where(scores, targets.equal_elem(0))
    n_pos, n_neg = positives.dims()[0], negatives.dims()[0]
    if n_pos == 0 or n_neg == 0:
        side = "negative" if n_pos == 0 else "positive"
        _log.warning("AUROC cannot be computed because all target values are %s.", side)
        return 0.0
    # Every (positive, negative) pair, as a [positives, negatives] grid.
    pos = positives.reshape((n_pos, 1))
    neg = negatives.reshape((1, n_neg))
    right = pos.greater(neg).int().sum()
    tied = pos.equal(neg).int().sum()
    counts = Tensor.cat([right, tied], 0).to_numpy()
    return (int(counts[0]) + 0.5 * int(counts[1])) / (n_pos * n_neg)


def _where(values: Tensor[Any, D1, Float], mask: Tensor[Any, D1, Any]) -> Tensor[Any, D1, Float]:
    indices = mask.argwhere()
    return values.select(0, indices.reshape((indices.dims()[0],)))
