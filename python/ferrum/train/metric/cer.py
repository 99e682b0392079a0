"""The character error rate (Burn's ``CharErrorRate``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ferrum.train.metric.adaptor import adapt
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.edit_distance import B, ErrorRateMetric, TokenSequencesFields, TokenSequencesInput

__all__ = ["CerAdaptor", "CerInput", "CerItem", "CharErrorRate"]


@dataclass(frozen=True)
class CerInput(TokenSequencesInput[B]):
    """The CER's input: ``outputs`` predicted and ``targets`` reference characters, Int [batch, length].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> CerInput(Tensor.from_ints([[1, 2]], d), Tensor.from_ints([[1, 3]], d)).targets.dims()
        (1, 2)
    """

    adaptor_method = "cer_input"


@runtime_checkable
class CerAdaptor(Protocol):
    """An output that gives the CER's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def cer_input(self) -> CerInput[Any]: ...
        >>> isinstance(StepOutput(), CerAdaptor)
        True
    """

    def cer_input(self) -> CerInput[Any]:
        """The step output's input to CharErrorRate."""
        ...


CerItem: TypeAlias = CerInput[Any] | CerAdaptor | TokenSequencesFields
"""What ``CharErrorRate.update`` accepts."""


class CharErrorRate(ErrorRateMetric):
    """Character error rate in percent: edit distance over reference length, per batch and epoch.

    Each token is a character. With a pad token, sequences end at their
    first pad token. Name ``"CER"``; lower is better.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> metric = CharErrorRate().with_pad_token(9)
        >>> preds = Tensor.from_ints([[1, 2, 9], [3, 5, 9]], d)
        >>> refs = Tensor.from_ints([[1, 3, 9], [3, 4, 9]], d)
        >>> metric.update(CerInput(preds, refs), MetricMetadata.fake()).serialized
        '50.0,4'
    """

    def __init__(self, pad_token: int | None = None) -> None:
        super().__init__("CER", pad_token)

    def update(self, item: CerItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's character error rate (percent), weighted by its reference characters."""
        return self._record_error_rate(adapt(item, CerInput, self._name))
