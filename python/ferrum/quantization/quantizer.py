"""Quantizing a module's weights after training (Burn's ``Quantizer``, used
by ``Module.quantize_weights``).

Every float parameter is quantized with the quantizer's calibration and
scheme. A parameter then holds the quantized tensor (``param.quantized()``)
instead of its float tensor, and ``val()`` dequantizes it at each call, so
every layer runs unchanged; ``Linear`` runs its product on int8 where the scheme
allows it (8-bit values, one scale per tensor), with the input quantized per
row at each call (dynamic quantization). Quantized parameters are not
trained (their require-grad flag is off).

Example:
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.quantization import Calibration, QuantScheme, QuantValue, Quantizer
    >>> layer = LinearConfig(64, 32).init(NdArray.device())
    >>> quantizer = Quantizer(Calibration.MinMax, QuantScheme().with_value(QuantValue.Q8S))
    >>> q = layer.quantize_weights(quantizer)
    >>> q.weight.quantized().has_int8_product()
    True
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ferrum._ferrum import Float, QTensor, Tensor
from ferrum.quantization.calibration import Calibration, compute_q_params, compute_range
from ferrum.quantization.scheme import QuantScheme

__all__ = ["Quantizer"]


@dataclasses.dataclass
class Quantizer:
    """How to quantize a module: a calibration and a scheme (Burn's ``Quantizer``)."""

    calibration: Calibration = Calibration.MinMax
    scheme: QuantScheme = dataclasses.field(default_factory=QuantScheme)

    def quantize(self, tensor: Tensor[Any, Any, Float]) -> QTensor[Any, Any]:
        """``tensor`` calibrated and quantized with this quantizer's scheme."""
        qparams = compute_q_params(self.scheme, compute_range(self.scheme, tensor, self.calibration))
        return tensor.quantize(self.scheme, qparams)
