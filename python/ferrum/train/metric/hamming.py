"""The Hamming score (Burn's ``HammingScore``): label-wise accuracy of multi-label predictions."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

from typing_extensions import Self

from ferrum import D2, Float, Int, Tensor
from ferrum.activation import sigmoid
from ferrum.backend import Backend
from ferrum.train.metric.adaptor import (
    MetricInput,
    MultiLabelFields,
    adapt,
    check_same_shape,
    check_tensor,
    read_field,
)
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.naming import rust_display
from ferrum.train.metric.state_metric import StateMetric

__all__ = ["HammingScore", "HammingScoreAdaptor", "HammingScoreInput", "HammingScoreItem"]

B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class HammingScoreInput(MetricInput, Generic[B]):
    """The Hamming score's input: ``outputs`` Float [batch, labels], ``targets`` Int [batch, labels], 0/1.

    Built from any output with Burn's ``MultiLabelClassificationOutput``
    fields (``output``, ``targets``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> x, y = Tensor.from_floats([[0.9, 0.1]], d), Tensor.from_ints([[1, 0]], d)
        >>> HammingScoreInput(x, y).targets.dims()
        (1, 2)
    """

    outputs: Tensor[B, D2, Float]
    targets: Tensor[B, D2, Int]

    adaptor_method = "hamming_score_input"
    fields_description = "the fields `output` (Float [batch, labels]) and `targets` (Int [batch, labels])"

    def __post_init__(self) -> None:
        check_tensor("HammingScoreInput", "outputs", self.outputs, 2, (Float,))
        check_tensor("HammingScoreInput", "targets", self.targets, 2, (Int,))
        check_same_shape("HammingScoreInput", self.outputs, self.targets)

    @classmethod
    def from_fields(cls, item: object) -> Self:
        """``HammingScoreInput(item.output, item.targets)``."""
        return cls(read_field(item, "output", 2, Float), read_field(item, "targets", 2, Int))


@runtime_checkable
class HammingScoreAdaptor(Protocol):
    """An output that gives the Hamming score's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def hamming_score_input(self) -> HammingScoreInput[Any]: ...
        >>> isinstance(StepOutput(), HammingScoreAdaptor)
        True
    """

    def hamming_score_input(self) -> HammingScoreInput[Any]:
        """The step output's input to HammingScore."""
        ...


HammingScoreItem: TypeAlias = HammingScoreInput[Any] | HammingScoreAdaptor | MultiLabelFields
"""What ``HammingScore.update`` accepts."""


class HammingScore(StateMetric):
    """Hamming score in percent: the share of (sample, label) cells predicted right.

    A label is predicted where its output is above the threshold (default
    0.5), after a sigmoid if ``with_sigmoid(True)`` (for logits). Name
    ``"Hamming Score @ Threshold(<threshold>)"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> x = Tensor.from_floats([[0.32, 0.52, 0.38], [0.43, 0.31, 0.63]], d)
        >>> metric = HammingScore()
        >>> y = Tensor.from_ints([[0, 1, 1], [0, 0, 1]], d)
        >>> _ = metric.update(HammingScoreInput(x, y), MetricMetadata.fake())
        >>> metric.name(), round(metric.value().current(), 4)
        ('Hamming Score @ Threshold(0.5)', 83.3333)
    """

    def __init__(self, threshold: float = 0.5, sigmoid: bool = False) -> None:
        super().__init__("", unit="%")
        self.sigmoid = sigmoid
        self._set_threshold(threshold)

    def _set_threshold(self, threshold: float) -> None:
        self.threshold = threshold
        self._name = f"Hamming Score @ Threshold({rust_display(threshold, single=True)})"

    def with_threshold(self, threshold: float) -> HammingScore:
        """Predict a label where its output is above ``threshold``; returns this metric."""
        self._set_threshold(threshold)
        return self

    def with_sigmoid(self, sigmoid: bool) -> HammingScore:
        """Apply a sigmoid to the outputs before thresholding (for logits); returns this metric."""
        self.sigmoid = sigmoid
        return self

    def update(self, item: HammingScoreItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's Hamming score (percent), weighted by its number of samples."""
        ham = adapt(item, HammingScoreInput, self._name)
        samples = ham.outputs.dims()[0]
        if ham.outputs.num_elements() == 0:
            return self._record(math.nan, 0)
        outputs = sigmoid(ham.outputs) if self.sigmoid else ham.outputs
        right = outputs.greater_elem(self.threshold).equal(ham.targets.bool())
        return self._record(100.0 * float(right.float().mean().into_scalar()), samples)
