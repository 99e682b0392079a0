"""Optional ops: Optional, OptionalHasElement and OptionalGetElement.

An optional is its element (a tensor or a sequence) or ``None`` when empty
(see ``ferrum.onnx.values``), so these ops only look at whether a value is
there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op
from ferrum.onnx.values import Value, tensors_in

__all__ = ["optional", "optional_get_element", "optional_has_element"]


@op("Optional", since=15, attrs={"type": "type_"})
def optional(x: Value = None, type_: str | None = None) -> Value:
    """An optional holding ``x``, or an empty one (``None``) when ``x`` is absent.

    ``type_`` (ONNX's ``type``), the element type declared for an empty
    optional, is not needed to run it and is accepted as the text of the type.
    """
    del type_
    return x


@op("OptionalHasElement", since=15)
def optional_has_element(x: Value = None, device: Device[Any] | None = None) -> AnyTensor:
    """A Bool scalar: whether ``x`` holds a value (true for a tensor or a sequence; false when absent or
    an empty optional)."""
    held = tensors_in(x)
    on = held[0].device() if held else device if device is not None else NdArray.device()
    return Tensor.from_numpy(np.array(x is not None), on)


@op("OptionalGetElement", since=15)
def optional_get_element(x: Value = None) -> Value:
    """The value ``x`` holds (a tensor or a sequence, itself); an empty optional is an error."""
    if x is None:
        raise ValueError("OptionalGetElement: the optional is empty")
    return x
