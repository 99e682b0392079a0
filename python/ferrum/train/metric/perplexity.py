"""The perplexity metric (Burn's ``PerplexityMetric``): exp of the mean negative log-likelihood."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ferrum import Tensor
from ferrum.activation import log_softmax
from ferrum.train.metric.accuracy import check_pad_token
from ferrum.train.metric.adaptor import B, ClassificationFields, ClassificationInput, adapt
from ferrum.train.metric.base import MetricEntry, MetricMetadata, NumericEntry, format_float

__all__ = ["PerplexityAdaptor", "PerplexityInput", "PerplexityItem", "PerplexityMetric"]


@dataclass(frozen=True)
class PerplexityInput(ClassificationInput[B]):
    """The perplexity metric's input: ``outputs`` logits Float [tokens, vocab], ``targets`` Int [tokens].

    For sequences, flatten batch and time: [batch * seq_len, vocab] and [batch * seq_len].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> PerplexityInput(Tensor.zeros((3, 5), d), Tensor.from_ints([0, 1, 4], d)).outputs.dims()
        (3, 5)
    """

    adaptor_method = "perplexity_input"


@runtime_checkable
class PerplexityAdaptor(Protocol):
    """An output that gives the perplexity metric's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def perplexity_input(self) -> PerplexityInput[Any]: ...
        >>> isinstance(StepOutput(), PerplexityAdaptor)
        True
    """

    def perplexity_input(self) -> PerplexityInput[Any]:
        """The step output's input to PerplexityMetric."""
        ...


PerplexityItem: TypeAlias = PerplexityInput[Any] | PerplexityAdaptor | ClassificationFields
"""What ``PerplexityMetric.update`` accepts."""


class PerplexityMetric:
    """Perplexity: exp(-mean log p(target)) under the softmax of the logits (lower is better).

    The epoch value is exp(total negative log-likelihood / total tokens)
    over every batch so far, not a mean of batch perplexities. Tokens whose
    target is the pad token are left out. A batch's entry is its own
    perplexity with its token count. Name ``"Perplexity"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> metric = PerplexityMetric()
        >>> uniform = PerplexityInput(Tensor.zeros((3, 3), d), Tensor.from_ints([0, 1, 2], d))
        >>> _ = metric.update(uniform, MetricMetadata.fake())
        >>> round(metric.value().current(), 4), metric.value().count
        (3.0, 3)
    """

    higher_is_better = False
    unit: str | None = None

    def __init__(self, pad_token: int | None = None) -> None:
        self.pad_token = check_pad_token(pad_token)
        self.clear()

    def name(self) -> str:
        """``"Perplexity"``."""
        return "Perplexity"

    def with_pad_token(self, index: int) -> PerplexityMetric:
        """Leave out tokens whose target is ``index``; returns this metric."""
        self.pad_token = check_pad_token(index)
        return self

    def clear(self) -> None:
        """Forget the epoch's tokens."""
        self._sum_nll = 0.0
        self._tokens = 0
        self._current = NumericEntry(math.nan, 0)

    def update(self, item: PerplexityItem, metadata: MetricMetadata) -> MetricEntry:
        """Add the batch's negative log-likelihood and tokens; record the batch's perplexity."""
        ppl = adapt(item, PerplexityInput, self.name())
        tokens = ppl.targets.dims()[0]
        if tokens == 0:
            return self._entry(math.nan, 0)
        target_log_probs = log_softmax(ppl.outputs, 1).gather(1, ppl.targets.reshape((tokens, 1)))
        if self.pad_token is None:
            batch_nll, effective = -float(target_log_probs.sum().into_scalar()), tokens
        else:
            pad = ppl.targets.reshape((tokens, 1)).equal_elem(self.pad_token)
            kept = target_log_probs.mask_fill(pad, 0.0).sum()
            sums = Tensor.cat([kept, pad.float().sum()], 0).to_numpy()
            batch_nll, effective = -float(sums[0]), tokens - int(sums[1])
        self._sum_nll += batch_nll
        self._tokens += effective
        return self._entry(_exp(batch_nll / effective) if effective else math.nan, effective)

    def _entry(self, batch_perplexity: float, tokens: int) -> MetricEntry:
        self._current = NumericEntry(batch_perplexity, tokens)
        running = format_float(self.running_value().value, 2)
        formatted = f"epoch {running} - batch {format_float(batch_perplexity, 2)}"
        return MetricEntry(self.name(), formatted, self._current.serialize())

    def value(self) -> NumericEntry:
        """The last batch's perplexity and token count."""
        return self._current

    def running_value(self) -> NumericEntry:
        """exp(total negative log-likelihood / total tokens) over the epoch, and the tokens."""
        if not self._tokens:
            return NumericEntry(math.nan, 0)
        return NumericEntry(_exp(self._sum_nll / self._tokens), self._tokens)

    def __repr__(self) -> str:
        return "PerplexityMetric()"


def _exp(x: float) -> float:
    # A model that gives its targets probability ~0 has a perplexity past float range: infinity.
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf
