"""Quantization as Burn 0.20 has it: schemes, min-max calibration, quantized
tensors (``ferrum.QTensor``, made by ``Tensor.quantize`` and
``Tensor.quantize_dynamic``) and post-training quantization of a module's
weights (``module.quantize_weights(Quantizer(...))``), whose linear layers
then run on an int8 product.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.quantization import QuantLevel, QuantScheme, QuantValue
    >>> x = Tensor.from_data([[0.5, -1.0, 0.25, 2.0]], NdArray.device())
    >>> q = x.quantize_dynamic(QuantScheme().with_value(QuantValue.Q8S).with_level(QuantLevel.block([2])))
    >>> q.values().to_data().to_list(), q.scales().dims()
    ([[64, -127, 16, 127]], (1, 2))
"""

from ferrum._ferrum import QTensor
from ferrum.quantization.calibration import Calibration, CalibrationRange, compute_q_params, compute_range
from ferrum.quantization.quantizer import Quantizer
from ferrum.quantization.scheme import (
    BlockSize,
    QuantizationParameters,
    QuantLevel,
    QuantMode,
    QuantParam,
    QuantScheme,
    QuantStore,
    QuantValue,
)

__all__ = [
    "BlockSize",
    "Calibration",
    "CalibrationRange",
    "QTensor",
    "QuantLevel",
    "QuantMode",
    "QuantParam",
    "QuantScheme",
    "QuantStore",
    "QuantValue",
    "QuantizationParameters",
    "Quantizer",
    "compute_q_params",
    "compute_range",
]
