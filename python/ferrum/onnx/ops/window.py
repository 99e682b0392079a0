"""Signal windows: HannWindow, HammingWindow, BlackmanWindow (since opset 17).

Each makes a rank-1 tensor of ``size`` values from nothing but its length, so
the runner passes its ``device``. The values are computed in f64 (as ONNX's
reference does) and stored in the type ``output_datatype`` computes in (f32 by
default, f64, i64 truncating, or bool).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, DType, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.dtypes import compute_dtype, numpy_dtype
from ferrum.onnx.ops._util import AnyTensor, IntArg, check_size, ints
from ferrum.onnx.ops.registry import op

__all__ = ["blackman_window", "hamming_window", "hann_window"]


def _window(
    name: str,
    size: int | IntArg,
    periodic: int,
    output_datatype: int,
    device: Device[Any] | None,
    terms: tuple[float, ...],
) -> AnyTensor:
    """``sum_k (-1) ** k * terms[k] * cos(2 pi k n / N)`` for ``n < size``, N = size (periodic) or size-1."""
    found = [size] if isinstance(size, int) else ints(size) or []
    if len(found) != 1:
        raise ValueError(f"{name}: size must be one integer, found {found}")
    (length,) = check_size(found, name)
    denominator = length if periodic else length - 1
    n = np.arange(length, dtype=np.float64)
    if denominator == 0:
        # A symmetric window of one value: cos(0) everywhere, which is PyTorch's result for
        # window(1, periodic=False) and the limit of the formula (the reference divides 0 by 0).
        values = np.ones(length, dtype=np.float64)
    else:
        values = np.zeros(length, dtype=np.float64)
        for k, term in enumerate(terms):
            values += (-1) ** k * term * np.cos(2.0 * np.pi * k * n / denominator)
    target = numpy_dtype(output_datatype, f"{name}: ")
    on = size.device() if isinstance(size, Tensor) else (device if device is not None else NdArray.device())
    with np.errstate(invalid="ignore"):
        array = values.astype(target)
    array = compute_dtype(array)
    # from_numpy makes f64 data the backend's f32 unless told: DOUBLE windows stay f64.
    return Tensor.from_numpy(array, on, dtype=DType.F64 if array.dtype == np.float64 else None)


@op("HannWindow", static=("size",))
def hann_window(
    size: int | IntArg = None, periodic: int = 1, output_datatype: int = 1, device: Device[Any] | None = None
) -> AnyTensor:
    """HannWindow: ``0.5 - 0.5 * cos(2 pi n / N)`` for ``n`` in ``[0, size)``.

    ``N`` is ``size`` when ``periodic`` (the default, for spectral analysis)
    and ``size - 1`` otherwise (symmetric, for filter design; a symmetric
    window of size 1 is ``[1.0]``). ``size`` is a scalar Int tensor or a
    literal; ``output_datatype`` an ONNX element type (``TensorProto.FLOAT``,
    the default). A negative ``size`` raises ``ValueError``.

    Example:
        >>> hann_window(4).to_numpy().tolist()
        [0.0, 0.5, 1.0, 0.5]
    """
    return _window("HannWindow", size, periodic, output_datatype, device, (0.5, 0.5))


@op("HammingWindow", static=("size",))
def hamming_window(
    size: int | IntArg = None, periodic: int = 1, output_datatype: int = 1, device: Device[Any] | None = None
) -> AnyTensor:
    """HammingWindow: ``25/46 - 21/46 * cos(2 pi n / N)`` for ``n`` in ``[0, size)``.

    ONNX's coefficients are the exact 25/46 and 21/46 (0.54347... and
    0.45652...), not the rounded 0.54 and 0.46. ``N``, ``size``, ``periodic``
    and ``output_datatype`` are as HannWindow's.
    """
    return _window("HammingWindow", size, periodic, output_datatype, device, (25.0 / 46.0, 21.0 / 46.0))


@op("BlackmanWindow", static=("size",))
def blackman_window(
    size: int | IntArg = None, periodic: int = 1, output_datatype: int = 1, device: Device[Any] | None = None
) -> AnyTensor:
    """BlackmanWindow: ``0.42 - 0.5 * cos(2 pi n / N) + 0.08 * cos(4 pi n / N)`` for ``n`` in ``[0, size)``.

    ``N``, ``size``, ``periodic`` and ``output_datatype`` are as HannWindow's.
    """
    return _window("BlackmanWindow", size, periodic, output_datatype, device, (0.42, 0.5, 0.08))
