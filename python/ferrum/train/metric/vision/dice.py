"""The Dice-Sørensen coefficient (Burn's ``DiceMetric``) of segmentation masks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, runtime_checkable

from typing_extensions import Self

from ferrum import Int, Tensor
from ferrum.backend import Backend
from ferrum.train.metric.adaptor import MetricInput, adapt, check_same_shape, check_tensor, read_field
from ferrum.train.metric.base import MetricEntry, MetricMetadata
from ferrum.train.metric.state_metric import StateMetric

__all__ = ["DiceAdaptor", "DiceInput", "DiceItem", "DiceMetric", "DiceMetricConfig"]

B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class DiceInput(MetricInput, Generic[B]):
    """The Dice metric's input: ``outputs`` and ``targets`` Int [batch, classes, ...] masks of 0/1.

    Rank 3 or more, the same shape; one-hot encoding is the caller's. With
    more than one class, class 0 is the background. Built from any output
    whose ``output`` and ``targets`` fields are such tensors.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> mask = Tensor.from_ints([[[[1, 0], [1, 0]]]], d)
        >>> DiceInput(mask, mask).outputs.dims()
        (1, 1, 2, 2)
    """

    outputs: Tensor[B, Any, Int]
    targets: Tensor[B, Any, Int]

    adaptor_method = "dice_input"
    fields_description = "the fields `output` and `targets` (Int [batch, classes, ...] masks, rank 3 or more)"

    def __post_init__(self) -> None:
        check_tensor("DiceInput", "outputs", self.outputs, None, (Int,))
        check_tensor("DiceInput", "targets", self.targets, None, (Int,))
        check_same_shape("DiceInput", self.outputs, self.targets)

    @classmethod
    def from_fields(cls, item: object) -> Self:
        """``DiceInput(item.output, item.targets)``."""
        return cls(read_field(item, "output", None, Int), read_field(item, "targets", None, Int))


@runtime_checkable
class DiceAdaptor(Protocol):
    """An output that gives the Dice metric's input explicitly.

    Example:
        >>> from typing import Any
        >>> class StepOutput:
        ...     def dice_input(self) -> DiceInput[Any]: ...
        >>> isinstance(StepOutput(), DiceAdaptor)
        True
    """

    def dice_input(self) -> DiceInput[Any]:
        """The step output's input to DiceMetric."""
        ...


@runtime_checkable
class DiceFields(Protocol):
    """An output whose ``output`` and ``targets`` fields are Int masks [batch, classes, ...].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> class Segmentation:
        ...     output = targets = Tensor.zeros((1, 2, 4, 4), NdArray.device()).int()
        >>> isinstance(Segmentation(), DiceFields)
        True
    """

    @property
    def output(self) -> Tensor[Any, Any, Int]: ...

    @property
    def targets(self) -> Tensor[Any, Any, Int]: ...


DiceItem: TypeAlias = DiceInput[Any] | DiceAdaptor | DiceFields
"""What ``DiceMetric.update`` accepts."""


@dataclass(frozen=True)
class DiceMetricConfig:
    """Burn's ``DiceMetricConfig``: ``epsilon`` keeps empty masks from dividing by zero.

    ``include_background`` counts class 0 too (then at least 2 classes are needed).

    Example:
        >>> DiceMetric(DiceMetricConfig(include_background=True)).config.epsilon
        1e-07
    """

    epsilon: float = 1e-7
    include_background: bool = False


class DiceMetric(StateMetric):
    """Dice coefficient: (2 |X ∩ Y| + eps) / (|X| + |Y| + eps) over the batch's masks (1 is perfect).

    ``rank`` is the masks' rank (Burn's ``D``, at least 3; 4 for images
    [batch, classes, height, width]). Without ``include_background`` and
    with more than one class, class 0 is left out. Shows four decimals.
    Name ``"<rank>D Dice Metric"``.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import MetricMetadata
        >>> d = NdArray.device()
        >>> metric = DiceMetric()
        >>> x, y = Tensor.from_ints([[[[1, 1], [0, 0]]]], d), Tensor.from_ints([[[[1, 0], [1, 0]]]], d)
        >>> metric.update(DiceInput(x, y), MetricMetadata.fake()).formatted
        'epoch 0.5000 - batch 0.5000'
    """

    def __init__(self, config: DiceMetricConfig | None = None, *, rank: int = 4) -> None:
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 3:
            raise ValueError(f"DiceMetric requires at least 3 dimensions, found rank={rank!r}")
        super().__init__(f"{rank}D Dice Metric", precision=4)
        self.config = DiceMetricConfig() if config is None else config
        self.rank = rank

    @classmethod
    def with_config(cls, config: DiceMetricConfig, *, rank: int = 4) -> DiceMetric:
        """A Dice metric with ``config`` (Burn's ``DiceMetric::with_config``)."""
        return cls(config, rank=rank)

    def update(self, item: DiceItem, metadata: MetricMetadata) -> MetricEntry:
        """Record the batch's Dice coefficient, weighted by its batch size."""
        dice = adapt(item, DiceInput, self._name)
        outputs, targets = dice.outputs, dice.targets
        dims = outputs.dims()
        if len(dims) != self.rank:
            raise ValueError(f"metric {self._name!r} takes masks of rank {self.rank}, found shape {dims}")
        batch_size, num_classes = dims[0], dims[1]
        if self.config.include_background and num_classes < 2:
            raise ValueError(
                f"metric {self._name!r} requires at least 2 classes when including background, found {dims}"
            )
        if not self.config.include_background and num_classes > 1:
            outputs = outputs.narrow(1, 1, num_classes - 1)
            targets = targets.narrow(1, 1, num_classes - 1)
        sums = Tensor.cat([(outputs * targets).sum(), outputs.sum(), targets.sum()], 0).to_numpy()
        intersection, output_sum, target_sum = (float(v) for v in sums)
        eps = self.config.epsilon
        value = (2.0 * intersection + eps) / (output_sum + target_sum + eps)
        return self._record(value if batch_size else math.nan, batch_size)
