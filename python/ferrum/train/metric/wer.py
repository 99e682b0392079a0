"""The word error rate (Burn's ``WordErrorRate``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ferrum.train.metric.adaptor import adapt
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.edit_distance import B, ErrorRateMetric, TokenSequencesFields, TokenSequencesInput

__all__ = ["WerAdaptor", "WerInput", "WerItem", "WordErrorRate"]


@dataclass(frozen=True)
class WerInput(TokenSequencesInput[B]):
    """The WER's input: ``outputs`` predicted and ``targets`` reference words, Int [batch, length].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> WerInput(Tensor.from_ints([[1, 2]], d), Tensor.from_ints([[1, 3]], d)).targets.dims()
        (1, 2)
    """

    adaptor_method = "wer_input"


@runtime_checkable
class WerAdaptor(Protocol):
    """An output that gives the WER's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def wer_input(self) -> WerInput[Any]: ...
        >>> isinstance(StepOutput(), WerAdaptor)
        True
    """

    def wer_input(self) -> WerInput[Any]:
        """The step output's input to WordErrorRate."""
        ...


WerItem: TypeAlias = WerInput[Any] | WerAdaptor | TokenSequencesFields
"""What ``WordErrorRate.update`` accepts."""


class WordErrorRate(ErrorRateMetric):
    """Word error rate in percent: edit distance over reference length, per batch and epoch.

    Each token is a word. With a pad token, sequences end at their
    first pad token. Name ``"WER"``; lower is better.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> metric = WordErrorRate().with_pad_token(9)
        >>> preds = Tensor.from_ints([[1, 2, 9], [3, 5, 9]], d)
        >>> refs = Tensor.from_ints([[1, 3, 9], [3, 4, 9]], d)
        >>> metric.update(WerInput(preds, refs), MetricMetadata.fake()).serialized
        '50.0,4'
    """

    def __init__(self, pad_token: int | None = None) -> None:
        super().__init__("WER", pad_token)

    def update(self, item: WerItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's word error rate (percent), weighted by its reference words."""
        return self._record_error_rate(adapt(item, WerInput, self._name))
