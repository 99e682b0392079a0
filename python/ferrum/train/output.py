"""Step outputs that Burn's metrics understand: classification, multi-label and regression.

A train or inference step returns one of these (or any class of the user's
that has the fields its metrics read). Before metrics see an output, the
Learner calls its ``sync()`` (Burn's ``ItemLazy``), which moves the tensors
to the inner backend: metrics then compute without touching the autodiff
graph.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> d = Autodiff[NdArray].device()
    >>> out = ClassificationOutput(
    ...     Tensor.from_floats([0.5], d), Tensor.from_floats([[0.1, 0.9]], d), Tensor.from_ints([1], d)
    ... )
    >>> out.sync().output.device().is_autodiff
    False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ferrum import D1, D2, Int, Kind, Rank, Tensor
from ferrum.backend import Backend

__all__ = [
    "ClassificationOutput",
    "ItemLazy",
    "MultiLabelClassificationOutput",
    "RegressionOutput",
    "sync_item",
]

B = TypeVar("B", bound=Backend)
D = TypeVar("D", bound=Rank)
K = TypeVar("K", bound=Kind)
T_co = TypeVar("T_co", covariant=True)


class ItemLazy(Protocol[T_co]):
    """Burn's ``ItemLazy``: an output that can give itself on the inner backend, detached."""

    def sync(self) -> T_co:
        """The same output on the inner backend, without the autodiff graph."""
        ...


def _inner(t: Tensor[Any, D, K]) -> Tensor[Any, D, K]:
    # Free on the CPU: the same values, without the graph node.
    return t.inner() if t.device().is_autodiff else t


def sync_item(item: object) -> object:
    """``item.sync()`` where the item has one (Burn's ``ItemLazy``), else the item itself."""
    sync = getattr(item, "sync", None)
    return sync() if callable(sync) else item


@dataclass(frozen=True)
class ClassificationOutput(Generic[B]):
    """Burn's ``ClassificationOutput``.

    ``loss`` [1], ``output`` logits [batch, classes], ``targets`` class indices [batch]: what the
    accuracy, top-k, precision, recall, F-beta and AUROC metrics read.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import CrossEntropyLossConfig
        >>> device = NdArray.device()
        >>> logits, targets = Tensor.zeros((2, 3), device), Tensor.from_data([0, 2], device)
        >>> loss = CrossEntropyLossConfig().init(device).forward(logits, targets)
        >>> ClassificationOutput(loss, logits, targets).output.dims()
        (2, 3)
    """

    loss: Tensor[B, D1]
    output: Tensor[B, D2]
    targets: Tensor[B, D1, Int]

    def sync(self) -> ClassificationOutput[Any]:
        """The same output on the inner backend, without the autodiff graph."""
        return ClassificationOutput(_inner(self.loss), _inner(self.output), _inner(self.targets))


@dataclass(frozen=True)
class MultiLabelClassificationOutput(Generic[B]):
    """Burn's ``MultiLabelClassificationOutput``.

    ``loss`` [1], ``output`` scores [batch, labels], ``targets`` 0/1 [batch, labels]: what the
    Hamming score and the multilabel precision, recall and F-beta read.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import BinaryCrossEntropyLossConfig
        >>> device = NdArray.device()
        >>> scores, targets = Tensor.zeros((2, 3), device), Tensor.from_data([[1, 0, 1], [0, 0, 1]], device)
        >>> loss = BinaryCrossEntropyLossConfig().with_logits(True).init(device).forward(scores, targets)
        >>> MultiLabelClassificationOutput(loss, scores, targets).targets.dims()
        (2, 3)
    """

    loss: Tensor[B, D1]
    output: Tensor[B, D2]
    targets: Tensor[B, D2, Int]

    def sync(self) -> MultiLabelClassificationOutput[Any]:
        """The same output on the inner backend, without the autodiff graph."""
        return MultiLabelClassificationOutput(_inner(self.loss), _inner(self.output), _inner(self.targets))


@dataclass(frozen=True)
class RegressionOutput(Generic[B]):
    """Burn's ``RegressionOutput``: ``loss`` [1], ``output`` and ``targets`` [batch, outputs].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import MseLoss
        >>> device = NdArray.device()
        >>> output, targets = Tensor.ones((4, 1), device), Tensor.zeros((4, 1), device)
        >>> RegressionOutput(MseLoss().forward(output, targets), output, targets).loss.into_scalar()
        1.0
    """

    loss: Tensor[B, D1]
    output: Tensor[B, D2]
    targets: Tensor[B, D2]

    def sync(self) -> RegressionOutput[Any]:
        """The same output on the inner backend, without the autodiff graph."""
        return RegressionOutput(_inner(self.loss), _inner(self.output), _inner(self.targets))
