"""The loss metric (Burn's ``LossMetric``): the mean of the step's loss tensor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

from ferrum import D1, Float, Tensor
from ferrum.backend import Backend
from ferrum.train.metric.adaptor import LossFields, MetricInput, adapt, check_tensor, read_field
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import StateMetric

__all__ = ["LossAdaptor", "LossInput", "LossItem", "LossMetric"]

B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class LossInput(MetricInput, Generic[B]):
    """The loss metric's input: ``tensor`` Float [n], the loss (n = 1 for a mean loss).

    ``batch_size`` is how many items the loss covers, the batch's weight in
    the epoch's mean; ``None`` weighs the batch by ``n`` (Burn's rule).
    Built from any output with a ``loss`` field; its ``output`` field, when
    it has one, gives the batch size.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> LossInput(Tensor.from_floats([0.5], NdArray.device()), batch_size=32).batch_size
        32
    """

    tensor: Tensor[B, D1, Float]
    batch_size: int | None = None

    adaptor_method = "loss_input"
    fields_description = "a `loss` field (Float [1] or [batch])"

    def __post_init__(self) -> None:
        check_tensor("LossInput", "tensor", self.tensor, 1, (Float,))
        if self.batch_size is not None and self.batch_size < 0:
            raise ValueError(f"LossInput.batch_size must be >= 0, found {self.batch_size}")

    @classmethod
    def from_fields(cls, item: object) -> LossInput[Any]:
        """``LossInput(item.loss)``, weighted by the batch size of ``item.output`` where there is one."""
        loss = read_field(item, "loss", 1, Float)
        output = getattr(item, "output", None)
        batch_size = output.dims()[0] if isinstance(output, Tensor) and output.rank() >= 1 else None
        return cls(loss, batch_size)


@runtime_checkable
class LossAdaptor(Protocol):
    """An output that gives the loss metric's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def loss_input(self) -> LossInput[Any]: ...
        >>> isinstance(StepOutput(), LossAdaptor)
        True
    """

    def loss_input(self) -> LossInput[Any]:
        """The step output's input to LossMetric."""
        ...


LossItem: TypeAlias = LossInput[Any] | LossAdaptor | LossFields
"""What ``LossMetric.update`` accepts: the input, an output with ``loss_input()``, or one with ``loss``."""


class LossMetric(StateMetric):
    """The loss: the mean of the loss tensor, per batch and over the epoch (lower is better).

    Name ``"Loss"``; shows two decimals.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train import RegressionOutput
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> metric = LossMetric()
        >>> zeros = Tensor.zeros((4, 1), d)
        >>> out = RegressionOutput(Tensor.from_floats([0.5], d), zeros, zeros)
        >>> metric.update(out, MetricMetadata.fake()).serialized
        '0.5,4'
    """

    higher_is_better = False

    def __init__(self) -> None:
        super().__init__("Loss")

    def update(self, item: LossItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the mean of the item's loss, weighted by its batch size."""
        loss = adapt(item, LossInput, self._name)
        n = loss.tensor.dims()[0]
        value = loss.tensor.mean().into_scalar() if n else float("nan")
        return self._record(value, n if loss.batch_size is None else loss.batch_size)
