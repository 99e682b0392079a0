"""Min-max calibration (Burn's ``Calibration``, ``compute_range``,
``compute_q_params``): the range of each tensor or block, and the scales that
map it onto the quantized values' range.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.quantization import Calibration, QuantScheme, QuantValue, compute_q_params, compute_range
    >>> x = Tensor.from_data([-1.8, -1.0, 0.0, 0.5], NdArray.device())
    >>> scheme = QuantScheme().with_value(QuantValue.Q8S)
    >>> r = compute_range(scheme, x, Calibration.MinMax)
    >>> [round(v, 6) for v in r.min.to_data().to_list()], r.max.to_data().to_list()
    ([-1.8], [0.5])
    >>> round(compute_q_params(scheme, r).scales.into_scalar(), 9)
    0.014173228
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Generic, TypeVar

from ferrum._ferrum import Float, Tensor
from ferrum.backend import Backend
from ferrum.quantization.scheme import QuantizationParameters, QuantScheme

__all__ = ["Calibration", "CalibrationRange", "compute_q_params", "compute_range"]

B = TypeVar("B", bound=Backend)


class Calibration(enum.Enum):
    """How the range of values to quantize is found."""

    #: The running minimum and maximum of the values.
    MinMax = "MinMax"


@dataclasses.dataclass(frozen=True)
class CalibrationRange(Generic[B]):
    """The minimum and maximum per tensor (shape ``[1]``) or per block (the scheme's parameter shape)."""

    min: Tensor[B, Any, Float]
    max: Tensor[B, Any, Float]


def compute_range(
    scheme: QuantScheme, tensor: Tensor[B, Any, Float], calibration: Calibration
) -> CalibrationRange[B]:
    """The range of ``tensor`` per tensor or per block of ``scheme``'s level.

    Raises:
        ValueError: the tensor's values do not split into whole blocks.
    """
    if calibration is not Calibration.MinMax:
        raise ValueError(f"compute_range: expected a Calibration, found {calibration!r}")
    block = scheme.level.block_size
    if block is None:
        flat: Any = tensor.flatten(0, tensor.rank() - 1) if tensor.rank() > 1 else tensor
        return CalibrationRange(flat.min(), flat.max())
    n, per = tensor.num_elements(), block.num_elements()
    if n % per:
        raise ValueError(
            f"compute_range: a tensor of shape {list(tensor.dims())} ({n} values) does not split"
            f" into blocks of {list(block.values)} ({per} values)"
        )
    shape = scheme.params_shape(tensor.dims())
    blocks: Any = tensor.reshape((n // per, per))
    return CalibrationRange(blocks.min_dim(1).reshape(shape), blocks.max_dim(1).reshape(shape))


def compute_q_params(scheme: QuantScheme, range: CalibrationRange[B]) -> QuantizationParameters[B]:
    """Symmetric scales: ``2 * max(|min|, |max|) / (b - a)`` for the values' range ``(a, b)``."""
    a, b = scheme.value.range()
    alpha: Any = range.min.abs().max_pair(range.max.abs())
    return QuantizationParameters((alpha * 2.0) / (b - a))
