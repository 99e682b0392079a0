"""The accuracy metric (Burn's ``AccuracyMetric``), with an optional pad token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeVar, runtime_checkable

from ferrum import D1, D2, Int, Tensor
from ferrum.backend import Backend
from ferrum.train.metric.adaptor import (
    ClassificationFields,
    ClassificationInput,
    adapt,
)
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import PadTokenMetric, check_pad_token

__all__ = [
    "AccuracyAdaptor",
    "AccuracyInput",
    "AccuracyItem",
    "AccuracyMetric",
    "check_pad_token",
    "count_hits",
]

B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class AccuracyInput(ClassificationInput[B]):
    """The accuracy metric's input: ``outputs`` Float [batch, classes], ``targets`` Int [batch].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> AccuracyInput(Tensor.from_floats([[0.1, 0.9]], d), Tensor.from_ints([1], d)).targets.dims()
        (1,)
    """

    adaptor_method = "accuracy_input"


@runtime_checkable
class AccuracyAdaptor(Protocol):
    """An output that gives the accuracy metric's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def accuracy_input(self) -> AccuracyInput[Any]: ...
        >>> isinstance(StepOutput(), AccuracyAdaptor)
        True
    """

    def accuracy_input(self) -> AccuracyInput[Any]:
        """The step output's input to AccuracyMetric."""
        ...


AccuracyItem: TypeAlias = AccuracyInput[Any] | AccuracyAdaptor | ClassificationFields
"""What ``AccuracyMetric.update`` accepts."""


class AccuracyMetric(PadTokenMetric):
    """Accuracy in percent: the share of samples whose highest output is the target class.

    With a pad token, samples whose target is the pad token are left out:
    they count neither as hits nor in the total, and the batch's weight in
    the epoch is its number of non-pad targets. Name ``"Accuracy"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> outputs = Tensor.from_floats([[0, 0.2, 0.8], [1, 2, 0.5], [0.4, 0.1, 0.2], [0.6, 0.7, 0.2]], d)
        >>> acc_input = AccuracyInput(outputs, Tensor.from_ints([2, 2, 1, 1], d))
        >>> AccuracyMetric().update(acc_input, MetricMetadata.fake()).formatted
        'epoch 50.00 % - batch 50.00 %'
    """

    def __init__(self, pad_token: int | None = None) -> None:
        super().__init__("Accuracy", pad_token)

    def update(self, item: AccuracyItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's accuracy (percent)."""
        acc = adapt(item, AccuracyInput, self._name)
        batch_size = acc.outputs.dims()[0]
        predicted = acc.outputs.argmax(1).reshape((batch_size, 1))
        return self._record_share(*count_hits(predicted, acc.targets, self.pad_token))


def count_hits(
    predicted: Tensor[Any, D2, Int], targets: Tensor[Any, D1, Int], pad_token: int | None
) -> tuple[int, int]:
    """How many targets are among their row's ``predicted`` classes, and how many targets count.

    ``predicted`` is [batch, k] class indices, ``targets`` [batch]; targets
    equal to ``pad_token`` count as neither. Reads both numbers in one sync.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> top_2 = Tensor.from_ints([[2, 0], [1, 2], [0, 1]], d)
        >>> count_hits(top_2, Tensor.from_ints([0, 0, 9], d), pad_token=9)
        (1, 2)
    """
    batch_size = targets.dims()[0]
    column = targets.reshape((batch_size, 1))
    if pad_token is None:
        return int(predicted.equal(column).int().sum().into_scalar()), batch_size
    pad = column.equal_elem(pad_token)
    # A pad target becomes -1, which no predicted class index equals.
    hits = predicted.equal(column.mask_fill(pad, -1)).int().sum()
    counts = Tensor.cat([hits, pad.int().sum()], 0).to_numpy()
    return int(counts[0]), batch_size - int(counts[1])

